"""Correlation fields for structlog: who and what every graph log line is about.

:func:`bind_logging_context` (called by ``BaseAgent.invoke()``) binds ``request_id``,
``session_id``, ``user_id``, ``langgraph_step`` and ``langgraph_node`` into structlog's
context variables; configure structlog with ``structlog.contextvars.merge_contextvars`` to
see them. With ``redact_pii=True`` the two identity fields are logged as 12-character SHA-256
prefixes — stable, so lines still correlate, but not the raw ids.

:func:`redact_secrets` is a structlog processor that removes API keys, bearer tokens and
key-named secrets from every event (deskwork's one redaction, :mod:`deskwork.core.redact`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, MutableMapping
from typing import Any

import structlog

from deskwork.core.redact import redact

__all__ = [
    "LOGGING_CONTEXT_KEYS",
    "bind_logging_context",
    "clear_logging_context",
    "redact_pii",
    "redact_secrets",
]

LOGGING_CONTEXT_KEYS = ("request_id", "session_id", "user_id", "langgraph_step", "langgraph_node")
"""The context variables this module binds and clears."""

_PII_KEYS = frozenset({"session_id", "user_id"})


def redact_pii(value: str) -> str:
    """The first 12 hex digits of ``value``'s SHA-256: stable, but not the identifier itself."""
    return hashlib.sha256(value.encode("utf-8")).hexdigest()[:12]


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
    present = {key: value for key, value in values.items() if value is not None}
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
