"""RunConfig: the typed context every runner receives for one run."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from deskwork.adapters._retry import RetryPolicy
from deskwork.exceptions import ConfigurationError
from deskwork.utils import is_integer, new_id

if TYPE_CHECKING:
    from deskwork.adapters.base import BaseModelAdapter
    from deskwork.core.event import Event
    from deskwork.runtime._budget import Budget
    from deskwork.runtime.desk import Desk
    from deskwork.tools._pool import ToolThreadPool

__all__ = ["EventEmitter", "RunConfig", "check_max_context_messages"]

EventEmitter = Callable[[str, str, dict[str, Any]], None]
"""``emit(event_type, source, payload)``."""


def _discard(event_type: str, source: str, payload: dict[str, Any]) -> None:
    """The default emitter of a standalone RunConfig: events are dropped."""


def _default_adapter() -> BaseModelAdapter:
    from deskwork.adapters.litellm import LiteLLMAdapter

    return LiteLLMAdapter()


@dataclass(slots=True)
class RunConfig:
    """Everything a runner needs for one run: the model port, limits and the event sink."""

    adapter: BaseModelAdapter = field(default_factory=_default_adapter)
    """Model adapter used for every call in the run (``LiteLLMAdapter`` when omitted)."""
    emit: EventEmitter = _discard
    """Event sink: ``emit(type, source, payload)`` (events are dropped when omitted)."""
    run_id: str = field(default_factory=new_id)
    """The run's identifier (nested runners share it; generated when omitted)."""
    events: list[Event] = field(default_factory=list)
    """Events of the run, filled by the desk's emitter."""
    temperature: float | None = None
    max_tokens: int | None = None
    stream: bool = False
    stream_options: dict[str, Any] | None = None
    structured_output_retries: int = 3
    structured_stream_mode: Literal["off", "preview"] = "off"
    max_iterations: int = 10
    """Maximum model turns per worker run."""
    max_tool_calls: int = 20
    """Maximum tool calls per worker run."""
    num_retries: int = 0
    """Retries of a model call that failed with a transient error (rate limit, overload,
    network); the desk retries, the adapter's client does not (0 disables)."""
    retry_policy: RetryPolicy = field(default_factory=RetryPolicy)
    """Backoff and jitter between those retries; a provider's ``Retry-After`` is honoured."""
    respect_context_window: bool = True
    """Summarize and retry on context-limit errors (reactive compaction)."""
    max_context_messages: int | None = None
    """Summarize before a model call when the history has more than this many messages
    (proactive compaction); at least 5. A compaction keeps the leading system messages (the
    worker's instructions, a memory context), one summary and the most recent messages:
    ``SUMMARY_TAIL_MESSAGES`` (4), fewer when that would leave more than the limit (at
    least one). The history stays over the limit only when the leading system messages
    alone nearly fill it, or when the recent messages are all results of one call (a call
    and its results stay together). The kept messages never start with a tool result; when
    they start with an assistant message, the summary is a user message (Anthropic refuses
    a history that does not start with the user's)."""
    default_model: str | None = None
    """Model for workers without their own model."""
    model: str | None = None
    """Alias of ``default_model`` (the short form ``RunConfig(model=...)``)."""
    desk: Desk | None = None
    """The desk that started the run (lets runners start child runs); ``None`` when standalone."""
    budget: Budget | None = None
    """The run's spending limit (``max_cost_usd`` of the desk or job); ``None``: no limit."""
    tool_pool: ToolThreadPool | None = None
    """Daemon threads that run sync tools off the loop (the desk's; a process-wide pool when
    ``None``)."""

    def __post_init__(self) -> None:
        if self.max_context_messages is not None:
            check_max_context_messages(self.max_context_messages)

    def with_overrides(self, **changes: Any) -> RunConfig:
        """A copy with some fields replaced."""
        return dataclasses.replace(self, **changes)

    def model_name(self, worker_model: str | None) -> str:
        """The worker's model, else the default model.

        Raises:
            ValueError: neither is set.
        """
        model = worker_model or self.default_model or self.model
        if not model:
            raise ValueError("no model: set Worker(model=...) or Desk(model=...)")
        return model


def check_max_context_messages(limit: object) -> None:
    """Refuse a ``max_context_messages`` that proactive compaction could not keep to.

    Compaction keeps a summary and the ``SUMMARY_TAIL_MESSAGES`` most recent messages
    (besides the leading system messages, which it keeps too: see
    ``RunConfig.max_context_messages``), so a smaller limit would be exceeded right after
    every compaction.

    Raises:
        ConfigurationError: ``limit`` is not ``None`` nor a whole number of at least
            ``SUMMARY_TAIL_MESSAGES + 1``.
    """
    if limit is None:
        return
    from deskwork.runtime.context import SUMMARY_TAIL_MESSAGES

    least = SUMMARY_TAIL_MESSAGES + 1
    if not is_integer(limit) or limit < least:
        raise ConfigurationError(
            f"max_context_messages must be None or a whole number >= {least} (compaction keeps"
            f" a summary and the {SUMMARY_TAIL_MESSAGES} most recent messages), not {limit!r}"
        )
