"""Helpers for workforce tests: a model that answers each worker from its own script."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from deskwork import Desk, Event, Report, Worker
from deskwork.store.memory import InMemoryRunStore
from deskwork.testing import ScriptedAdapter, Turn
from deskwork.tools import Tool, tool

MODEL = "scripted/m"
Script = Turn | str | Callable[[list[dict[str, Any]]], Turn | str]


def who(messages: list[dict[str, Any]]) -> str:
    """The asking worker: the first line of the first (system) message."""
    return str(messages[0]["content"]).split("\n")[0]


class Model:
    """Answers each worker from its own queue (a worker's system message is its name).

    A worker without remaining turns answers ``"<name> done"``. Every call is recorded.
    """

    def __init__(self, latency: float = 0.0, **scripts: list[Script]) -> None:
        self.scripts = {name: list(turns) for name, turns in scripts.items()}
        self.latency = latency
        self.seen: list[tuple[str, list[dict[str, Any]], Any]] = []

    def __call__(self, messages: list[dict[str, Any]], tools: Any) -> Turn:
        name = who(messages)
        self.seen.append((name, messages, tools))
        queue = self.scripts.get(name)
        turn = queue.pop(0) if queue else f"{name} done"
        if callable(turn) and not isinstance(turn, Turn):
            turn = turn(messages)
        if isinstance(turn, str):
            turn = Turn(content=turn)
        turn.latency = turn.latency or self.latency
        return turn

    def order(self) -> list[str]:
        """Which worker made each model call, in order."""
        return [name for name, _, _ in self.seen]

    def messages_of(self, name: str) -> list[list[dict[str, Any]]]:
        """The messages of every call made by ``name``."""
        return [messages for who_, messages, _ in self.seen if who_ == name]


def worker(name: str, *tools: Tool) -> Worker:
    """A worker whose system message is its name."""
    return Worker(name=name, instructions=name, tools=list(tools))


def make_desk(model: Model, storage: Path | None = None) -> Desk:
    """A desk on the scripted model: in-memory store, or SQLite under ``storage``."""
    adapter = ScriptedAdapter(default=model)
    if storage is None:
        return Desk(model=MODEL, adapter=adapter, run_store=InMemoryRunStore())
    return Desk(model=MODEL, adapter=adapter, storage_dir=storage)


def types(events: list[Event], prefix: str = "") -> list[str]:
    """Event types (optionally only those starting with ``prefix``)."""
    return [e.type for e in events if e.type.startswith(prefix)]


def of_type(report: Report, event_type: str) -> list[Event]:
    """The report's events of one type."""
    return [e for e in report.events if e.type == event_type]


@tool(requires_confirmation=True)
def deploy(target: str) -> str:
    """Deploy to a target (asks a person first)."""
    return f"deployed {target}"


@tool
def lookup(query: str) -> str:
    """Look something up."""
    return f"result for {query}"


def llm_totals(events: list[Event]) -> dict[str, Any]:
    """What the run's ``llm.completed`` events add up to (calls, tokens, cost)."""
    done = [e.payload for e in events if e.type == "llm.completed"]
    totals: dict[str, Any] = {"llm_calls": len(done)}
    for key in ("prompt_tokens", "completion_tokens", "total_tokens"):
        totals[key] = sum(p.get(key) or 0 for p in done)
    totals["cost"] = sum(p.get("cost") or 0.0 for p in done)
    return totals


def assert_metrics_match_llm_events(report: Report) -> None:
    """The report's metrics equal the totals of every model call in the run."""
    totals = llm_totals(report.events)
    assert totals["llm_calls"] > 0
    for key, value in totals.items():
        if key == "cost" and not value:
            continue
        assert report.metrics.get(key) == pytest.approx(value), (key, report.metrics)
