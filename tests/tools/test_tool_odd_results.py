"""What a tool returns that cannot go to the model as it is: the call fails (the model is
told, ``tool.failed`` is recorded) and the run goes on."""

from __future__ import annotations

from typing import Any

import pytest

from deskwork import Desk, Job, Worker
from deskwork.core.event import EventType
from deskwork.store import InMemoryRunStore
from deskwork.testing import ScriptedAdapter, call_tool, reply
from deskwork.tools import tool


class Unprintable:
    def __str__(self) -> str:
        raise RuntimeError("no text for this one")


def _cyclic() -> Any:
    box: dict[str, Any] = {}
    box["self"] = box
    return box


def _run(value: Any) -> tuple[Desk, Any]:
    @tool
    def fetch(key: str) -> Any:
        return value

    desk = Desk(
        model="scripted/model",
        adapter=ScriptedAdapter([call_tool("fetch", key="k")], default=reply("done")),
        run_store=InMemoryRunStore(),
        storage_dir=".deskwork-unused",
    )
    return desk, desk.run(Worker(name="w", tools=[fetch]), Job(input="fetch k"))


@pytest.mark.parametrize(
    ("value", "why"),
    [
        (_cyclic(), "RecursionError"),
        ({"row": Unprintable()}, "RuntimeError: no text for this one"),
        (Unprintable(), "RuntimeError: no text for this one"),
    ],
    ids=["cycle", "unprintable-inside", "unprintable"],
)
def test_a_value_that_cannot_be_made_text_fails_the_call_not_the_run(value: Any, why: str) -> None:
    desk, report = _run(value)
    assert report.status == "completed" and report.content == "done"
    (call,) = report.tool_calls
    assert call.result is not None and call.result.error is not None
    assert call.result.error.startswith("tool 'fetch' returned a value that cannot be given")
    assert why in call.result.error
    failed = [
        e for e in desk.run_store.get_events(report.run_id) if e.type == EventType.TOOL_FAILED
    ]
    assert [e.payload["error"] for e in failed] == [call.result.error]
