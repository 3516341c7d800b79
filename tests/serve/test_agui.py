"""The AG-UI endpoint over real HTTP: events are the ag-ui-protocol package's types."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

pytest.importorskip("ag_ui")

from ag_ui.core import EventType, RunAgentInput
from serve_support import SECRET, Live


def _input(run_id: str, text: str, **extra: Any) -> dict[str, Any]:
    body = RunAgentInput(
        thread_id="thread-1",
        run_id=run_id,
        state=None,
        messages=[{"id": "m1", "role": "user", "content": text}],  # type: ignore[list-item]
        tools=[],
        context=[],
        forwarded_props=None,
        **extra,
    )
    data: dict[str, Any] = json.loads(body.model_dump_json(by_alias=True, exclude_none=True))
    return data


def _events(text: str) -> list[dict[str, Any]]:
    return [json.loads(line[6:]) for line in text.splitlines() if line.startswith("data: ")]


async def test_a_run_streams_text_and_finishes(live: Live) -> None:
    async with httpx.AsyncClient(base_url=live.url, timeout=10) as client:
        response = await client.post("/agui/echo", json=_input("agui-run-1", "hello"))
    assert response.status_code == 200
    events = _events(response.text)
    kinds = [e["type"] for e in events]
    assert kinds[0] == EventType.RUN_STARTED and kinds[-1] == EventType.RUN_FINISHED
    assert EventType.TEXT_MESSAGE_START in kinds and EventType.TEXT_MESSAGE_END in kinds
    text = "".join(e["delta"] for e in events if e["type"] == EventType.TEXT_MESSAGE_CONTENT)
    assert text == "echo: hello"
    assert events[-1]["result"] == "echo: hello"
    assert events[-1]["outcome"]["type"] == "success"
    record = live.desk.run_store.get_run("agui-run-1")
    assert record is not None and record.status == "completed"


async def test_a_pause_is_an_interrupt_and_resume_continues(live: Live) -> None:
    async with httpx.AsyncClient(base_url=live.url, timeout=10) as client:
        first = _events((await client.post("/agui/clerk", json=_input("agui-2", "go"))).text)
        kinds = [e["type"] for e in first]
        assert EventType.TOOL_CALL_START in kinds and EventType.TOOL_CALL_RESULT in kinds
        args = next(e for e in first if e["type"] == EventType.TOOL_CALL_ARGS)
        assert json.loads(args["delta"]) == {"item": "beans"}
        outcome = first[-1]["outcome"]
        assert outcome["type"] == "interrupt"
        interrupt = outcome["interrupts"][0]
        assert interrupt["reason"] == "confirmation" and interrupt["id"].startswith("agui-2:")
        resume = {"interruptId": interrupt["id"], "status": "resolved", "payload": True}
        body = _input("agui-2b", "go", resume=[resume])
        second = _events((await client.post("/agui/clerk", json=body)).text)
        assert second[-1]["type"] == EventType.RUN_FINISHED
        assert second[-1]["result"] == "done: ordered 38 x beans"
        again = await client.post("/agui/clerk", json=body)
        assert again.status_code == 409


async def test_bad_agui_input(live: Live) -> None:
    async with httpx.AsyncClient(base_url=live.url) as client:
        assert (await client.post("/agui/nobody", json=_input("r", "x"))).status_code == 404
        assert (await client.post("/agui/echo", json={"threadId": "t"})).status_code == 422
        no_user = _input("r2", "x")
        no_user["messages"] = []
        assert (await client.post("/agui/echo", json=no_user)).status_code == 422
        assert (await client.post("/agui/echo", json=_input("r3", ""))).status_code == 422
        await client.post("/agui/echo", json=_input("dup", "x"))
        assert (await client.post("/agui/echo", json=_input("dup", "x"))).status_code == 409


async def test_the_final_answer_carries_no_secret(live: Live) -> None:
    async with httpx.AsyncClient(base_url=live.url, timeout=10) as client:
        text = (await client.post("/agui/echo", json=_input("agui-s", f"key {SECRET}"))).text
    finished = _events(text)[-1]
    assert finished["type"] == EventType.RUN_FINISHED
    assert finished["result"].startswith("echo: key ") and SECRET not in finished["result"]
