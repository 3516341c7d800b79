"""A desk with a run paused on its tool call's confirmation (imported as a plain module).

The run asks to call ``send(to="ann")``, a tool that needs a confirmation, so it pauses
before the call; once resumed with an approval, the tool runs and the model replies
``final``. ``sent`` lists every ``to`` the tool was called with: a test can tell whether
(and how often) a resume ran the call.
"""

from __future__ import annotations

from typing import NamedTuple

from deskwork import Desk, Job, Report, Worker
from deskwork.store import InMemoryRunStore
from deskwork.testing import ScriptedAdapter, call_tool, reply
from deskwork.tools import tool

__all__ = ["PausedSend", "paused_send"]


class PausedSend(NamedTuple):
    """What :func:`paused_send` made."""

    desk: Desk
    worker: Worker
    paused: Report
    sent: list[str]


def paused_send(final: str = "finished") -> PausedSend:
    """A desk (in-memory run store) whose worker's run is paused before ``send``."""
    sent: list[str] = []

    @tool(requires_confirmation=True)
    def send(to: str) -> str:
        sent.append(to)
        return f"sent to {to}"

    adapter = ScriptedAdapter([call_tool("send", to="ann"), reply(final)])
    desk = Desk(model="scripted/m", adapter=adapter, run_store=InMemoryRunStore())
    worker = Worker(name="w", tools=[send])
    paused = desk.run(worker, Job(input="send it"))
    assert paused.status == "paused"
    return PausedSend(desk, worker, paused, sent)
