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


class TaggedGroup(ExceptionGroup):  # type: ignore[type-arg]
    def __init__(self, message: str, errors: list[Exception], *, tag: str) -> None:
        super().__init__(message, errors)
        self.tag = tag

    def __new__(cls, message: str, errors: list[Exception], **_: object) -> TaggedGroup:
        return super().__new__(cls, message, errors)


def _raised_group() -> ExceptionGroup[Exception]:
    try:
        raise ExceptionGroup(f"calls failed for api_key={KEY}", [ValueError(f"401 for {KEY}")])
    except ExceptionGroup as group:
        group.add_note("retry later")
        return group


def test_a_groups_own_message_is_redacted_in_the_group_returned() -> None:
    """A group's message is fixed when it is made: its str, and a traceback of it, kept the
    key after the redaction rewrote its arguments."""
    group = _raised_group()
    redacted = redact_exception(group)
    printed = "".join(traceback.format_exception(redacted))
    assert KEY not in printed and KEY not in str(redacted)
    assert str(redacted) == "calls failed for api_key=<redacted> (1 sub-exception)"
    assert type(redacted) is ExceptionGroup and redacted.__notes__ == ["retry later"]
    assert redacted.__traceback__ is group.__traceback__
    assert str(redacted.exceptions[0]) == "401 for <redacted>"  # the members as before


def test_a_linked_group_is_replaced_where_it_is_linked() -> None:
    inner = TaggedGroup(f"inner saw password={KEY}", [RuntimeError("plain")], tag="t")
    outer = ExceptionGroup("all failed", [inner])
    try:
        raise RuntimeError("agent failed") from outer
    except RuntimeError as raised:
        error = raised
    assert redact_exception(error) is error  # no group itself: kept
    printed = "".join(traceback.format_exception(error))
    assert KEY not in printed and "inner saw password=<redacted>" in printed
    copy = error.__cause__
    assert isinstance(copy, ExceptionGroup) and copy is not outer  # holds a copied group
    member = copy.exceptions[0]
    assert type(member) is TaggedGroup and member.tag == "t"
    assert member.exceptions == inner.exceptions


def test_a_group_that_tells_no_secret_is_the_same_object() -> None:
    group = ExceptionGroup("two failed", [ValueError(f"key {KEY}")])
    assert redact_exception(group) is group
