"""Two keys of one dict that are one JSON key fail nothing that finished: a worker's final
data with them is not written to the desk's memory store (logged) and the run completes.
``True`` and ``"true"``, or an enum member and its value, are such keys too: a store writes
both as one JSON key, so they are refused as ``1`` and ``"1"`` are."""

from __future__ import annotations

import enum
import logging
from typing import Any

import pytest

from deskwork import Desk, Job, ToolResult, Worker
from deskwork.adapters.base import ModelResponse
from deskwork.store import InMemoryRunStore
from deskwork.store._blobs import KeysCollide, check_sizes
from deskwork.testing import ScriptedAdapter, call_tool, reply
from deskwork.tools import tool

COLLIDING = {1: "from the cache", "1": "from the database"}


def test_a_worker_whose_final_data_has_such_keys_completes_without_a_memory_write(
    caplog: pytest.LogCaptureFixture,
) -> None:
    class Structured(ScriptedAdapter):
        async def astructured_complete(self, **kwargs: Any) -> ModelResponse:
            return ModelResponse(content="ignored", parsed=dict(COLLIDING))

    desk = Desk(model="scripted/m", adapter=Structured(), run_store=InMemoryRunStore())
    with caplog.at_level(logging.WARNING, logger="deskwork.runtime"):
        report = desk.run(Worker(name="w"), Job(input="x", response_schema=dict[Any, str]))
    assert report.status == "completed", report.errors
    assert report.data == COLLIDING
    assert (
        desk.memory_store.read("last_output", Worker(name="w").scope) is None
    )  # nothing half-written
    assert any("not written to the memory store" in r.getMessage() for r in caplog.records)
    desk.close()


class Color(enum.Enum):
    RED = "red"


@pytest.mark.parametrize(
    "data",
    [{True: "a", "true": "b"}, {False: "a", "false": "b"}, {Color.RED: "a", "red": "b"}],
    ids=["true", "false", "enum"],
)
def test_keys_a_store_writes_as_one_are_refused(data: dict[Any, str]) -> None:
    with pytest.raises(KeysCollide, match="one of their values would be lost"):
        check_sizes({"rows": [data]})


def test_a_tool_result_with_true_and_true_text_keys_fails_the_call() -> None:
    @tool
    def flags() -> ToolResult:
        return ToolResult(content="flags", data={True: "on", "true": "yes"})

    adapter = ScriptedAdapter([call_tool("flags"), reply("no flags")])
    desk = Desk(model="scripted/m", adapter=adapter, run_store=InMemoryRunStore())
    report = desk.run(Worker(name="w", tools=[flags]), Job(input="flags?"))
    assert report.status == "completed", report.errors
    result = report.tool_calls[0].result
    assert result is not None and result.exception_type == "ToolResultKeysCollide"
    desk.close()


def test_keys_that_differ_in_json_are_kept() -> None:
    check_sizes({True: "a", "True": "b", 2: "c", "two": "d", Color.RED: "e"})
