"""``describe_exception``: the one way an exception becomes an error's text (a run's
``report.errors``, a graph agent's failure, a flow step's): its type, then its message with
secrets redacted, or the type alone when the message is empty."""

from __future__ import annotations

import pytest

from deskwork import Desk, Job, ToolCall, Worker
from deskwork.core.redact import REDACTED, describe_exception
from deskwork.store import InMemoryRunStore
from deskwork.testing import ScriptedAdapter, call_tool, reply
from deskwork.tools import Tool, tool


def test_type_then_redacted_message() -> None:
    text = describe_exception(RuntimeError("auth failed for sk-live-0123456789abcdefghij"))
    assert text == f"RuntimeError: auth failed for {REDACTED}"


def test_an_empty_message_gives_the_type_alone() -> None:
    assert describe_exception(KeyError()) == "KeyError"
    assert describe_exception(ValueError("")) == "ValueError"


@pytest.mark.parametrize("message", ["", "sk-live-0123456789abcdefghij is wrong"])
def test_a_failing_model_call_reads_the_same_in_the_report(message: str) -> None:
    class Broken(ScriptedAdapter):
        async def acomplete(self, **_: object) -> object:
            raise ConnectionError(message)

    desk = Desk(model="scripted/m", adapter=Broken([]), run_store=InMemoryRunStore())
    report = desk.run(Worker(name="w"), Job(input="hi"))
    assert report.status == "failed"
    expected = describe_exception(ConnectionError(message))
    assert any(error.endswith(expected) for error in report.errors), report.errors
    assert "sk-live" not in str(report.errors)


class _Unreadable(Exception):
    def __str__(self) -> str:
        raise RuntimeError("no str")


def test_an_exception_whose_str_raises_is_still_described() -> None:
    assert describe_exception(_Unreadable()) == (
        "_Unreadable: <the _Unreadable's message could not be read>"
    )


@tool(name="odd")
def _odd_tool() -> str:
    raise _Unreadable()


def _hook(_call: ToolCall) -> None:
    raise _Unreadable()


@tool(name="odd", pre=(_hook,))
def _odd_hooked() -> str:
    return "never"


@pytest.mark.parametrize("odd", [_odd_tool, _odd_hooked], ids=["tool", "pre-hook"])
def test_a_tool_raising_such_an_exception_fails_its_call_not_the_run(odd: Tool) -> None:
    adapter = ScriptedAdapter([call_tool("odd"), reply("done")])
    desk = Desk(model="scripted/m", adapter=adapter, run_store=InMemoryRunStore())
    report = desk.run(Worker(name="w", tools=[odd]), Job(input="go"))
    assert (report.status, report.content) == ("completed", "done"), report.errors
    seen_by_model = adapter.calls[1]["messages"][-1]["content"]
    assert "<the _Unreadable's message could not be read>" in seen_by_model


def test_a_model_call_raising_such_an_exception_names_its_type() -> None:
    class Broken(ScriptedAdapter):
        async def acomplete(self, **_: object) -> object:
            raise _Unreadable()

    desk = Desk(model="scripted/m", adapter=Broken([]), run_store=InMemoryRunStore())
    report = desk.run(Worker(name="w"), Job(input="hi"))
    assert report.status == "failed"
    assert report.errors[-1].endswith("_Unreadable: <the _Unreadable's message could not be read>")
