"""``deskwork demo --serve``: the offline demo behind the web viewer.

The desk gets a stateless scripted model (each turn follows from the conversation, so any
number of runs can be started from the API), the demo's stock-room worker and its swarm
team. Two runs are started before serving: a team run that completes, and a stock-room run
that pauses for an approval you give in the browser.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from deskwork.cli.demo import STOCK, demo_team, demo_worker
from deskwork.core.job import Job
from deskwork.runtime.desk import Desk
from deskwork.testing.scripted import ScriptedAdapter, Turn, call_tool, reply

__all__ = ["demo_desk", "demo_model", "seed_runs", "serve_demo"]

_TARGET = 50


def _item(text: str) -> str:
    lowered = text.lower()
    return next((item for item in STOCK if item in lowered), "espresso beans")


def _first_user(messages: list[dict[str, Any]]) -> str:
    return next((str(m.get("content")) for m in messages if m.get("role") == "user"), "")


def _after_tool(names: set[str], item: str, result: str) -> Turn:
    if result.isdigit():
        count = int(result)
        if "restock" in names and count < _TARGET:
            return call_tool("restock", item=item, quantity=_TARGET - count)
        return reply(f"{item.capitalize()}: {count} in stock, enough for today.")
    if "declined" in result.lower():
        return reply(f"The restock was declined, so {item} stay as they are.")
    return reply(f"Done: {result}; {item} will reach {_TARGET}.")


def demo_model(messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None) -> Turn:
    """The demo's scripted model: the next turn follows from the messages and the tools."""
    names = {t["function"]["name"] for t in tools or []}
    item = _item(_first_user(messages))
    last = messages[-1]
    if last.get("role") == "tool":
        return _after_tool(names, item, str(last.get("content")).strip())
    if "transfer_to_agent" in names:
        return call_tool(
            "transfer_to_agent", agent_name="stockroom", context=f"Staff ask about {item}."
        )
    if "check_stock" in names:
        return call_tool("check_stock", item=item)
    return reply("I can check and restock the cafe's stock.")


def demo_desk(storage_dir: str | Path = ".deskwork", database_url: str | None = None) -> Desk:
    """A desk with the scripted demo model and the demo's runners registered."""
    desk = Desk(
        model="scripted/demo",
        adapter=ScriptedAdapter(default=demo_model, latency=0.05),
        storage_dir=storage_dir,
        database_url=database_url,
    )
    desk.register(demo_worker())
    desk.register(demo_team())
    return desk


async def seed_runs(desk: Desk) -> list[str]:
    """Start the demo's two runs; returns their ids (the stock-room run ends paused)."""
    team = await desk.arun(demo_team(), Job(input="Do we have enough oat milk?"))
    worker = await desk.arun(demo_worker(), Job(input="We are low on espresso beans."))
    return [team.run_id, worker.run_id]


def serve_demo(
    *,
    storage_dir: str = ".deskwork",
    database_url: str | None = None,
    host: str = "127.0.0.1",
    port: int = 8765,
) -> int:
    """Seed the demo runs and serve them with the viewer until interrupted."""
    from deskwork.serve._server import serve

    desk = demo_desk(storage_dir, database_url)
    ids = asyncio.run(seed_runs(desk))
    url = f"http://{host}:{port}/"
    print(f"deskwork demo — viewer at {url}")
    print(f"  the stock-room run waits for your approval: {url}#/runs/{ids[1]}")
    print("  start more runs with the API, for example:")
    body = json.dumps({"runner": "stockroom", "job": {"input": "Low on oat milk"}})
    print(f"  curl -X POST {url}runs -H 'content-type: application/json' -d '{body}'")
    print("  (Ctrl+C stops the server)")
    serve(desk, host=host, port=port)
    return 0
