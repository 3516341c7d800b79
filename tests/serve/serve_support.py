"""Helpers of the serve tests: a desk with scripted workers, a real uvicorn server on
127.0.0.1 (a free port) in a thread, an SSE parser."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from dataclasses import dataclass
from typing import Any

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")

import uvicorn

from deskwork.core.job import Job
from deskwork.runtime.desk import Desk
from deskwork.runtime.worker import Worker
from deskwork.serve import create_app
from deskwork.store.memory import InMemoryRunStore
from deskwork.store.session import InMemorySessionStore
from deskwork.testing import ScriptedAdapter
from deskwork.testing.scripted import Turn, call_tool, reply
from deskwork.tools.base import tool

SECRET = "sk-live-abcdefghijklmnopqrstuvwxyz0123456789"


@tool(description="Look up an item's stock")
def lookup(item: str) -> int:
    return {"beans": 12}.get(item, 0)


@tool(requires_confirmation=True, description="Order more of an item")
def restock(item: str, quantity: int) -> str:
    return f"ordered {quantity} x {item}"


@tool(requires_user_input=True, user_input_prompt="Which colour?", description="Ask a colour")
def colour(user_input: str = "") -> str:
    return user_input


@tool(description="Wait a while (for cancel and disconnect tests)")
async def wait_a_bit(seconds: float) -> str:
    await asyncio.sleep(seconds)
    return "waited"


def policy(messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None) -> Turn:
    """A stateless scripted model: the next turn follows from the conversation."""
    names = {t["function"]["name"] for t in tools or []}
    last = messages[-1]
    if last["role"] == "user":
        text = str(last.get("content"))
        if "wait_a_bit" in names:
            return call_tool("wait_a_bit", seconds=float(text) if _number(text) else 0.3)
        if "ask_echo" in names:
            return call_tool("ask_echo", item="beans")
        if "colour" in names:
            return call_tool("colour")
        if "lookup" in names:
            return call_tool("lookup", item="beans")
        return reply(f"echo: {text}")
    if last["role"] == "tool":
        content = str(last.get("content"))
        if "restock" in names and content == "12":
            return call_tool("restock", item="beans", quantity=38)
        return reply(f"done: {content}")
    return reply("ok")


def _number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def make_desk(database_url: str | None = None, *, durable: bool = False) -> Desk:
    """A desk with scripted workers; in memory unless ``database_url`` is given."""
    if database_url is not None:
        desk = Desk(model="scripted/test", adapter=ScriptedAdapter(default=policy),
                    database_url=database_url, durable=durable)  # fmt: skip
    else:
        desk = Desk(
            model="scripted/test",
            adapter=ScriptedAdapter(default=policy),
            run_store=InMemoryRunStore(),
            session_store=InMemorySessionStore(),
        )
    echo = Worker(name="echo", instructions="Echo the input.")
    desk.register(echo)
    desk.register(Worker(name="clerk", tools=[lookup, restock], instructions="Restock."))

    @tool(description="Ask the echo worker, in a run of its own")
    async def ask_echo(item: str) -> str:
        child = await desk.arun(echo, Job(input=item))
        return child.content or ""

    desk.register(Worker(name="delegator", tools=[ask_echo], instructions="Delegate."))
    desk.register(Worker(name="asker", tools=[colour], instructions="Ask."))
    desk.register(Worker(name="sleeper", tools=[wait_a_bit], instructions="Wait."))
    return desk


@dataclass
class Live:
    url: str
    desk: Desk
    server: uvicorn.Server


def start_server(desk: Desk | None = None, **options: Any) -> tuple[Live, threading.Thread]:
    """Serve ``desk`` (a fresh :func:`make_desk` by default) with uvicorn in a thread."""
    desk = desk or make_desk()
    server, thread, url = serve_app(create_app(desk, poll_interval=0.1, **options))
    return Live(url, desk, server), thread


def serve_app(app: Any, http: str = "auto") -> tuple[uvicorn.Server, threading.Thread, str]:
    """Serve the ASGI ``app`` with uvicorn (``http``: its protocol) in a thread, on a free
    port of 127.0.0.1; returns once it listens."""
    config = uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", http=http)
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 60  # returns once it listens; generous for a loaded machine
    while not server.started:
        assert time.monotonic() < deadline, "server did not start"
        time.sleep(0.01)
    port = server.servers[0].sockets[0].getsockname()[1]
    return server, thread, f"http://127.0.0.1:{port}"


def parse_sse(text: str) -> list[dict[str, Any]]:
    """The frames of an SSE body: ``{"id", "event", "data"}`` each (comments dropped)."""
    frames = []
    for block in text.split("\n\n"):
        frame: dict[str, Any] = {"id": None, "event": "message", "data": None}
        lines = [line for line in block.splitlines() if line and not line.startswith(":")]
        if not lines:
            continue
        for line in lines:
            key, _, value = line.partition(": ")
            if key == "data":
                frame["data"] = json.loads(value)
            elif key in ("id", "event"):
                frame[key] = value
        frames.append(frame)
    return frames


__all__ = ["SECRET", "Live", "make_desk", "parse_sse", "start_server"]
