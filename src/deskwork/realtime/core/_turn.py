"""The state of one ``process_turn`` call and the aggregated response it builds."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from deskwork.realtime.core._merge import PhaseChanges
from deskwork.realtime.core._records import TriggerType
from deskwork.realtime.core.blackboard import Blackboard
from deskwork.realtime.core.models import AgentContext, AgentInsight, AgentResponse, Event, Fact

__all__ = ["PhaseRecord", "Turn"]


@dataclass(slots=True)
class PhaseRecord:
    """Trace of one phase, returned in ``AgentResponse.debug_info["phases"]``."""

    phase: int
    trigger_events: list[str]
    agents_run: list[str] = field(default_factory=list)
    agents_failed: list[str] = field(default_factory=list)
    agents_skipped: dict[str, str] = field(default_factory=dict)
    events_emitted: list[str] = field(default_factory=list)
    duration_ms: float = 0.0


@dataclass(slots=True)
class Turn:
    """Everything the engine tracks while processing one turn."""

    turn_id: str
    context: AgentContext
    board: Blackboard
    trigger_type: TriggerType
    allowed: frozenset[str] | None
    started: float = field(default_factory=time.perf_counter)
    insights: list[AgentInsight] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)
    variables: dict[str, Any] = field(default_factory=dict)
    queue_pushes: dict[str, list[Any]] = field(default_factory=dict)
    facts: list[Fact] = field(default_factory=list)
    memory: dict[str, dict[str, Any]] = field(default_factory=dict)
    data: dict[str, Any] = field(default_factory=dict)
    agent_debug: dict[str, Any] = field(default_factory=dict)
    phases: list[PhaseRecord] = field(default_factory=list)
    events_seen: list[dict[str, Any]] = field(default_factory=list)
    """The board events (as JSON) this turn dispatched or emitted: the ones it clears."""

    @property
    def session_id(self) -> str:
        """The session of this turn."""
        return self.context.session_id

    @property
    def elapsed(self) -> float:
        """Seconds since the turn started."""
        return time.perf_counter() - self.started

    def allows(self, agent_id: str) -> bool:
        """Whether the host's allow-list admits ``agent_id`` (``None``: everyone)."""
        return self.allowed is None or agent_id in self.allowed

    def meta(self, phase: int, trigger_type: TriggerType) -> dict[str, Any]:
        """Execution metadata for condition rules (``{"meta": ...}``)."""
        return {
            **self.context.trigger_metadata,
            "turn_count": self.context.turn_count,
            "trigger_type": trigger_type.value,
            "phase": phase,
            "session_id": self.context.session_id,
        }

    def add_response(self, agent_id: str, response: AgentResponse) -> None:
        """Collect one agent's insights, events, facts, data and debug info."""
        self.insights.extend(response.insights)
        self.events.extend(response.events)
        self.facts.extend(response.facts)
        if response.data:
            self.data[agent_id] = response.data
        if response.debug_info:
            self.agent_debug[agent_id] = response.debug_info

    def add_changes(self, changes: PhaseChanges) -> None:
        """Collect what a phase wrote to the board."""
        self.variables.update(changes.variables)
        for name, items in changes.queue_pushes.items():
            self.queue_pushes.setdefault(name, []).extend(items)
        for agent_id, updates in changes.memory.items():
            self.memory.setdefault(agent_id, {}).update(updates)

    def result(self) -> AgentResponse:
        """The aggregated response of the turn."""
        return AgentResponse(
            insights=self.insights,
            events=self.events,
            variable_updates=self.variables,
            queue_pushes=self.queue_pushes,
            facts=self.facts,
            memory_updates=self.memory,
            memory_updates_by_agent={k: dict(v) for k, v in self.memory.items()},
            state_updates=dict(self.variables),
            data=self.data,
            debug_info={
                "turn_id": self.turn_id,
                "trigger_type": self.trigger_type.value,
                "duration_ms": round(self.elapsed * 1000, 3),
                "phases": [_phase_dict(p) for p in self.phases],
                "agents": self.agent_debug,
            },
        )


def _phase_dict(record: PhaseRecord) -> dict[str, Any]:
    return {
        "phase": record.phase,
        "trigger_events": record.trigger_events,
        "agents_run": record.agents_run,
        "agents_failed": record.agents_failed,
        "agents_skipped": record.agents_skipped,
        "events_emitted": record.events_emitted,
        "duration_ms": round(record.duration_ms, 3),
    }
