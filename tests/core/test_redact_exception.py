"""redact_exception: an exception leaving deskwork, and every one chained to it, tells no
secret in a traceback, and keeps its type, traceback and the arguments that held none."""

from __future__ import annotations

import traceback

from deskwork.core.redact import redact_exception

KEY = "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789"


class StatusError(Exception):
    def __init__(self, message: str, status_code: int) -> None:
        super().__init__(message, status_code)
        self.status_code = status_code


def _raised() -> ValueError:
    try:
        try:
            try:
                raise StatusError(f"401 for key {KEY}", 401)
            except StatusError:
                raise KeyError(("no", "secret")) from None
        except KeyError as context:
            raise ValueError(f"wrapped: api_key={KEY}") from context.__context__
    except ValueError as error:
        return error


def test_the_whole_chain_is_redacted_in_place() -> None:
    error = _raised()
    cause = error.__cause__
    context = error.__context__
    redact_exception(error)
    printed = "".join(traceback.format_exception(error))
    assert KEY not in printed and "StatusError: ('401 for key <redacted>', 401)" in printed
    assert error.__cause__ is cause and isinstance(cause, StatusError)
    assert cause.status_code == 401 and cause.__traceback__ is not None
    assert isinstance(context, KeyError) and context.args == (("no", "secret"),)  # untouched


def test_a_cycle_in_the_chain_ends() -> None:
    first, second = RuntimeError(f"a {KEY}"), RuntimeError("b")
    first.__context__, second.__context__ = second, first
    redact_exception(first)
    assert str(first) == "a <redacted>" and str(second) == "b"


def test_the_members_of_an_exception_group_are_redacted() -> None:
    member = RuntimeError(f"401 for key {KEY}")
    group = ExceptionGroup("two failed", [ValueError("plain"), ExceptionGroup("inner", [member])])
    try:
        raise RuntimeError("agent failed") from group
    except RuntimeError as raised:
        error = raised
    redact_exception(error)
    printed = "".join(traceback.format_exception(error))
    assert KEY not in printed and "RuntimeError: 401 for key <redacted>" in printed
    assert group.exceptions[1].exceptions[0] is member  # the same objects, rewritten


def test_a_note_is_redacted() -> None:
    error = RuntimeError("request failed")
    error.add_note(f"api_key={KEY}")
    redact_exception(error)
    assert error.__notes__ == ["api_key=<redacted>"]
    assert KEY not in "".join(traceback.format_exception(error))
