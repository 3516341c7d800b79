"""No secret reaches a log through deskwork's stdlib loggers: not in a message, not in its
``%r`` arguments, not in an exception's traceback (its last line, a chained cause's), whatever
handler reads the record -- the standard Formatter or one that formats ``record.exc_info``
itself. The exception's type, the redacted message and the traceback's frames still show."""

from __future__ import annotations

import asyncio
import logging
import re
import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import deskwork
from deskwork._logs import get_stdlib_logger
from deskwork.collaboration import Blackboard
from deskwork.core.event import new_event
from deskwork.event_bus import EventBus
from deskwork.realtime.core._notify import Notifier
from deskwork.runtime._fence import Fence
from deskwork.serve._hub import EventHub, Outgoing

SECRETS = ("sk-proj-Abc123def456ghi", "Bearer tok3n-abcdefgh", "hunter2-secret-value")


def _failure() -> RuntimeError:
    """A provider's failure quoting a key, caused by one quoting a token and a password."""
    try:
        try:
            raise ValueError(f"Authorization: {SECRETS[1]} with api_key={SECRETS[2]}")
        except ValueError as cause:
            raise RuntimeError(f"401 for key {SECRETS[0]}") from cause
    except RuntimeError as error:
        return error


class _Capture(logging.Handler):
    """The text each record shows: the standard Formatter's, plus what a handler formatting
    ``record.exc_info`` itself (an error tracker, say) would read."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
        self.texts: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        text = self.format(record)
        if record.exc_info and record.exc_info[1] is not None:
            text += "\n" + "".join(traceback.format_exception(record.exc_info[1]))
        self.texts.append(text)


@contextmanager
def _captured(name: str) -> Iterator[_Capture]:
    logger = logging.getLogger(name)
    handler = _Capture()
    level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    try:
        yield handler
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)


def _assert_redacted(handler: _Capture, *shown: str) -> str:
    [text] = handler.texts
    for secret in SECRETS:
        assert secret not in text, text
    assert "<redacted>" in text
    for part in shown:
        assert part in text, text
    return text


def _assert_traceback(text: str, frame: str) -> None:
    """The traceback still tells what failed where: both exceptions' types, the chain, the
    redacted messages and the frames."""
    for part in (
        "Traceback (most recent call last)",
        f"in {frame}",
        "in _failure",
        "ValueError: Authorization: <redacted> with api_key=<redacted>",
        "The above exception was the direct cause of the following exception",
        "RuntimeError: 401 for key <redacted>",
    ):
        assert part in text, text


def test_a_realtime_callback_that_raises_is_logged_redacted() -> None:
    class Leaky:
        async def on_turn_start(self, context: object) -> None:
            raise _failure()

    notifier = Notifier([Leaky()], bus=None)  # type: ignore[list-item]
    with _captured("deskwork.realtime.engine") as handler:
        asyncio.run(notifier.hook("on_turn_start", None))
    text = _assert_redacted(handler, "realtime callback Leaky.on_turn_start failed")
    _assert_traceback(text, "on_turn_start")


def test_a_blackboard_subscriber_that_raises_is_logged_redacted_with_its_arguments() -> None:
    class Hook:
        def __call__(self, key: str, value: object, author: str) -> None:
            raise _failure()

        def __repr__(self) -> str:  # a callback whose repr shows its configuration
            return f"Hook(api_key={SECRETS[2]!r})"

    board = Blackboard()
    key = f"token {SECRETS[0]}"
    board.subscribe(key, Hook())
    with _captured("deskwork.collaboration._blackboard") as handler:
        board.write(key, 1, author="x")
    text = _assert_redacted(handler, "Blackboard subscriber Hook(api_key='<redacted>') failed")
    assert "for key 'token <redacted>'" in text
    _assert_traceback(text, "__call__")


def test_the_fences_failed_lock_check_is_logged_redacted() -> None:
    class Lock:
        can_be_lost = True

        def held(self) -> bool:
            raise _failure()

    fence = Fence(Lock(), "e")  # type: ignore[arg-type]
    with _captured("deskwork.durable") as handler:
        assert fence._held() is False
    text = _assert_redacted(handler, "executor e: checking its lock failed")
    _assert_traceback(text, "held")


async def test_an_event_stream_that_fails_to_write_is_logged_redacted() -> None:
    bus = EventBus()
    hub = EventHub(bus, asyncio.get_running_loop(), 0.02)
    sub = hub.subscribe("r1")

    def take_now(item: Outgoing) -> bool:
        raise _failure()

    waiting = asyncio.ensure_future(sub.wait(take_now))
    await asyncio.sleep(0)
    with _captured("deskwork.serve") as handler:
        bus.emit(new_event("r1", "test.tick", "test", {}))
        await asyncio.wait_for(waiting, 5)
    hub.close()
    assert sub.closed
    text = _assert_redacted(handler, "event stream failed to write an event; closing it")
    _assert_traceback(text, "take_now")


def test_a_message_whose_arguments_do_not_fit_is_logged_not_raised_at_the_call() -> None:
    logger = get_stdlib_logger("deskwork.test.misfit")
    with _captured("deskwork.test.misfit") as handler:
        logger.warning("key %s and %s", f"api_key={SECRETS[2]}")
    _assert_redacted(handler, "key %s and %s (arguments that do not fit: ")


def test_the_filter_is_added_once_however_often_a_logger_is_asked_for() -> None:
    first = get_stdlib_logger("deskwork.test.once")
    assert get_stdlib_logger("deskwork.test.once") is first
    assert len(first.filters) == 1


def test_every_deskwork_module_logger_goes_through_the_redacting_helper() -> None:
    """A logger made with ``logging.getLogger`` would let its records through unredacted
    (filters run only on the logger a record is logged on). Exempt: the helper itself, and
    deskwork.logging's StructuredLogger (the application's logger, by the name it picks;
    its JSON records are redacted field by field)."""
    root = Path(deskwork.__file__).parent
    exempt = {root / "_logs.py", root / "logging.py"}
    offenders = [
        f"{path.relative_to(root)}:{number}"
        for path in sorted(root.rglob("*.py"))
        if path not in exempt
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if re.search(r"\bgetLogger\b", line)
    ]
    assert offenders == []
