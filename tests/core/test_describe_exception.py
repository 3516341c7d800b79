"""``describe_exception``: the one way an exception becomes an error's text (a run's
``report.errors``, a graph agent's failure, a flow step's): its type, then its message with
secrets redacted, or the type alone when the message is empty."""

from __future__ import annotations

import pytest

from deskwork import Desk, Job, Worker
from deskwork.core.redact import REDACTED, describe_exception
from deskwork.store import InMemoryRunStore
from deskwork.testing import ScriptedAdapter


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
