"""The stdlib loggers deskwork's own modules log through: no secret reaches a handler.

Every module creates its logger with :func:`get_stdlib_logger`, not ``logging.getLogger``
(tests/core/test_stdlib_log_redaction.py checks the source). The logger gets one filter that
rewrites each record before any handler sees it:

- the message, with its arguments merged in, is redacted (:func:`~deskwork.core.redact.
  redact_log_text`: a credential header's line too) and the arguments dropped, so ``%r`` of
  a callback or a key is covered too;
- an exception's traceback is formatted as the standard :class:`logging.Formatter` does,
  redacted into ``record.exc_text``, and ``record.exc_info`` cleared: the standard formatter
  prints the redacted traceback (its type, frames and last line, a chained cause's too), and no
  formatter or handler can reach the raw exception's text. A ``stack_info`` is redacted too.

A logger's filters run only for the records logged on that very logger (not a child's, not
one propagated from below), hence one filter on each module's logger, added once.

Cost: a record below its logger's level is never built, so the filter never runs for it;
it runs only for the records that are emitted (a warning, a failure), never on a hot path.
"""

from __future__ import annotations

import logging

from deskwork.core.redact import redact_log_text

__all__ = ["get_stdlib_logger"]

_FORMATTER = logging.Formatter()


def _message(record: logging.LogRecord) -> str:
    try:
        return record.getMessage()
    except Exception:  # arguments that do not fit: logged as they are, not raised at the call
        try:
            return f"{record.msg!s} (arguments that do not fit: {record.args!r})"
        except Exception:
            return "<a log message that could not be formatted>"


class _Redacting(logging.Filter):
    """Redacts a record's message, arguments, traceback and stack in place."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.msg = redact_log_text(_message(record))
        record.args = None
        if record.exc_info:
            record.exc_text = record.exc_text or _FORMATTER.formatException(record.exc_info)
            record.exc_info = None
        if record.exc_text:
            record.exc_text = redact_log_text(record.exc_text)
        if record.stack_info:
            record.stack_info = redact_log_text(record.stack_info)
        return True


_REDACTING = _Redacting()


def get_stdlib_logger(name: str) -> logging.Logger:
    """``logging.getLogger(name)`` with the redacting filter (added once, however often)."""
    logger = logging.getLogger(name)
    logger.addFilter(_REDACTING)  # a no-op when the filter is there already
    return logger
