"""Correlation fields for structlog: who and what every graph log line is about.

:func:`bind_logging_context` (called by ``BaseAgent.invoke()``) binds ``request_id``,
``session_id``, ``user_id``, ``langgraph_step`` and ``langgraph_node`` into structlog's
context variables; configure structlog with ``structlog.contextvars.merge_contextvars`` to
see them. With ``redact_pii=True`` the two identity fields are logged as 12-character SHA-256
prefixes — stable, so lines still correlate, but not the raw ids.

:func:`get_graph_logger` is the logger the graph layer itself logs through: its fields pass
deskwork's one redaction (:mod:`deskwork.core.redact`) before structlog sees them, so an
exception message quoting an API key does not reach the logs whatever the application's
structlog configuration. :func:`redact_secrets` does the same as a structlog processor, for
the application's own events.
"""

from __future__ import annotations

import hashlib
import sys
from collections.abc import Mapping, MutableMapping
from typing import Any

import structlog

from deskwork.core.redact import redact, traceback_text
from deskwork.utils import escape_surrogates

__all__ = [
    "LOGGING_CONTEXT_KEYS",
    "GraphLogger",
    "bind_logging_context",
    "clear_logging_context",
    "get_graph_logger",
    "redact_pii",
    "redact_secrets",
]

LOGGING_CONTEXT_KEYS = ("request_id", "session_id", "user_id", "langgraph_step", "langgraph_node")
"""The context variables this module binds and clears."""

_PII_KEYS = frozenset({"session_id", "user_id"})


def redact_pii(value: str) -> str:
    """The first 12 hex digits of ``value``'s SHA-256: stable, but not the identifier itself."""
    return hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()[:12]


def _printable(value: Any) -> Any:
    """``value`` with a lone surrogate in any of its texts written as its ``\\uXXXX`` escape.

    A renderer printing to a UTF-8 stream (structlog's default) raises ``UnicodeEncodeError`` on
    one, so an id or a message holding it (from a user's input) would fail the agent logging it.
    """
    if isinstance(value, str):
        return escape_surrogates(value)
    if isinstance(value, Mapping):
        return {key: _printable(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_printable(item) for item in value]
    return value


_hash = redact_pii  # bind_logging_context's keyword argument shadows the function's name


def bind_logging_context(
    state: Mapping[str, Any],
    config: Mapping[str, Any] | None = None,
    *,
    redact_pii: bool = False,
) -> None:
    """Bind the correlation fields of ``state`` and LangGraph's ``config`` metadata.

    ``request_id``, ``session_id`` and ``user_id`` come from the state; ``langgraph_step`` and
    ``langgraph_node`` from ``config["metadata"]`` (LangGraph fills them in for each node).
    A field that is absent is unbound, so nothing stale from an earlier request remains.
    ``request_id`` is never hashed.
    """
    metadata = (config or {}).get("metadata") or {}
    values = {
        "request_id": state.get("request_id"),
        "session_id": state.get("session_id"),
        "user_id": state.get("user_id"),
        "langgraph_step": metadata.get("langgraph_step"),
        "langgraph_node": metadata.get("langgraph_node"),
    }
    if redact_pii:
        values = {
            key: _hash(str(value)) if key in _PII_KEYS and value is not None else value
            for key, value in values.items()
        }
    present = {key: _printable(value) for key, value in values.items() if value is not None}
    structlog.contextvars.unbind_contextvars(*(key for key in values if key not in present))
    structlog.contextvars.bind_contextvars(**present)


def clear_logging_context() -> None:
    """Unbind the fields :func:`bind_logging_context` binds (call at request boundaries).

    Context variables bound by the application itself are left alone.
    """
    structlog.contextvars.unbind_contextvars(*LOGGING_CONTEXT_KEYS)


def redact_secrets(
    logger: Any, method_name: str, event_dict: MutableMapping[str, Any]
) -> MutableMapping[str, Any]:
    """structlog processor: redact secrets from every value of the event (add it before the
    renderer, e.g. ``processors=[merge_contextvars, redact_secrets, JSONRenderer()]``)."""
    redacted = redact(dict(event_dict))
    return redacted if isinstance(redacted, dict) else event_dict


class GraphLogger:
    """A structlog logger whose event fields are redacted before they are logged."""

    __slots__ = ("_logger",)

    def __init__(self, name: str) -> None:
        self._logger = structlog.get_logger(name)

    def debug(self, event: str, **fields: Any) -> None:
        """Log ``event`` at DEBUG."""
        self._logger.debug(event, **_printable(redact(fields)))

    def info(self, event: str, **fields: Any) -> None:
        """Log ``event`` at INFO."""
        self._logger.info(event, **_printable(redact(fields)))

    def warning(self, event: str, **fields: Any) -> None:
        """Log ``event`` at WARNING."""
        self._logger.warning(event, **_printable(redact(fields)))

    def error(self, event: str, **fields: Any) -> None:
        """Log ``event`` at ERROR."""
        self._logger.error(event, **_printable(redact(fields)))

    def exception(self, event: str, **fields: Any) -> None:
        """Log ``event`` at ERROR with the current exception's traceback (or that of
        ``exc_info=``: an exception or a ``sys.exc_info()`` tuple), redacted, as the field
        ``exception`` (structlog's renderers print it as the traceback)."""
        error = _raised(fields.pop("exc_info", True))
        if error is not None:
            fields["exception"] = traceback_text(error).rstrip("\n")
        self.error(event, **fields)


def _raised(exc_info: Any) -> BaseException | None:
    """The exception structlog's ``exc_info`` names: ``True`` for the one being handled."""
    if exc_info is True:
        exc_info = sys.exc_info()
    if isinstance(exc_info, tuple) and len(exc_info) == 3:
        exc_info = exc_info[1]
    return exc_info if isinstance(exc_info, BaseException) else None


def get_graph_logger(name: str = "deskwork.graph") -> GraphLogger:
    """The redacting logger for ``name`` (graph modules use ``deskwork.graph.<area>``)."""
    return GraphLogger(name)
