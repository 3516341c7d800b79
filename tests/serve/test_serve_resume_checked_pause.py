"""An HTTP resume answers the pause it was checked against, not one the run reached after the
check: the server checked the request (its action_id, its answer) against the stored pause,
then the desk read the run again and claimed whatever pause it found, so an answer meant for
pause 1 that another process had answered meanwhile ran pause 2's call. Now it is a 409 and
the run stays paused at pause 2."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import httpx
from serve_support import Live

from deskwork import Desk, Worker
from deskwork.testing import ScriptedAdapter, Turn, call_tool, reply
from deskwork.tools import tool

RAN: list[int] = []


@tool(requires_confirmation=True)
def act(n: int) -> str:
    RAN.append(n)
    return f"acted {n}"


def _policy(messages: list[dict[str, Any]], tools: Any) -> Turn:
    done = sum(1 for m in messages if m["role"] == "tool")
    return call_tool("act", n=done + 1) if done < 2 else reply("done")


async def test_a_resume_of_a_pause_answered_meanwhile_is_409(
    live_factory: Any, tmp_path: Path
) -> None:
    desks = [
        Desk(model="scripted/m", adapter=ScriptedAdapter(default=_policy), storage_dir=tmp_path)
        for _ in range(2)
    ]
    for desk in desks:
        desk.register(Worker(name="actor", tools=[act]))
    desk, elsewhere = desks
    live: Live = live_factory(desk)
    resume = desk.aresume

    def answered_elsewhere_first(target: Any, decision: Any = None, **kw: Any) -> Any:
        """After the server's checks, before the desk reads the run: another process answers
        pause 1 and the run pauses again."""
        run_id = target if isinstance(target, str) else target.run_id
        other = threading.Thread(target=lambda: elsewhere.resume(run_id, True))
        other.start()
        other.join()
        return resume(target, decision, **kw)

    desk.aresume = answered_elsewhere_first  # type: ignore[method-assign]
    RAN.clear()
    async with httpx.AsyncClient(base_url=live.url, timeout=20) as client:
        paused = (
            await client.post("/runs?wait=true", json={"runner": "actor", "job": {"input": "go"}})
        ).json()
        first = paused["pending_action"]["action_id"]
        run_id = paused["run_id"]
        body = {"decision": True, "action_id": first}
        refused = await client.post(f"/runs/{run_id}/resume?wait=true", json=body)
        assert refused.status_code == 409, refused.text
        assert RAN == [1]  # pause 2's call did not run on pause 1's answer
        now = (await client.get(f"/runs/{run_id}")).json()
        assert now["status"] == "paused" and now["pending_action"]["action_id"] != first
    elsewhere.close()
