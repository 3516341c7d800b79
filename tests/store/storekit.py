"""Shared data for the store tests: a paused run's state that uses every RunState field."""

from __future__ import annotations

from typing import Any

from deskwork import Message, PendingAction, RunState, ToolCall
from deskwork.tools import ToolResult

__all__ = ["paused_state"]


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
