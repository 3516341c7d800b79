"""Deskwork event types emitted by the realtime engine (all under ``realtime.``).

The engine publishes a :class:`deskwork.core.event.Event` for each step of a turn on the
``EventBus`` it was given (``AgentEngine(event_bus=...)`` or ``AgentEngine(desk=...)``). The
event's ``run_id`` is the turn id, ``source`` the agent id (or ``"realtime.engine"``), and
the payload always carries ``session_id`` and ``turn_id``.
"""

from __future__ import annotations

from enum import StrEnum

__all__ = ["ENGINE_SOURCE", "RealtimeEventType"]

ENGINE_SOURCE = "realtime.engine"
"""``source`` of events about the turn as a whole."""


class RealtimeEventType(StrEnum):
    """Event types of the realtime engine. Members compare equal to their string values."""

    TURN_STARTED = "realtime.turn.started"
    """Payload: trigger_type, trigger_metadata, turn_count, allowed_agent_ids."""
    PHASE_STARTED = "realtime.phase.started"
    """Payload: phase, agents (ids), trigger_events (phase 2+)."""
    AGENT_STARTED = "realtime.agent.started"
    """Payload: phase, agent_id, agent_name."""
    AGENT_COMPLETED = "realtime.agent.completed"
    """Payload: phase, agent_id, duration_ms, insights, events, variable_updates (keys)."""
    AGENT_FAILED = "realtime.agent.failed"
    """Payload: phase, agent_id, duration_ms, error (type and message)."""
    AGENT_SKIPPED = "realtime.agent.skipped"
    """Payload: phase, agent_id, reason (cooldown, conditions_not_met, ...)."""
    PHASE_COMPLETED = "realtime.phase.completed"
    """Payload: phase, events (names emitted in the phase)."""
    TURN_COMPLETED = "realtime.turn.completed"
    """Payload: duration_ms, phases, insights, events, agents_run, agents_failed."""
    TURN_FAILED = "realtime.turn.failed"
    """The turn was cancelled or raised, so no response came out. Payload: duration_ms,
    phases, agents_run, agents_failed, cancelled (bool), error (type and message, redacted)."""
