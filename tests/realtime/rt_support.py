"""Shared helpers for the realtime tests (imported as a plain module, not collected)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Sequence
from typing import Any

from deskwork.realtime import (
    AgentCallbackHandler,
    AgentConfig,
    AgentContext,
    AgentResponse,
    BaseAgent,
    Blackboard,
    TranscriptSegment,
    TriggerType,
)


class FakeClock:
    """A manual clock for cooldowns and intervals."""

    def __init__(self, start: float = 1000.0) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


Responder = AgentResponse | Callable[[AgentContext], AgentResponse] | None


class ScriptAgent(BaseAgent):
    """A custom agent whose behaviour is set by the test."""

    def __init__(
        self,
        agent_id: str,
        *,
        response: Responder = None,
        delay: float = 0.0,
        gate: asyncio.Barrier | None = None,
        error: BaseException | None = None,
        priority: int = 0,
        cooldown: float = 0.0,
        trigger_types: Sequence[TriggerType] = (TriggerType.TURN_BASED,),
        **config: Any,
    ) -> None:
        super().__init__(
            AgentConfig(
                name=agent_id.replace("_", " ").title(),
                id=agent_id,
                priority=priority,
                cooldown=cooldown,
                trigger_types=list(trigger_types),
                **config,
            )
        )
        self.response = response
        self.delay = delay
        self.gate = gate  # awaited first: agents sharing one prove they run at once
        self.error = error
        self.calls: list[AgentContext] = []

    async def evaluate(self, context: AgentContext) -> AgentResponse | None:
        self.calls.append(context)
        if self.gate is not None:
            await self.gate.wait()
        if self.delay:
            await asyncio.sleep(self.delay)
        if self.error is not None:
            raise self.error
        if callable(self.response):
            return self.response(context)
        if self.response is None:
            return AgentResponse()
        return self.response.model_copy(deep=True)


class Recorder(AgentCallbackHandler):
    """Records every callback as ``(hook, details)``."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, Any]] = []

    def names(self, hook: str) -> list[Any]:
        return [details for name, details in self.calls if name == hook]

    async def on_turn_start(self, context: AgentContext) -> None:
        self.calls.append(("turn_start", context.session_id))

    async def on_phase_start(self, phase: int, agents: list[str]) -> None:
        self.calls.append(("phase_start", (phase, agents)))

    async def on_agent_start(self, agent_name: str, context: AgentContext) -> None:
        self.calls.append(("agent_start", agent_name))

    async def on_agent_finish(
        self, agent_name: str, response: AgentResponse | None, duration: float
    ) -> None:
        self.calls.append(("agent_finish", (agent_name, response is not None)))

    async def on_agent_skipped(self, agent_name: str, reason: str) -> None:
        self.calls.append(("agent_skipped", (agent_name, reason)))

    async def on_agent_error(self, agent_name: str, error: BaseException) -> None:
        self.calls.append(("agent_error", (agent_name, type(error).__name__)))

    async def on_phase_end(self, phase: int, events_emitted: list[str]) -> None:
        self.calls.append(("phase_end", (phase, events_emitted)))

    async def on_turn_end(self, response: AgentResponse, duration: float) -> None:
        self.calls.append(("turn_end", len(response.insights)))


def make_context(
    text: str = "hello there",
    *,
    session_id: str = "session-1",
    board: Blackboard | None = None,
    segments: Sequence[tuple[str, str]] | None = None,
    **fields: Any,
) -> AgentContext:
    """A context with one (or the given) transcript segments and a fresh board."""
    pairs = segments if segments is not None else [("CUSTOMER", text)]
    return AgentContext(
        session_id=session_id,
        recent_segments=[
            TranscriptSegment(speaker=speaker, text=said, timestamp=float(i))
            for i, (speaker, said) in enumerate(pairs)
        ],
        blackboard=board if board is not None else Blackboard(),
        **fields,
    )


def reply_json(**fields: Any) -> str:
    """A model reply: ``fields`` as a JSON object."""
    return json.dumps(fields)


def dynamic_config(name: str = "Coach", **overrides: Any) -> dict[str, Any]:
    """A minimal DynamicAgent configuration with cooldown 0."""
    config: dict[str, Any] = {
        "name": name,
        "trigger_config": {"mode": "turn_based", "cooldown": 0},
        "text": "You are {{ agent_name }}.",
    }
    config.update(overrides)
    return config
