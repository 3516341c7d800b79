"""Shared data for the store tests: a paused run's state that uses every RunState field, two
kinds of test event, and the event ids a PostgreSQL database holds for a run."""

from __future__ import annotations

from typing import Any

from deskwork import Event, Message, PendingAction, RunState, ToolCall
from deskwork.tools import ToolResult
from deskwork.utils import new_id, utc_now

__all__ = ["numbered_event", "paused_state", "sample_event", "stored_event_ids"]


def numbered_event(run_id: str, n: int) -> Event:
    """An event of ``run_id`` whose id is ``n`` (so a test can read the stored order)."""
    return Event(
        event_id=str(n), type="custom", timestamp=utc_now(), run_id=run_id, source="s", payload={}
    )


def sample_event(run_id: str, n: int) -> Event:
    """An event of type ``custom.N`` (a new id) whose payload holds ``n`` and non-ASCII text."""
    return Event(
        event_id=new_id(),
        type=f"custom.{n}",
        timestamp=utc_now(),
        run_id=run_id,
        source="s",
        payload={"n": n, "text": "é ✓"},
    )


def stored_event_ids(url: str, run_id: str) -> list[str]:
    """The ids of ``run_id``'s events committed in the PostgreSQL database at ``url``, in
    order, read on a connection of its own (not through the store, which commits first)."""
    import psycopg

    with psycopg.connect(url) as conn:
        rows = conn.execute(
            "SELECT event_id FROM deskwork_events WHERE run_id=%s ORDER BY seq", (run_id,)
        ).fetchall()
    return [str(row[0]) for row in rows]


def paused_state(run_id: str, status: Any = "paused") -> RunState:
    call = ToolCall(
        id="c1",
        name="delete",
        arguments={"path": "x"},
        result=ToolResult(content="done", data={"n": 1}),
    )
    return RunState(
        run_id=run_id,
        status=status,
        runner_type="worker",
        runner_name="w",
        job={"input": "hi", "metadata": {"k": 1}},
        messages=[Message(role="user", content="hi"), Message(role="assistant", tool_calls=[call])],
        tool_calls=[call],
        pending_action=PendingAction(
            action_id="a",
            type="confirmation",
            tool_call=call,
            prompt="ok?",
            options=["approve", "decline"],
        ),
        metrics={"llm_calls": 1, "latency_ms": 1.5},
        iteration=2,
        payload={"nested": {"x": [1]}},
    )
