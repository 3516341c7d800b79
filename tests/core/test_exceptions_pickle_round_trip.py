"""Every deskwork error survives pickling (a durable step's record, a process-isolated tool's
failure): same class, same message, same attributes."""

from __future__ import annotations

import pickle

import pytest

from deskwork.exceptions import (
    ConfigurationError,
    ContextLimitError,
    DeskworkError,
    EventHandlerError,
    MissingExtraError,
    RunNotRunningError,
    StoreError,
    ToolExecutionError,
)

ERRORS: list[DeskworkError] = [
    EventHandlerError("run.started", RuntimeError("boom")),
    MissingExtraError("chromadb", "vector"),
    RunNotRunningError("run-1"),
    StoreError("damaged", location="/tmp/x.db"),
    ContextLimitError("too long", model="m", model_registered=False, summary_attempted=True),
    ToolExecutionError("failed", tool_name="t", original_exception=ValueError("v")),
    ConfigurationError("bad"),
]


@pytest.mark.parametrize("error", ERRORS, ids=lambda e: type(e).__name__)
def test_an_error_unpickles_as_it_was(error: DeskworkError) -> None:
    error.add_note("a note")
    back = pickle.loads(pickle.dumps(error))
    assert type(back) is type(error)
    assert str(back) == str(error) and back.args == error.args
    assert back.__notes__ == ["a note"]
    for name, value in vars(error).items():
        if isinstance(value, BaseException):
            assert type(getattr(back, name)) is type(value)
            assert str(getattr(back, name)) == str(value)
        else:
            assert getattr(back, name) == value, name
