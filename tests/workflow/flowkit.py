"""Helpers for workflow tests: per-worker scripted answers, a desk factory, a pausing tool."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from deskwork import Desk, Worker
from deskwork.store.memory import InMemoryRunStore
from deskwork.testing import ScriptedAdapter, Turn, call_tool
from deskwork.tools import Tool, tool


class Scripts:
    """A model that answers each worker from its own script.

    Workers are built with ``instructions=<name>``, so the system message names the worker.
    A worker without (remaining) script turns answers ``"<name>#<n>"`` (n = its call count).
    """

    def __init__(self, **scripts: list[Turn | str]) -> None:
        self.scripts = {name: list(turns) for name, turns in scripts.items()}
        self.calls: Counter[str] = Counter()
        self.latency = 0.0

    def __call__(self, messages: list[dict[str, Any]], tools: Any) -> Turn | str:
        name = str(messages[0]["content"]).split("\n")[0]
        self.calls[name] += 1
        queue = self.scripts.get(name)
        turn: Turn | str = queue.pop(0) if queue else f"{name}#{self.calls[name]}"
        if isinstance(turn, str):
            turn = Turn(content=turn)
        turn.latency = turn.latency or self.latency
        return turn


def worker(name: str, *tools: Tool) -> Worker:
    """A worker whose system message is its name (see :class:`Scripts`)."""
    return Worker(name=name, instructions=name, tools=list(tools))


class Approvals:
    """A ``publish`` tool that needs confirmation, counting real executions."""

    def __init__(self) -> None:
        self.executed: list[str] = []

        @tool(requires_confirmation=True)
        def publish(text: str) -> str:
            """Publish text."""
            self.executed.append(text)
            return f"published {text}"

        self.tool: Tool = publish


def asks_approval(text: str = "x") -> list[Turn | str]:
    """A script: call ``publish`` (pauses), then answer once the tool result is in."""
    return [call_tool("publish", text=text), f"done {text}"]


def make_desk(scripts: Scripts, storage_dir: Path | None = None) -> Desk:
    """A desk on a scripted model (SQLite under ``storage_dir``, else an in-memory store)."""
    adapter = ScriptedAdapter(default=scripts)
    if storage_dir is not None:
        return Desk(model="scripted/m", adapter=adapter, storage_dir=storage_dir)
    return Desk(model="scripted/m", adapter=adapter, run_store=InMemoryRunStore())
