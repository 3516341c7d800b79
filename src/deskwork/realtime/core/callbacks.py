"""Observing the engine: ``AgentCallbackHandler`` and the current-turn id.

Every hook is an async no-op; override the ones you need. A hook that raises, or that
outlasts the engine's ``agent_timeout``, is logged and ignored (cancelled), so observers
never break or hang a turn. During a turn, :func:`current_turn_id` returns the
id of the turn being processed (also inside agent tasks), which lets one handler follow
several concurrent turns.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from deskwork.realtime.core.models import AgentContext, AgentResponse

__all__ = ["AgentCallbackHandler", "current_turn_id", "turn_scope"]

_TURN_ID: ContextVar[str | None] = ContextVar("deskwork_realtime_turn_id", default=None)


def current_turn_id() -> str | None:
    """Return the id of the turn being processed in this task, or ``None`` outside a turn."""
    return _TURN_ID.get()


class AgentCallbackHandler:
    """Lifecycle hooks of ``AgentEngine.process_turn`` (all optional)."""

    async def on_turn_start(self, context: AgentContext) -> None:
        """A turn begins."""

    async def on_phase_start(self, phase: int, agents: list[str]) -> None:
        """A phase begins; ``agents`` are the names of the agents that will run."""

    async def on_agent_start(self, agent_name: str, context: AgentContext) -> None:
        """An agent starts evaluating."""

    async def on_agent_finish(
        self, agent_name: str, response: AgentResponse | None, duration: float
    ) -> None:
        """An agent finished (``duration`` in seconds; ``response`` is ``None`` on failure)."""

    async def on_agent_skipped(self, agent_name: str, reason: str) -> None:
        """An agent matched the trigger but did not run (cooldown, conditions, ...)."""

    async def on_agent_error(self, agent_name: str, error: BaseException) -> None:
        """An agent raised, timed out or returned unusable output."""

    async def on_phase_end(self, phase: int, events_emitted: list[str]) -> None:
        """A phase ended; ``events_emitted`` are the names of the events it produced."""

    async def on_turn_end(self, response: AgentResponse, duration: float) -> None:
        """A turn ended with the aggregated ``response`` (``duration`` in seconds)."""

    async def on_turn_error(self, error: BaseException, duration: float) -> None:
        """A turn ended without a response: it was cancelled (``asyncio.CancelledError``) or
        raised ``error``. Either this or ``on_turn_end`` closes every started turn."""


@contextmanager
def turn_scope(turn_id: str) -> Iterator[None]:
    """Make :func:`current_turn_id` return ``turn_id`` inside the block (used by the engine)."""
    token = _TURN_ID.set(turn_id)
    try:
        yield
    finally:
        _TURN_ID.reset(token)
