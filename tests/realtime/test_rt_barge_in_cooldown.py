"""An agent whose turn is cancelled by a barge-in (the user speaks again before it answered)
does not wait out its cooldown: it answers the user's next utterance. A run that completes,
fails or times out still starts the cooldown."""

from __future__ import annotations

import asyncio

import pytest
from rt_support import FakeClock, Recorder, ScriptAgent, make_context

from deskwork.realtime import AgentContext, AgentEngine, AgentResponse
from deskwork.testing import ScriptedAdapter


class Answers(ScriptAgent):
    """Answers at once, except while ``hold`` is set: then it waits (a slow model call)."""

    def __init__(self, **config: object) -> None:
        super().__init__("coach", cooldown=15.0, **config)  # type: ignore[arg-type]
        self.hold = False
        self.started = asyncio.Event()

    async def evaluate(self, context: AgentContext) -> AgentResponse | None:
        self.calls.append(context)
        self.started.set()
        if self.hold:
            await asyncio.sleep(60)
        return AgentResponse(insights=[self.create_insight("say it")])


def _engine(agent: ScriptAgent, clock: FakeClock) -> tuple[AgentEngine, Recorder]:
    recorder = Recorder()
    engine = AgentEngine(adapter=ScriptedAdapter(), callbacks=[recorder], clock=clock)
    engine.register_agent(agent)
    return engine, recorder


async def _barge_in(engine: AgentEngine, agent: Answers) -> None:
    agent.hold = True
    agent.started.clear()
    turn = asyncio.create_task(engine.process_turn(make_context("what about pricing?")))
    await agent.started.wait()
    turn.cancel()  # the user spoke again
    with pytest.raises(asyncio.CancelledError):
        await turn
    agent.hold = False


async def test_an_agent_cancelled_by_a_barge_in_answers_the_next_utterance() -> None:
    clock, agent = FakeClock(), Answers()
    engine, recorder = _engine(agent, clock)
    await _barge_in(engine, agent)
    clock.advance(1)
    response = await engine.process_turn(make_context("sorry, I meant the discount"))
    assert [i.content for i in response.insights] == ["say it"]
    assert len(agent.calls) == 2
    assert ("agent_skipped", ("Coach", "cooldown")) not in recorder.calls
    assert agent.cooldown_remaining("session-1") == 15.0  # the answered run counts


async def test_a_barge_in_restores_the_cooldown_of_the_run_before() -> None:
    clock, agent = FakeClock(), Answers()
    engine, _ = _engine(agent, clock)
    await engine.process_turn(make_context("hi"))  # answered at 1000: cooling until 1015
    clock.advance(20)
    await _barge_in(engine, agent)  # at 1020, cancelled
    assert len(agent.calls) == 2
    assert agent.cooldown_remaining("session-1") == 0.0
    assert agent.last_run_at("session-1") == 1000.0


async def test_an_answered_failed_or_timed_out_run_still_starts_the_cooldown() -> None:
    clock = FakeClock()
    answered, failing = Answers(), ScriptAgent("broken", cooldown=15.0, error=RuntimeError("x"))
    slow = ScriptAgent("slow", cooldown=15.0, delay=5.0, timeout=0.05)
    engine, recorder = _engine(answered, clock)
    engine.register_agent(failing)
    engine.register_agent(slow)
    await engine.process_turn(make_context("hi"))
    for agent in (answered, failing, slow):
        assert agent.cooldown_remaining("session-1") == 15.0, agent
    await engine.process_turn(make_context("and again"))
    skipped = sorted(name for name, why in recorder.names("agent_skipped") if why == "cooldown")
    assert skipped == ["Broken", "Coach", "Slow"]
