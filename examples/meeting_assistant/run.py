"""A realtime meeting assistant: agents listen to a meeting and fire on what happens.

    python examples/meeting_assistant/run.py                            # offline
    python examples/meeting_assistant/run.py --model openai/gpt-4o-mini  # a real provider

A recorded weekly sync is replayed line by line into a ``deskwork.realtime`` engine:

- every line is a TURN_BASED turn: the action item tracker records commitments (a fact, a
  queue push and an ``action_item_added`` event);
- the event wakes the due date checker in phase 2, which warns about items without a date;
- a keyword ("we agreed", "let's go with", "decided") is a KEYWORD turn for the decision logger;
- a pause of 10 s or more is a SILENCE turn for the facilitator;
- every 60 s of meeting time is an INTERVAL turn for the recap writer (and once at the end).

Each turn is a stored desk run (``examples/meeting_assistant/.deskwork/``); the board is
saved in the session store under the meeting's id at the end.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

from meeting_agents import AGENT_CONFIGS  # noqa: E402 - after the path above
from meeting_script import scripted_model  # noqa: E402
from meeting_transcript import TRANSCRIPT  # noqa: E402

from deskwork import Desk, Job  # noqa: E402
from deskwork.realtime import (  # noqa: E402
    AgentContext,
    AgentEngine,
    AgentResponse,
    Blackboard,
    DynamicAgent,
    TriggerType,
)
from deskwork.realtime.core.models import TranscriptSegment  # noqa: E402

MEETING_ID = "weekly-sync"
SILENCE_AFTER = 10.0
INTERVAL = 60.0


@dataclass
class MeetingClock:
    """Meeting time (seconds since the start): the engine's clock for intervals."""

    now: float = 0.0

    def __call__(self) -> float:
        return self.now


@dataclass
class MeetingResult:
    """What the assistant noticed (the test reads it)."""

    insights: list[tuple[float, str, str, str]] = field(default_factory=list)
    """``(meeting time, agent id, insight type, content)`` in order."""
    run_ids: list[str] = field(default_factory=list)
    triggers: list[str] = field(default_factory=list)
    board: Blackboard = field(default_factory=Blackboard)

    def by_agent(self, agent_id: str) -> list[str]:
        """The contents of one agent's insights."""
        return [content for _, agent, _, content in self.insights if agent == agent_id]


class _Meeting:
    """The host: turns transcript lines into engine turns, each a desk run."""

    def __init__(self, desk: Desk, engine: AgentEngine, clock: MeetingClock) -> None:
        self.desk, self.engine, self.clock = desk, engine, clock
        self.segments: list[TranscriptSegment] = []
        self.result = MeetingResult()

    async def turn(
        self, trigger: TriggerType, line: str, *, agents: list[str] | None = None, **metadata: Any
    ) -> None:
        context = AgentContext(
            session_id=MEETING_ID,
            recent_segments=list(self.segments),
            blackboard=self.result.board,
            turn_count=len(self.segments),
        )
        runner = self.engine.turn(
            context, trigger_type=trigger, trigger_metadata=metadata, allowed_agent_ids=agents
        )
        report = await self.desk.arun(runner, Job(input=line, metadata={"trigger": trigger.value}))
        self.result.run_ids.append(report.run_id)
        self.result.triggers.append(trigger.value)
        if report.status != "completed" or not isinstance(report.data, AgentResponse):
            print(f"  ! {trigger.value} turn {report.status}: {'; '.join(report.errors)}")
            return
        for insight in report.data.insights:
            self.result.insights.append(
                (self.clock.now, insight.agent_id, insight.type.value, insight.content)
            )
            print(f"    [{insight.type.value}] {insight.agent_name}: {insight.content}")

    async def hear(self, at: float, speaker: str, text: str) -> None:
        previous = self.segments[-1].timestamp if self.segments else 0.0
        if at - previous >= SILENCE_AFTER:
            self.clock.now = previous + SILENCE_AFTER
            print(f"  … {at - previous:.0f} s of silence")
            await self.turn(TriggerType.SILENCE, "(silence)", silence_duration=at - previous)
        if int(at // INTERVAL) > int(previous // INTERVAL):
            self.clock.now = at
            print(f"  ⏱ {int(at // INTERVAL) * INTERVAL:.0f} s interval")
            await self.turn(TriggerType.INTERVAL, "(interval)")
        self.clock.now = at
        self.segments.append(TranscriptSegment(speaker=speaker, timestamp=at, text=text))
        print(f"{at:5.0f}s {speaker}: {text}")
        await self.turn(TriggerType.TURN_BASED, text)
        matches = self.engine.check_keyword_triggers(text)
        if matches:
            ids = [agent.config.id for agent, _ in matches]
            await self.turn(TriggerType.KEYWORD, text, agents=ids, keyword=matches[0][1], text=text)


def build_engine(desk: Desk, model: str | None, clock: MeetingClock) -> AgentEngine:
    """The engine with the meeting's agents (offline: the scripted model plays them)."""
    adapter = None if model else scripted_model()
    engine = AgentEngine(adapter=adapter, desk=desk, clock=clock, strict_reasoning_config=False)
    for row in AGENT_CONFIGS:
        config = dict(row)
        if model:
            config["model_config"] = {**config.get("model_config", {}), "model": model}
        engine.register_agent(DynamicAgent(config))
    return engine


async def run_meeting(
    *, model: str | None = None, storage_dir: Path | None = None
) -> MeetingResult:
    """Replay the transcript through the engine; returns what the agents noticed."""
    storage_dir = storage_dir or HERE / ".deskwork"
    desk = Desk(model=model or "scripted/meeting", storage_dir=storage_dir)
    clock = MeetingClock()
    meeting = _Meeting(desk, build_engine(desk, model, clock), clock)
    try:
        for at, speaker, text in TRANSCRIPT:
            await meeting.hear(at, speaker, text)
        print("  (end of meeting: final recap)")
        await meeting.turn(TriggerType.FORCE, "(end of meeting)", agents=["recap"])
        meeting.result.board.save_to(desk.session_store, MEETING_ID)
    finally:
        desk.close()
    return meeting.result


def _print_minutes(result: MeetingResult) -> None:
    board = result.board
    print("\nminutes")
    print(f"  summary: {board.get_var('summary')}")
    for fact in board.get_facts_by_type("decision"):
        print(f"  decision: {fact.key}")
    for fact in board.get_facts_by_type("action_item"):
        value = fact.value or {}
        print(
            f"  action: {value.get('owner')} — {value.get('task')} (due {value.get('due') or '?'})"
        )
    print(
        f"\n{len(result.run_ids)} turns stored as runs — deskwork runs --storage-dir"
        " examples/meeting_assistant/.deskwork"
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Command line entry point."""
    parser = argparse.ArgumentParser(description="deskwork realtime meeting assistant")
    parser.add_argument("--model", help="PROVIDER/MODEL for LiteLLM (needs its API key)")
    parser.add_argument("--storage-dir", type=Path, help="run data (default: .deskwork here)")
    args = parser.parse_args(argv)
    where = f"model {args.model}" if args.model else "an offline scripted model"
    print(f"deskwork meeting assistant ({where})\n")
    result = asyncio.run(run_meeting(model=args.model, storage_dir=args.storage_dir))
    _print_minutes(result)
    return 0 if result.insights else 1


if __name__ == "__main__":
    raise SystemExit(main())
