"""A resume answers the pause it names, or nothing: a retried answer to a run's first
confirmation ("delete a.txt") approved its second ("delete b.txt"), which the client never
saw. AG-UI always names it (the interrupt id); ``POST /runs/{id}/resume`` when given
``action_id``."""

from __future__ import annotations

from typing import Any

import httpx
from serve_support import parse_sse

from deskwork.runtime.desk import Desk
from deskwork.runtime.worker import Worker
from deskwork.store.memory import InMemoryRunStore
from deskwork.testing import ScriptedAdapter
from deskwork.testing.scripted import Turn, call_tool, reply
from deskwork.tools.base import tool


@tool(requires_confirmation=True, description="Delete a file")
def delete(name: str) -> str:
    return f"deleted {name}"


def _two_deletes(messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None) -> Turn:
    done = sum(m["role"] == "tool" for m in messages)
    return call_tool("delete", name=["a.txt", "b.txt"][done]) if done < 2 else reply("done")


def _input(run_id: str, interrupt_id: str | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {
        "threadId": "t",
        "runId": run_id,
        "messages": [{"id": "m", "role": "user", "content": "clean up"}],
        "tools": [],
        "context": [],
        "state": {},
        "forwardedProps": {},
    }
    if interrupt_id is not None:
        body["resume"] = [{"interruptId": interrupt_id, "status": "resolved", "payload": True}]
    return body


async def _interrupt(client: httpx.AsyncClient, body: dict[str, Any]) -> dict[str, Any]:
    last = parse_sse((await client.post("/agui/cleaner", json=body)).text)[-1]["data"]
    interrupt: dict[str, Any] = last["outcome"]["interrupts"][0]
    return interrupt


def _desk() -> Desk:
    desk = Desk(model="scripted", adapter=ScriptedAdapter(default=_two_deletes),
                run_store=InMemoryRunStore())  # fmt: skip
    desk.register(Worker(name="cleaner", tools=[delete]))
    return desk


async def test_an_answer_to_an_earlier_interrupt_is_409(live_factory: Any) -> None:
    desk = _desk()
    live = live_factory(desk)
    async with httpx.AsyncClient(base_url=live.url, timeout=20) as client:
        first = await _interrupt(client, _input("run-1"))
        second = await _interrupt(client, _input("run-2", first["id"]))
        assert second["message"] == "Confirm delete (b.txt)"
        retried = await client.post("/agui/cleaner", json=_input("run-3", first["id"]))
        assert retried.status_code == 409 and "not the one" in retried.json()["detail"]
        wrong = await client.post("/agui/cleaner", json=_input("run-4", "run-1"))
        assert wrong.status_code == 409
        record = desk.run_store.get_run("run-1")
        assert record is not None and record.status == "paused"
        done = parse_sse(
            (await client.post("/agui/cleaner", json=_input("run-5", second["id"]))).text
        )
        assert done[-1]["data"]["result"] == "done"


async def test_a_resume_naming_an_earlier_action_is_409(live_factory: Any) -> None:
    live = live_factory(_desk())
    async with httpx.AsyncClient(base_url=live.url, timeout=20) as client:
        body = {"runner": "cleaner", "job": {"input": "clean up"}}
        first = (await client.post("/runs?wait=true", json=body)).json()
        run_id, action_id = first["run_id"], first["pending_action"]["action_id"]
        answer = {"decision": True, "action_id": action_id}
        second = await client.post(f"/runs/{run_id}/resume?wait=true", json=answer)
        assert second.json()["pending_action"]["prompt"] == "Confirm delete (b.txt)"
        again = await client.post(f"/runs/{run_id}/resume?wait=true", json=answer)
        assert again.status_code == 409 and "not the one" in again.json()["detail"]
        answer["action_id"] = second.json()["pending_action"]["action_id"]
        done = await client.post(f"/runs/{run_id}/resume?wait=true", json=answer)
        assert done.json()["content"] == "done"
