"""Helpers for blackboard tests: a model that answers each worker from its own script."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from deskwork import Desk, Event, Worker
from deskwork.store.memory import InMemoryRunStore
from deskwork.testing import ScriptedAdapter, Turn
from deskwork.tools import Tool, tool


class Model:
    """Answers each worker (named by the first line of its system message) from its queue.

    A worker without remaining turns answers ``"<name> done"``. Every call is recorded.
    """

    def __init__(self, **scripts: list[Turn | str]) -> None:
        self.scripts = {name: list(turns) for name, turns in scripts.items()}
        self.seen: list[tuple[str, list[dict[str, Any]]]] = []

    def __call__(self, messages: list[dict[str, Any]], tools: Any) -> Turn | str:
        name = str(messages[0]["content"]).split("\n")[0]
        self.seen.append((name, messages))
        queue = self.scripts.get(name)
        return queue.pop(0) if queue else f"{name} done"

    def order(self) -> list[str]:
        """Which worker made each model call, in order."""
        return [name for name, _ in self.seen]

    def prompts_of(self, name: str) -> list[str]:
        """The last message's content of every call made by ``name``."""
        return [str(messages[-1]["content"]) for who, messages in self.seen if who == name]


def worker(name: str, *tools: Tool) -> Worker:
    """A worker whose system message is its name."""
    return Worker(name=name, instructions=name, tools=list(tools))


def make_desk(model: Model, storage: Path | None = None) -> Desk:
    """A desk on the scripted model: in-memory store, or SQLite under ``storage``."""
    adapter = ScriptedAdapter(default=model)
    if storage is None:
        return Desk(model="scripted/m", adapter=adapter, run_store=InMemoryRunStore())
    return Desk(model="scripted/m", adapter=adapter, storage_dir=storage)


def board_events(events: list[Event]) -> list[tuple[str, dict[str, Any]]]:
    """``blackboard.*`` and ``workforce.warning`` events as (type, payload)."""
    kinds = ("blackboard.", "workforce.warning")
    return [(e.type, e.payload) for e in events if e.type.startswith(kinds)]


def llm_calls(events: list[Event]) -> int:
    """How many model calls completed in the run."""
    return sum(1 for e in events if e.type == "llm.completed")


@tool(requires_confirmation=True)
def deploy(target: str) -> str:
    """Deploy to a target (asks a person first)."""
    return f"deployed {target}"


@tool(requires_user_input=True)
def ask(question: str, user_input: str) -> str:
    """Ask a person."""
    return f"the person said: {user_input}"
