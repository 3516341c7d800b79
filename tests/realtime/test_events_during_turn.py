"""An event the host emits while a turn runs is kept for the next turn, not dropped.

A turn dispatches the events the host left on the board before it started, then clears the
board's events at its end. Before, that clear also removed an event the host emitted while
the turn was running (from a UI handler, say): no phase ever saw it and nothing said so. Now
a turn removes only the events it dispatched or emitted; the host's late event stays and
wakes its subscribers in the next turn.
"""

from __future__ import annotations

import asyncio

from rt_support import ScriptAgent, make_context

from deskwork.realtime import (
    AgentContext,
    AgentEngine,
    AgentResponse,
    Blackboard,
    Event,
    TriggerType,
)
from deskwork.testing import ScriptedAdapter


class EmitsMidTurn(ScriptAgent):
    """While it runs, 'the host' emits an event on the session's board."""

    def __init__(self, board: Blackboard) -> None:
        super().__init__("listener", response=AgentResponse(events=[Event(name="heard")]))
        self.board = board

    async def evaluate(self, context: AgentContext) -> AgentResponse | None:
        if context.turn_count == 1:
            self.board.emit_event(Event(name="user_clicked", source_agent="host"))
            await asyncio.sleep(0)
        return await super().evaluate(context)


async def test_an_event_emitted_by_the_host_during_a_turn_reaches_the_next_turn() -> None:
    board = Blackboard(events=[Event(name="before", source_agent="host")])
    subscriber = ScriptAgent(
        "ui", trigger_types=[TriggerType.EVENT], subscribed_events=["user_clicked", "before"]
    )
    engine = AgentEngine(adapter=ScriptedAdapter())
    engine.register_agent(EmitsMidTurn(board))
    engine.register_agent(subscriber)

    first = await engine.process_turn(make_context(board=board, turn_count=1))
    assert first.debug_info["phases"][1]["trigger_events"] == ["before", "heard"]
    assert [e.name for e in board.events] == ["user_clicked"]  # kept, not cleared

    await engine.process_turn(make_context(board=board, turn_count=2))
    assert [c.trigger_metadata["trigger_events"] for c in subscriber.calls] == [
        ["before", "heard"],
        ["user_clicked", "heard"],
    ]
    assert board.events == []
