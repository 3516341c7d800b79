"""``StructuredLogTracer``: JSON log lines for every step of a turn, plus a per-turn trace.

Each hook writes one record through :func:`deskwork.logging.get_logger` (one JSON object
per line, secrets redacted), with ``message`` set to the step (``realtime.turn.started``,
``realtime.agent.completed`` ...) and the turn id. At the end of a turn the whole trace
(phases, agents run / failed / skipped with durations, events, response counts) is logged
as ``realtime.turn.trace`` and kept in :attr:`StructuredLogTracer.traces`.

Example:
    ```python
    tracer = StructuredLogTracer()
    engine = AgentEngine(adapter=adapter, callbacks=[tracer])
    await engine.process_turn(context)
    tracer.last_trace["phases"][0]["agents_run"]
    ```
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from typing import TYPE_CHECKING, Any

from deskwork.core.redact import redact
from deskwork.exceptions import ConfigurationError
from deskwork.logging import StructuredLogger, get_logger
from deskwork.realtime.core._notify import describe_error
from deskwork.realtime.core.callbacks import AgentCallbackHandler, current_turn_id
from deskwork.utils import is_integer, utc_now

if TYPE_CHECKING:
    from deskwork.realtime.core.models import AgentContext, AgentResponse

__all__ = ["StructuredLogTracer"]

_NO_TURN = "-"


def _board_summary(context: AgentContext) -> dict[str, Any]:
    board = context.blackboard
    if board is None:
        return {}
    return {
        "variables": sorted(board.variables),
        "queues": {name: len(items) for name, items in board.queues.items()},
        "facts_count": len(board.facts),
        "events": [event.name for event in board.events],
    }


class StructuredLogTracer(AgentCallbackHandler):
    """Logs each turn step as JSON and keeps the last ``max_traces`` turn traces."""

    def __init__(
        self,
        logger: StructuredLogger | None = None,
        *,
        name: str = "deskwork.realtime.trace",
        level: int = logging.INFO,
        max_traces: int = 100,
    ) -> None:
        """Create a tracer.

        Args:
            logger: Where to log (default: ``get_logger(name, level)``).
            name: Logger name when ``logger`` is not given.
            level: Logger level when ``logger`` is not given.
            max_traces: How many finished turn traces to keep in memory.

        Raises:
            ConfigurationError: ``logger`` is not a ``StructuredLogger`` (``get_logger``'s)
                or ``max_traces`` is not an integer >= 0.
        """
        if logger is not None and not isinstance(logger, StructuredLogger):
            raise ConfigurationError(
                "StructuredLogTracer: logger must be a StructuredLogger (from "
                f"deskwork.logging.get_logger), got {type(logger).__name__}"
            )
        if not is_integer(max_traces) or max_traces < 0:
            raise ConfigurationError(
                f"StructuredLogTracer: max_traces must be an integer >= 0, got {max_traces!r}"
            )
        self.logger = logger or get_logger(name, level)
        self.traces: deque[dict[str, Any]] = deque(maxlen=max_traces)
        """Finished turn traces, oldest first."""
        self._active: dict[str, dict[str, Any]] = {}

    @property
    def last_trace(self) -> dict[str, Any] | None:
        """The trace of the most recently finished turn."""
        return self.traces[-1] if self.traces else None

    def _trace(self) -> tuple[str, dict[str, Any]]:
        turn_id = current_turn_id() or _NO_TURN
        return turn_id, self._active.setdefault(turn_id, {"turn_id": turn_id, "phases": []})

    def _phase(self, trace: dict[str, Any]) -> dict[str, Any]:
        if not trace["phases"]:
            trace["phases"].append(_new_phase(0, []))
        phase: dict[str, Any] = trace["phases"][-1]
        return phase

    async def on_turn_start(self, context: AgentContext) -> None:
        """Start a trace and log ``realtime.turn.started``."""
        turn_id, trace = self._trace()
        trace.update(
            timestamp=utc_now().isoformat(),
            session_id=context.session_id,
            trigger={"type": context.trigger_type.value, "metadata": context.trigger_metadata},
            context={
                "user_context": context.user_context,
                "language_directive": context.language_directive,
                "transcript_segments": len(context.recent_segments),
                "rag_docs_count": len(context.rag_docs),
            },
            blackboard_initial=_board_summary(context),
            agents_skipped=[],
        )
        self.logger.info(
            "realtime.turn.started",
            turn_id=turn_id,
            session_id=context.session_id,
            trigger_type=context.trigger_type.value,
            turn_count=context.turn_count,
        )

    async def on_phase_start(self, phase: int, agents: list[str]) -> None:
        """Log ``realtime.phase.started``."""
        turn_id, trace = self._trace()
        trace["phases"].append(_new_phase(phase, agents))
        self.logger.info("realtime.phase.started", turn_id=turn_id, phase=phase, agents=agents)

    async def on_agent_start(self, agent_name: str, context: AgentContext) -> None:
        """Log ``realtime.agent.started`` (debug level)."""
        self.logger.debug(
            "realtime.agent.started",
            turn_id=self._trace()[0],
            agent=agent_name,
            phase=context.phase,
        )

    async def on_agent_finish(
        self, agent_name: str, response: AgentResponse | None, duration: float
    ) -> None:
        """Record and log ``realtime.agent.completed`` (failures are logged by the error hook)."""
        if response is None:
            return
        turn_id, trace = self._trace()
        entry = {
            "agent": agent_name,
            "duration_ms": round(duration * 1000, 3),
            "insights": len(response.insights),
            "events_emitted": [{"name": e.name, "payload": e.payload} for e in response.events],
            "variable_updates": response.variable_updates,
            "queue_pushes": response.queue_pushes,
        }
        self._phase(trace)["agents_run"].append(entry)
        self.logger.info("realtime.agent.completed", turn_id=turn_id, **entry)

    async def on_agent_skipped(self, agent_name: str, reason: str) -> None:
        """Record and log ``realtime.agent.skipped``."""
        turn_id, trace = self._trace()
        trace.setdefault("agents_skipped", []).append({"agent": agent_name, "reason": reason})
        self.logger.info("realtime.agent.skipped", turn_id=turn_id, agent=agent_name, reason=reason)

    async def on_agent_error(self, agent_name: str, error: BaseException) -> None:
        """Record and log ``realtime.agent.failed`` (warning level)."""
        turn_id, trace = self._trace()
        message = describe_error(error)  # redacted: the trace is kept and handed out
        self._phase(trace)["agents_failed"].append({"agent": agent_name, "error": message})
        self.logger.warning(
            "realtime.agent.failed", turn_id=turn_id, agent=agent_name, error=message
        )

    async def on_phase_end(self, phase: int, events_emitted: list[str]) -> None:
        """Log ``realtime.phase.completed``."""
        turn_id, trace = self._trace()
        self._phase(trace)["events_collected"] = events_emitted
        self.logger.info(
            "realtime.phase.completed", turn_id=turn_id, phase=phase, events=events_emitted
        )

    async def on_turn_end(self, response: AgentResponse, duration: float) -> None:
        """Finish the trace, keep it, and log ``realtime.turn.completed`` with it."""
        turn_id, trace = self._trace()
        self._active.pop(turn_id, None)
        trace["duration_ms"] = round(duration * 1000, 3)
        trace["response"] = {
            "insights_count": len(response.insights),
            "variable_updates_count": len(response.variable_updates),
            "queue_pushes_count": len(response.queue_pushes),
            "events_emitted_total": len(response.events),
        }
        self.logger.info("realtime.turn.completed", trace=self._keep(trace))

    async def on_turn_error(self, error: BaseException, duration: float) -> None:
        """Finish the trace of a cancelled or failed turn, keep it, and log
        ``realtime.turn.failed`` (warning level) with it."""
        turn_id, trace = self._trace()
        self._active.pop(turn_id, None)
        trace["duration_ms"] = round(duration * 1000, 3)
        cancelled = isinstance(error, asyncio.CancelledError)
        trace["error"] = "cancelled" if cancelled else describe_error(error)
        self.logger.warning("realtime.turn.failed", trace=self._keep(trace))

    def _keep(self, trace: dict[str, Any]) -> dict[str, Any]:
        """Keep a finished trace, secrets redacted (it is handed out: ``traces``), and return
        it (with ``max_traces=0`` nothing is kept, but the turn is still logged)."""
        kept: dict[str, Any] = redact(trace)
        self.traces.append(kept)
        return kept


def _new_phase(phase: int, agents: list[str]) -> dict[str, Any]:
    return {
        "phase": phase,
        "agents_eligible": agents,
        "agents_run": [],
        "agents_failed": [],
        "events_collected": [],
    }
