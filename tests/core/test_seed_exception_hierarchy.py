"""The core document's exception hierarchy (``BlackgeorgeError`` read as ``DeskworkError``),
its usage sample's attributes, and ``ToolResult.original_exception`` as its field list says."""

from __future__ import annotations

import pytest

import deskwork
from deskwork import Desk, DeskworkError, Job, Worker
from deskwork.store.memory import InMemoryRunStore
from deskwork.testing import ScriptedAdapter, call_tool, reply
from deskwork.tools import tool

DOCUMENTED = (
    "ContextLimitError",
    "ToolExecutionError",
    "ToolValidationError",
    "ToolTimeoutError",
    "EventHandlerError",
    "RunnerNotRegisteredError",
    "StreamingUnsupportedError",
)


@pytest.mark.parametrize("name", DOCUMENTED)
def test_each_documented_error_is_a_deskwork_error(name: str) -> None:
    error = getattr(deskwork, name)
    assert error is getattr(deskwork.exceptions, name)
    assert issubclass(error, DeskworkError)


def test_the_usage_sample_attributes() -> None:
    limit = deskwork.ContextLimitError("too long")
    assert (limit.model_registered, limit.summary_attempted) == (True, False)
    cause = ValueError("bad")
    failed = deskwork.ToolExecutionError("tool failed", tool_name="t", original_exception=cause)
    assert (failed.tool_name, failed.original_exception, str(failed)) == ("t", cause, "tool failed")
    assert deskwork.ToolExecutionError("x").original_exception is None  # `if e.original_exception`


def test_a_failed_tool_result_keeps_its_exception_in_process() -> None:
    @tool()
    def risky_operation(data: str) -> str:
        raise ValueError("Something went wrong")

    adapter = ScriptedAdapter([call_tool("risky_operation", data="d"), reply("handled")])
    desk = Desk(model="scripted/m", adapter=adapter, run_store=InMemoryRunStore())
    report = desk.run(Worker(name="worker", tools=[risky_operation]), Job(input="Process this"))

    result = report.tool_calls[0].result
    assert result is not None and result.exception_type == "ValueError"
    assert isinstance(result.original_exception, ValueError)
    assert str(result.original_exception) == "Something went wrong"
    assert "original_exception" not in result.model_dump()  # in-process only, never stored
    assert report.status == "completed"  # the model saw the error and answered
