"""One place that tells observers about a turn: callback hooks and deskwork bus events.

Both channels are best effort: a failing callback is logged, a failing bus handler is recorded
by the ``EventBus``; neither breaks the turn.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from deskwork._aio import task_cancelling
from deskwork._logs import get_stdlib_logger
from deskwork.core.event import Event as BusEvent
from deskwork.core.redact import describe_exception, exception_text, redact
from deskwork.event_bus import EventBus
from deskwork.realtime.core._turn import PhaseRecord, Turn
from deskwork.realtime.core.agent import BaseAgent
from deskwork.realtime.core.callbacks import AgentCallbackHandler
from deskwork.realtime.core.events import ENGINE_SOURCE, RealtimeEventType
from deskwork.realtime.core.models import AgentContext, AgentResponse
from deskwork.runtime.config import EventEmitter
from deskwork.utils import new_id, utc_now

__all__ = ["Notifier", "describe_error"]

logger = get_stdlib_logger("deskwork.realtime.engine")


def describe_error(error: BaseException) -> str:
    """``describe_exception``'s ``"TypeName: message"`` (redacted, safe to read), except that
    a timeout without a message says ``"TimeoutError: timed out"``."""
    if isinstance(error, TimeoutError) and not exception_text(error):
        return "TimeoutError: timed out"
    return describe_exception(error)


class Notifier:
    """Sends each step of a turn to the callbacks and, if there is one, the event bus."""

    def __init__(
        self,
        callbacks: Sequence[AgentCallbackHandler],
        bus: EventBus | None,
        emit: EventEmitter | None = None,
        hook_timeout: float | None = None,
    ) -> None:
        """Observe with ``callbacks``; publish through ``emit`` (a desk run's emitter, which
        stores and delivers events) when given, else on ``bus`` (``None``: no bus events).
        A hook call that takes longer than ``hook_timeout`` seconds is abandoned."""
        self.callbacks = list(callbacks)
        self.bus = bus
        self.emit = emit
        self.hook_timeout = hook_timeout

    async def hook(self, name: str, *args: Any) -> None:
        """Await ``callback.<name>(*args)`` on every callback that has the hook, logging
        failures (a call that outlasts ``hook_timeout`` is cancelled and logged: observers
        never hang a turn)."""
        for callback in self.callbacks:
            method = getattr(callback, name, None)
            if method is None:  # a duck-typed handler without this hook
                continue
            try:
                async with asyncio.timeout(self.hook_timeout):
                    await method(*args)
            except TimeoutError:
                logger.warning(
                    "realtime callback %s.%s timed out after %ss; skipped",
                    type(callback).__name__,
                    name,
                    self.hook_timeout,
                )
            except (Exception, asyncio.CancelledError) as exc:
                if isinstance(exc, asyncio.CancelledError) and task_cancelling():
                    raise  # the turn is cancelled, not just something the hook awaited
                logger.warning(
                    "realtime callback %s.%s failed", type(callback).__name__, name, exc_info=True
                )

    def publish(
        self,
        event_type: RealtimeEventType,
        turn: Turn,
        source: str = ENGINE_SOURCE,
        **payload: Any,
    ) -> None:
        """Emit a deskwork event (``run_id`` = turn id, or the desk run's id via ``emit``)."""
        if self.bus is None and self.emit is None:
            return
        body = redact({"session_id": turn.session_id, "turn_id": turn.turn_id, **payload})
        if self.emit is not None:
            self.emit(str(event_type), source, body)
            return
        assert self.bus is not None
        event = BusEvent.model_construct(
            event_id=new_id(),
            type=str(event_type),
            timestamp=utc_now(),
            run_id=turn.turn_id,
            source=source,
            payload=body,
        )
        self.bus.emit(event)

    # ------------------------------------------------------------------ turn

    async def turn_started(self, turn: Turn) -> None:
        """A turn begins."""
        context = turn.context
        self.publish(
            RealtimeEventType.TURN_STARTED,
            turn,
            trigger_type=turn.trigger_type.value,
            trigger_metadata=context.trigger_metadata,
            turn_count=context.turn_count,
            allowed_agent_ids=None if turn.allowed is None else sorted(turn.allowed),
        )
        await self.hook("on_turn_start", context)

    async def phase_started(self, turn: Turn, record: PhaseRecord, agents: list[BaseAgent]) -> None:
        """A phase with at least one agent begins."""
        self.publish(
            RealtimeEventType.PHASE_STARTED,
            turn,
            phase=record.phase,
            agents=[a.config.id for a in agents],
            trigger_events=record.trigger_events,
        )
        await self.hook("on_phase_start", record.phase, [a.config.name for a in agents])

    async def phase_completed(self, turn: Turn, record: PhaseRecord) -> None:
        """A phase ended."""
        self.publish(
            RealtimeEventType.PHASE_COMPLETED,
            turn,
            phase=record.phase,
            events=record.events_emitted,
        )
        await self.hook("on_phase_end", record.phase, sorted(set(record.events_emitted)))

    async def turn_completed(self, turn: Turn, response: AgentResponse) -> None:
        """A turn ended."""
        self.publish(
            RealtimeEventType.TURN_COMPLETED,
            turn,
            duration_ms=round(turn.elapsed * 1000, 3),
            phases=len(turn.phases),
            insights=len(response.insights),
            events=[e.name for e in response.events],
            agents_run=[a for p in turn.phases for a in p.agents_run],
            agents_failed=[a for p in turn.phases for a in p.agents_failed],
        )
        await self.hook("on_turn_end", response, turn.elapsed)

    async def turn_failed(self, turn: Turn, error: BaseException) -> None:
        """A turn was cancelled or raised: close it for observers (the error is re-raised
        by the engine). A bus or emitter that fails here is logged, not raised over it."""
        cancelled = isinstance(error, asyncio.CancelledError)
        try:
            self.publish(
                RealtimeEventType.TURN_FAILED,
                turn,
                duration_ms=round(turn.elapsed * 1000, 3),
                phases=len(turn.phases),
                agents_run=[a for p in turn.phases for a in p.agents_run],
                agents_failed=[a for p in turn.phases for a in p.agents_failed],
                cancelled=cancelled,
                error="cancelled" if cancelled else describe_error(error),
            )
        except Exception:
            logger.warning("realtime turn %s: its failure was not published", turn.turn_id)
        await self.hook("on_turn_error", error, turn.elapsed)

    # ----------------------------------------------------------------- agents

    async def agent_started(
        self, turn: Turn, phase: int, agent: BaseAgent, context: AgentContext
    ) -> None:
        """An agent starts."""
        agent_id = agent.config.id
        self.publish(
            RealtimeEventType.AGENT_STARTED,
            turn,
            agent_id,
            phase=phase,
            agent_id=agent_id,
            agent_name=agent.config.name,
        )
        await self.hook("on_agent_start", agent.config.name, context)

    async def agent_completed(
        self, turn: Turn, phase: int, agent: BaseAgent, response: AgentResponse, duration: float
    ) -> None:
        """An agent returned a usable response."""
        agent_id = agent.config.id
        self.publish(
            RealtimeEventType.AGENT_COMPLETED,
            turn,
            agent_id,
            phase=phase,
            agent_id=agent_id,
            duration_ms=round(duration * 1000, 3),
            insights=len(response.insights),
            events=[e.name for e in response.events],
            variable_updates=sorted(response.variable_updates),
        )
        await self.hook("on_agent_finish", agent.config.name, response, duration)

    async def agent_failed(
        self, turn: Turn, phase: int, agent: BaseAgent, error: BaseException, duration: float
    ) -> None:
        """An agent raised, timed out or returned unusable output."""
        agent_id = agent.config.id
        logger.warning("realtime agent %r failed: %s", agent_id, describe_error(error))
        self.publish(
            RealtimeEventType.AGENT_FAILED,
            turn,
            agent_id,
            phase=phase,
            agent_id=agent_id,
            duration_ms=round(duration * 1000, 3),
            error=describe_error(error),
        )
        await self.hook("on_agent_error", agent.config.name, error)
        await self.hook("on_agent_finish", agent.config.name, None, duration)

    async def agent_skipped(self, turn: Turn, phase: int, agent: BaseAgent, reason: str) -> None:
        """A candidate agent did not run."""
        agent_id = agent.config.id
        self.publish(
            RealtimeEventType.AGENT_SKIPPED,
            turn,
            agent_id,
            phase=phase,
            agent_id=agent_id,
            reason=reason,
        )
        await self.hook("on_agent_skipped", agent.config.name, reason)
