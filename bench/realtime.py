"""Benchmark of the realtime engine: 1,000 turns through an engine with 20 agents.

Scenarios (each run 3 times; the table shows medians):

- ``custom``: 20 ``BaseAgent`` subclasses without a model (pure engine overhead).
- ``dynamic``: 20 ``DynamicAgent`` over a ``ScriptedAdapter`` (prompt rendering in the
  Jinja2 sandbox, output parsing, merging), with 0 ms and 1 ms model latency per call.

In every scenario one agent emits an event each turn and two agents subscribe to it, so
every turn has two phases. "Overhead per agent evaluation" is
``(turn time - model wait x phases) / evaluations per turn``: the engine's cost of one agent
run, model time excluded (agents of a phase run concurrently, so a phase waits for the
latency once). The model wait is measured (an ``asyncio.sleep(0.001)`` takes a little more
than 1 ms), so timer overshoot is not counted as engine overhead.

Run: ``python bench/realtime.py`` (``--turns N`` for a quicker run).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from dataclasses import dataclass
from typing import Any

from deskwork.realtime import (
    AgentConfig,
    AgentContext,
    AgentEngine,
    AgentResponse,
    BaseAgent,
    Blackboard,
    Event,
    TranscriptSegment,
    TriggerType,
)
from deskwork.realtime.library import DynamicAgent
from deskwork.testing import ScriptedAdapter

AGENTS = 20
SUBSCRIBERS = 2
RUNS = 3


async def measured_wait(latency: float, samples: int = 200) -> float:
    """Mean real duration of ``asyncio.sleep(latency)`` on this machine (0 for 0)."""
    if not latency:
        return 0.0
    started = time.perf_counter()
    for _ in range(samples):
        await asyncio.sleep(latency)
    return (time.perf_counter() - started) / samples


@dataclass
class Result:
    """One run of one scenario."""

    seconds: float
    turns: int
    evaluations: int
    phases: int
    latency: float
    """Measured model wait per phase (seconds)."""

    @property
    def turns_per_second(self) -> float:
        return self.turns / self.seconds

    @property
    def overhead_us(self) -> float:
        model_time = self.latency * self.phases
        return (self.seconds - model_time) / self.evaluations * 1e6


class CustomAgent(BaseAgent):
    """A model-free agent: one insight every 10 turns, a variable and a memory update."""

    def __init__(self, index: int, *, emits: bool, subscriber: bool) -> None:
        modes = [TriggerType.EVENT] if subscriber else [TriggerType.TURN_BASED]
        super().__init__(
            AgentConfig(
                name=f"Custom {index}",
                cooldown=0,
                priority=index % 3,
                trigger_types=modes,
                subscribed_events=["question_detected"] if subscriber else [],
                trigger_conditions={"rules": [{"meta": "turn_count", "op": "gte", "value": 0}]},
            )
        )
        self.emits = emits

    async def evaluate(self, context: AgentContext) -> AgentResponse:
        response = AgentResponse(
            variable_updates={f"score_{self.config.id}": context.turn_count},
            memory_updates={"last_turn": context.turn_count},
        )
        if context.turn_count % 10 == 0:
            response.insights.append(self.create_insight("Keep going."))
        if self.emits:
            response.events.append(Event(name="question_detected", payload={"q": "price?"}))
        return response


def _reply(index: int, emits: bool) -> str:
    body: dict[str, Any] = {
        "has_insight": index % 5 == 0,
        "content": "Focus on value.",
        "type": "suggestion",
        "variable_updates": {f"score_{index}": 1},
        "memory_updates": {"seen": True},
    }
    if emits:
        body["events"] = [{"name": "question_detected", "payload": {"q": "price?"}}]
    return json.dumps(body)


def dynamic_agent(index: int, *, emits: bool, subscriber: bool, latency: float) -> DynamicAgent:
    """A DynamicAgent with its own scripted model (so replies can differ per agent)."""
    trigger: dict[str, Any] = {"mode": "turn_based", "cooldown": 0}
    if subscriber:
        trigger = {"mode": "event", "subscribed_events": ["question_detected"], "cooldown": 0}
    config = {
        "name": f"Dynamic {index}",
        "trigger_config": trigger,
        "priority": index % 3,
        "trigger_conditions": {"rules": [{"meta": "turn_count", "op": "gte", "value": 0}]},
        "model_config": {"model": "openai/bench", "context_turns": 6},
        "text": (
            "You coach a seller. Phase: {{ blackboard.variables.phase }}. "
            "{% for fact in blackboard.facts %}{{ fact.type }}={{ fact.value }} {% endfor %}"
            "Seen before: {{ memory.seen }}. {{ user_context }}"
        ),
    }
    adapter = ScriptedAdapter(default=_reply(index, emits), latency=latency)
    return DynamicAgent(config, adapter=adapter)


def build_engine(kind: str, latency: float) -> AgentEngine:
    """An engine with AGENTS agents: one emitter, SUBSCRIBERS event agents."""
    engine = AgentEngine(adapter=ScriptedAdapter(), agent_timeout=None)
    for index in range(AGENTS):
        emits, subscriber = index == 0, index >= AGENTS - SUBSCRIBERS
        if kind == "custom":
            agent: BaseAgent = CustomAgent(index, emits=emits, subscriber=subscriber)
        else:
            agent = dynamic_agent(index, emits=emits, subscriber=subscriber, latency=latency)
        engine.register_agent(agent)
    return engine


async def run_once(kind: str, latency: float, turns: int) -> Result:
    """Process ``turns`` turns of one session and time them."""
    engine = build_engine(kind, latency)
    board = Blackboard(variables={"phase": "discovery"})
    segments = [TranscriptSegment(speaker="CUSTOMER", text=f"line {i}") for i in range(10)]
    evaluations = phases = 0
    started = time.perf_counter()
    for turn in range(turns):
        context = AgentContext(
            session_id="bench",
            recent_segments=segments,
            blackboard=board,
            turn_count=turn,
            user_context="Sales Director",
        )
        response = await engine.process_turn(context)
        for phase in response.debug_info["phases"]:
            evaluations += len(phase["agents_run"]) + len(phase["agents_failed"])
            phases += bool(phase["agents_run"] or phase["agents_failed"])
        if any(i.type == "error" for i in response.insights):
            raise RuntimeError(f"unexpected agent failure: {response.insights}")
    elapsed = time.perf_counter() - started
    wait = await measured_wait(latency) if kind == "dynamic" else 0.0
    return Result(elapsed, turns, evaluations, phases, wait)


def main(argv: list[str] | None = None) -> None:
    """Run every scenario ``RUNS`` times and print a markdown table of medians."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=1000)
    args = parser.parse_args(argv)
    scenarios = [("custom", 0.0), ("dynamic", 0.0), ("dynamic", 0.001)]
    rows = []
    for kind, latency in scenarios:
        results = [asyncio.run(run_once(kind, latency, args.turns)) for _ in range(RUNS)]
        rows.append((kind, latency, results))
        print(f"done: {kind} latency={latency * 1000:g} ms", file=sys.stderr)
    print(f"\n{args.turns} turns, {AGENTS} agents (2 phases per turn), median of {RUNS} runs\n")
    print(
        "| agents | model latency | measured wait/phase | turns/s | ms/turn "
        "| evaluations/turn | overhead/evaluation |"
    )
    print("|---|---|---|---|---|---|---|")
    for kind, latency, results in rows:
        tps = statistics.median(r.turns_per_second for r in results)
        overhead = statistics.median(r.overhead_us for r in results)
        wait = statistics.median(r.latency for r in results)
        per_turn = results[0].evaluations / results[0].turns
        print(
            f"| {kind} | {latency * 1000:g} ms | {wait * 1000:.2f} ms | {tps:,.0f} | "
            f"{1000 / tps:.2f} | {per_turn:.0f} | {overhead:,.0f} µs |"
        )


if __name__ == "__main__":
    main()
