"""The worker loop: message building, limits, tool calls, overrides, reasoning, passthrough."""

from __future__ import annotations

import asyncio
import json
import logging
import threading
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from deskwork import Desk, Job, Message, Worker
from deskwork.store import InMemoryRunStore
from deskwork.testing import ScriptedAdapter, Turn, call_tool, call_tools, reply
from deskwork.tools import tool

MODEL = "scripted/model"


def _desk(*turns: Any, default: Any = None, **kwargs: Any) -> tuple[Desk, ScriptedAdapter]:
    adapter = ScriptedAdapter(turns, default=default)
    desk = Desk(model=MODEL, adapter=adapter, run_store=InMemoryRunStore(), **kwargs)
    return desk, adapter


def _types(report: Any) -> list[str]:
    return [e.type for e in report.events]


# --------------------------------------------------------------------------- messages


def test_system_message_has_instructions_expected_output_and_constraints() -> None:
    desk, adapter = _desk(reply("ok"))
    worker = Worker(name="Analyst", instructions="You are a concise analyst.")
    job = Job(input="go", expected_output="Three bullets", constraints=["no jargon", "cite"])
    desk.run(worker, job)
    system = adapter.calls[0]["messages"][0]
    assert system["role"] == "system"
    text = system["content"]
    assert text.index("You are a concise analyst.") < text.index("Three bullets")
    assert text.index("Three bullets") < text.index("no jargon") < text.index("cite")
    desk2, adapter2 = _desk(reply("ok"))
    desk2.run(Worker(name="w"), Job(input="go", constraints="be brief"))
    assert "be brief" in adapter2.calls[0]["messages"][0]["content"]


def test_no_system_message_without_instructions() -> None:
    desk, adapter = _desk(reply("ok"))
    desk.run(Worker(name="w"), Job(input="hello"))
    assert adapter.calls[0]["messages"] == [{"role": "user", "content": "hello"}]


class Ticket(BaseModel):
    id: int
    title: str


def test_non_string_input_is_json_serialized() -> None:
    desk, adapter = _desk(reply("a"), reply("b"), reply("c"))
    desk.run(Worker(name="w"), Job(input={"task": "x", "n": [1, 2]}))
    desk.run(Worker(name="w"), Job(input=[1, 2, 3]))
    desk.run(Worker(name="w"), Job(input=Ticket(id=7, title="t")))
    contents = [call["messages"][-1]["content"] for call in adapter.calls]
    assert json.loads(contents[0]) == {"task": "x", "n": [1, 2]}
    assert json.loads(contents[1]) == [1, 2, 3]
    assert json.loads(contents[2]) == {"id": 7, "title": "t"}


def test_multimodal_content_list_passes_through_unchanged() -> None:
    parts = [
        {"type": "text", "text": "What is in this image?"},
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}},
    ]
    desk, adapter = _desk(reply("a cat"))
    report = desk.run(Worker(name="w"), Job(input=parts))
    assert adapter.calls[0]["messages"][-1] == {"role": "user", "content": parts}
    assert report.messages[0].content == parts


def test_initial_messages_come_before_the_new_input() -> None:
    history = [
        Message(role="system", content="earlier system note"),
        Message(role="user", content="my name is Ada"),
        Message(role="assistant", content="hi Ada"),
    ]
    desk, adapter = _desk(reply("Ada"))
    desk.run(Worker(name="w", instructions="be nice"), Job(input="name?", initial_messages=history))
    sent = adapter.calls[0]["messages"]
    assert [m["role"] for m in sent] == ["system", "system", "user", "assistant", "user"]
    assert sent[0]["content"] == "be nice" and sent[1]["content"] == "earlier system note"
    assert sent[-1]["content"] == "name?"


# --------------------------------------------------------------------------- limits


def test_max_iterations_fails_with_error() -> None:
    @tool()
    def ping() -> str:
        return "pong"

    desk, adapter = _desk(default=call_tool("ping"), max_iterations=3)
    report = desk.run(Worker(name="w", tools=[ping]), Job(input="loop"))
    assert report.status == "failed"
    assert report.errors == ["max_iterations exceeded (3)"]
    assert len(adapter.calls) == 3
    assert report.metrics["iterations"] == 3
    assert _types(report)[-2:] == ["worker.failed", "run.failed"]
    assert report.events[-1].payload == {"errors": ["max_iterations exceeded (3)"]}
    assert desk.run_store.get_run(report.run_id).status == "failed"  # type: ignore[union-attr]


def test_max_tool_calls_fails_before_running_the_excess_calls() -> None:
    ran: list[int] = []

    @tool()
    def work(n: int) -> str:
        ran.append(n)
        return "ok"

    desk, _ = _desk(
        call_tools(("work", {"n": 1})),
        call_tools(("work", {"n": 2}), ("work", {"n": 3})),
        max_tool_calls=2,
    )
    report = desk.run(Worker(name="w", tools=[work]), Job(input="go"))
    assert report.status == "failed"
    assert report.errors == ["max_tool_calls exceeded (2)"]
    assert ran == [1]


# --------------------------------------------------------------------------- tool calls


def test_unknown_tool_becomes_an_error_the_model_sees_and_the_run_continues() -> None:
    @tool()
    def known() -> str:
        return "k"

    seen: list[str] = []

    def after(messages: list[dict[str, Any]], tools: Any) -> str:
        seen.append(messages[-1]["content"])
        return "recovered"

    desk, _ = _desk(call_tool("imaginary", x=1), after)
    report = desk.run(Worker(name="w", tools=[known]), Job(input="go"))
    assert report.status == "completed" and report.content == "recovered"
    assert seen[0].startswith("Error: unknown tool 'imaginary'") and "known" in seen[0]
    failed = [e for e in report.events if e.type == "tool.failed"]
    assert failed and failed[0].source == "imaginary"


def test_malformed_tool_call_json_becomes_an_error_and_the_run_continues() -> None:
    ran: list[str] = []

    @tool()
    def echo(text: str) -> str:
        ran.append(text)
        return text

    seen: list[str] = []

    def after(messages: list[dict[str, Any]], tools: Any) -> Turn:
        seen.append(messages[-1]["content"])
        return call_tool("echo", text="fixed")

    desk, _ = _desk(Turn(tool_calls=[("echo", '{"text": "oops')]), after, reply("done"))
    report = desk.run(Worker(name="w", tools=[echo]), Job(input="go"))
    assert report.status == "completed" and report.content == "done"
    assert ran == ["fixed"]
    assert "malformed tool arguments" in seen[0] and seen[0].startswith("Error:")
    first = report.tool_calls[0]
    assert first.error is not None and first.raw_arguments == '{"text": "oops'
    assert first.result is not None and first.result.error is not None


async def test_parallel_async_tool_calls_overlap_and_keep_call_order() -> None:
    all_started = asyncio.Barrier(3)  # run one after another, the first call waits in vain

    @tool()
    async def wait(name: str, seconds: float) -> str:
        await asyncio.wait_for(all_started.wait(), 30)
        await asyncio.sleep(seconds)  # then they end in the reverse of the call order
        return f"done:{name}"

    calls = call_tools(
        ("wait", {"name": "slow", "seconds": 0.06}),
        ("wait", {"name": "mid", "seconds": 0.03}),
        ("wait", {"name": "fast", "seconds": 0}),
    )
    desk, adapter = _desk(calls, reply("all done"))
    report = await desk.arun(Worker(name="w", tools=[wait]), Job(input="go"))
    assert report.status == "completed", report.errors
    tool_messages = [m for m in adapter.calls[1]["messages"] if m["role"] == "tool"]
    assert [m["content"] for m in tool_messages] == ["done:slow", "done:mid", "done:fast"]
    assert [m["tool_call_id"] for m in tool_messages] == ["call_0", "call_1", "call_2"]


async def test_parallel_sync_tool_calls_overlap_in_threads() -> None:
    all_started = threading.Barrier(3, timeout=30)  # raises unless the three calls overlap

    @tool()
    def block(name: str) -> str:
        all_started.wait()
        return name

    calls = call_tools(("block", {"name": "a"}), ("block", {"name": "b"}), ("block", {"name": "c"}))
    desk, adapter = _desk(calls, reply("ok"))
    report = await desk.arun(Worker(name="w", tools=[block]), Job(input="go"))
    assert report.status == "completed", report.errors
    tool_messages = [m for m in adapter.calls[1]["messages"] if m["role"] == "tool"]
    assert [m["content"] for m in tool_messages] == ["a", "b", "c"]


def test_tool_results_recorded_on_report_tool_calls() -> None:
    @tool()
    def add(a: int, b: int) -> int:
        return a + b

    desk, _ = _desk(call_tools(("add", {"a": 1, "b": 2}), ("add", {"a": 3, "b": 4})), reply("7"))
    report = desk.run(Worker(name="w", tools=[add]), Job(input="go"))
    assert [c.result.content for c in report.tool_calls if c.result] == ["3", "7"]
    assert report.metrics["tool_calls"] == 2 and report.metrics["iterations"] == 2
    assert report.metrics["llm_calls"] == 2


# --------------------------------------------------------------------------- overrides


def test_tools_override_rules(caplog: pytest.LogCaptureFixture) -> None:
    @tool()
    def a() -> str:
        return "worker-a"

    @tool()
    def b() -> str:
        return "worker-b"

    @tool(name="a")
    def other_a() -> str:
        return "override-a"

    @tool()
    def extra() -> str:
        return "extra"

    desk, adapter = _desk(call_tools(("a", {}), ("extra", {}), ("b", {})), reply("ok"))
    job = Job(input="go", tools_override=["a", extra, "missing", 42, other_a])
    with caplog.at_level(logging.WARNING, logger="deskwork.runtime"):
        report = desk.run(Worker(name="w", tools=[a, b]), job)
    offered = sorted(t["function"]["name"] for t in adapter.calls[0]["tools"])
    assert offered == ["a", "extra"]
    results = [c.result.model_text() for c in report.tool_calls if c.result]
    assert results[0] == "override-a"  # last entry for a name wins
    assert results[1] == "extra"
    assert results[2].startswith("Error: unknown tool 'b'")  # not part of this run
    assert [r.getMessage() for r in caplog.records if r.name == "deskwork.runtime"] == [
        "worker 'w': Job.tools_override entries ignored (not a Tool, nor the name of one of"
        " the worker's tools: a, b): 'missing', int object",
        "worker 'w': Job.tools_override gives different tools of the same name ('a'): the"
        " last entry of each name is the tool of this run, the others are not offered",
    ]  # once for the run, not at each of its model calls


def test_empty_tools_override_offers_no_tools() -> None:
    @tool()
    def a() -> str:
        return "x"

    desk, adapter = _desk(reply("no tools"))
    desk.run(Worker(name="w", tools=[a]), Job(input="go", tools_override=[]))
    assert adapter.calls[0]["tools"] is None and adapter.calls[0]["tool_choice"] is None


def test_worker_tools_offered_with_auto_tool_choice() -> None:
    @tool()
    def a() -> str:
        return "x"

    desk, adapter = _desk(reply("fine"))
    desk.run(Worker(name="w", tools=[a]), Job(input="go"))
    assert adapter.calls[0]["tool_choice"] == "auto"
    assert adapter.calls[0]["tools"] == [a.to_provider()]


# --------------------------------------------------------------------------- reasoning & params


def test_reasoning_content_is_reported_and_kept_in_history() -> None:
    desk, _ = _desk(reply("9.8", reasoning="compare decimals"))
    report = desk.run(Worker(name="w"), Job(input="9.11 vs 9.8?", thinking={"type": "enabled"}))
    assert report.reasoning_content == "compare decimals"
    assert report.messages[-1].reasoning_content == "compare decimals"


def test_thinking_drop_params_and_extra_body_reach_the_adapter() -> None:
    class Out(BaseModel):
        x: int

    desk, adapter = _desk(reply("a"), '{"x": 1}')
    options: dict[str, Any] = {
        "thinking": {"type": "enabled", "budget_tokens": 1024},
        "drop_params": True,
        "extra_body": {"guardrails": ["pii-detection"], "custom_setting": 42},
    }
    desk.run(Worker(name="w"), Job(input="q", **options))
    desk.run(Worker(name="w"), Job(input="q", response_schema=Out, **options))
    for call in adapter.calls:
        assert call["thinking"] == options["thinking"]
        assert call["drop_params"] is True
        assert call["extra_body"] == options["extra_body"]


def test_worker_model_overrides_desk_model_and_the_desk_owns_retries() -> None:
    desk, adapter = _desk(reply("a"), num_retries=2)
    desk.run(Worker(name="w", model="special/model"), Job(input="q"))
    assert adapter.calls[0]["model"] == "special/model"
    assert adapter.calls[0]["num_retries"] == 0  # the desk retries; the adapter must not


def test_worker_without_any_model_fails_cleanly(tmp_path: Path) -> None:
    desk = Desk(adapter=ScriptedAdapter([reply("x")]), storage_dir=tmp_path)
    report = desk.run(Worker(name="w"), Job(input="q"))
    assert report.status == "failed" and "no model" in report.errors[0]
    assert desk.run_store.get_run(report.run_id).status == "failed"  # type: ignore[union-attr]
