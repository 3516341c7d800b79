"""Failure paths (provider errors, broken runners) and context-window compaction."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict

from deskwork import ContextLimitError, Desk, Job, Message, Report, RunState, Worker
from deskwork.runtime import RunConfig
from deskwork.store import InMemoryRunStore
from deskwork.testing import ScriptedAdapter, call_tool, call_tools, fail, reply, structured
from deskwork.tools import ToolResult, tool
from deskwork.worker_context import SUMMARY_TAIL_MESSAGES

MODEL = "scripted/model"


class ProviderError(Exception):
    pass


def _history(n: int) -> list[Message]:
    """``n`` alternating user/assistant messages."""
    return [
        Message(role="user" if i % 2 == 0 else "assistant", content=f"message {i}")
        for i in range(n)
    ]


def _is_summary_request(call: dict[str, Any]) -> bool:
    messages = call["messages"]
    return len(messages) == 1 and "Summarize the conversation" in messages[0]["content"]


# --------------------------------------------------------------------------- failures


def test_adapter_error_fails_the_run_with_events_and_stored_status(tmp_path: Path) -> None:
    desk = Desk(
        model=MODEL,
        adapter=ScriptedAdapter([fail(ProviderError("503 upstream"))]),
        storage_dir=tmp_path,
    )
    report = desk.run(Worker(name="w"), Job(input="go"))
    assert report.status == "failed"
    assert report.errors == ["model call failed: ProviderError: 503 upstream"]
    types = [e.type for e in report.events]
    assert types == [
        "run.started",
        "worker.started",
        "llm.started",
        "llm.failed",
        "worker.failed",
        "run.failed",
    ]
    failed = report.events[3].payload
    assert failed["model"] == MODEL and failed["error_type"] == "ProviderError"
    assert failed["error_message"] == "503 upstream" and failed["latency_ms"] >= 0
    assert report.events[-1].payload == {"errors": report.errors}
    record = desk.run_store.get_run(report.run_id)
    assert record is not None and record.status == "failed"
    assert record.state is not None and record.state.status == "failed"


def test_adapter_error_after_a_tool_turn_keeps_history() -> None:
    @tool()
    def t() -> str:
        return "r"

    desk = Desk(
        model=MODEL,
        adapter=ScriptedAdapter([call_tool("t"), fail(ProviderError("x"))]),
        run_store=InMemoryRunStore(),
    )
    report = desk.run(Worker(name="w", tools=[t]), Job(input="go"))
    assert report.status == "failed"
    assert [m.role for m in report.messages] == ["user", "assistant", "tool"]


class Exploding:
    """A runner whose arun raises unexpectedly."""

    name = "exploding"
    runner_type = "custom"

    async def arun(self, config: RunConfig, job: Job) -> tuple[Report, RunState]:
        config.emit("custom.step", self.name, {"n": 1})
        raise RuntimeError("runner bug with Bearer abcdefghijklmnop")

    async def aresume(
        self, config: RunConfig, state: RunState, decision: Any, job: Job | None = None
    ) -> tuple[Report, RunState]:
        raise NotImplementedError


def test_runner_raising_becomes_a_failed_report(tmp_path: Path) -> None:
    desk = Desk(model=MODEL, adapter=ScriptedAdapter(), storage_dir=tmp_path)
    report = desk.run(Exploding(), Job(input="go"))
    assert report.status == "failed"
    assert report.errors[0].startswith("RuntimeError: runner bug")
    assert "abcdefghijklmnop" not in report.errors[0]
    assert [e.type for e in report.events] == ["run.started", "custom.step", "run.failed"]
    record = desk.run_store.get_run(report.run_id)
    assert record is not None and record.status == "failed"
    assert [e.type for e in desk.run_store.get_events(report.run_id)] == [
        e.type for e in report.events
    ]


async def test_async_runner_failure_also_reports() -> None:
    desk = Desk(model=MODEL, adapter=ScriptedAdapter(), run_store=InMemoryRunStore())
    report = await desk.arun(Exploding(), Job(input="go"))
    assert report.status == "failed" and desk.run_store.list_runs()[0].status == "failed"


def test_script_exhausted_fails_cleanly() -> None:
    desk = Desk(model=MODEL, adapter=ScriptedAdapter([]), run_store=InMemoryRunStore())
    report = desk.run(Worker(name="w"), Job(input="go"))
    assert report.status == "failed" and "ScriptExhaustedError" in report.errors[0]


# --------------------------------------------------------------------------- compaction


def test_reactive_compaction_summarizes_and_retries() -> None:
    adapter = ScriptedAdapter(
        [fail(ContextLimitError("context length exceeded")), reply("SUMMARY"), reply("final")]
    )
    desk = Desk(model=MODEL, adapter=adapter, run_store=InMemoryRunStore())
    job = Job(input="latest question", initial_messages=_history(8))
    report = desk.run(Worker(name="w", instructions="sys"), job)
    assert report.status == "completed" and report.content == "final"
    assert _is_summary_request(adapter.calls[1])
    assert "message 0" in adapter.calls[1]["messages"][0]["content"]
    retry = adapter.calls[2]["messages"]
    assert retry[0] == {"role": "system", "content": "sys"}
    # the kept messages start with a reply: the summary is the user's (Anthropic's rule)
    assert retry[1]["role"] == "user" and "SUMMARY" in retry[1]["content"]
    assert retry[2]["role"] == "assistant"
    assert len(retry) == 2 + SUMMARY_TAIL_MESSAGES
    assert retry[-1] == {"role": "user", "content": "latest question"}
    summarized = next(e for e in report.events if e.type == "worker.context_summarized")
    assert summarized.payload["model"] == MODEL
    assert summarized.payload["summarized_messages"] == 9 - SUMMARY_TAIL_MESSAGES
    assert summarized.payload["kept_messages"] == SUMMARY_TAIL_MESSAGES
    assert "unregistered_model" in summarized.payload


def test_reactive_compaction_disabled_fails_directly() -> None:
    adapter = ScriptedAdapter([fail(ContextLimitError("context length exceeded")), reply("x")])
    desk = Desk(
        model=MODEL, adapter=adapter, run_store=InMemoryRunStore(), respect_context_window=False
    )
    report = desk.run(Worker(name="w"), Job(input="q", initial_messages=_history(8)))
    assert report.status == "failed" and "context limit exceeded" in report.errors[0]
    assert len(adapter.calls) == 1
    assert not any(e.type == "worker.context_summarized" for e in report.events)


def test_reactive_compaction_budget_is_limited() -> None:
    overflow = fail(ContextLimitError("prompt is too long"))
    adapter = ScriptedAdapter(
        [overflow, reply("S1"), overflow, reply("S2"), overflow, reply("never")]
    )
    desk = Desk(model=MODEL, adapter=adapter, run_store=InMemoryRunStore())
    report = desk.run(Worker(name="w"), Job(input="q", initial_messages=_history(12)))
    assert report.status == "failed" and "context limit exceeded" in report.errors[0]
    assert sum(1 for c in adapter.calls if _is_summary_request(c)) <= 2


def test_proactive_compaction_before_the_call() -> None:
    adapter = ScriptedAdapter([reply("SUMMARY"), reply("answer")])
    desk = Desk(model=MODEL, adapter=adapter, run_store=InMemoryRunStore(), max_context_messages=5)
    report = desk.run(Worker(name="w"), Job(input="q", initial_messages=_history(8)))
    assert report.status == "completed" and report.content == "answer"
    assert _is_summary_request(adapter.calls[0])
    sent = adapter.calls[1]["messages"]
    assert "SUMMARY" in sent[0]["content"] and len(sent) == 1 + SUMMARY_TAIL_MESSAGES
    assert any(e.type == "worker.context_summarized" for e in report.events)


def test_proactive_compaction_does_not_use_the_reactive_budget(tmp_path: Path) -> None:
    @tool()
    def t() -> str:
        return "r"

    turns = [reply("P1"), call_tool("t"), reply("P2"), call_tool("t"), reply("P3"), reply("ok")]
    adapter = ScriptedAdapter(turns)
    desk = Desk(model=MODEL, adapter=adapter, storage_dir=tmp_path, max_context_messages=5)
    report = desk.run(Worker(name="w", tools=[t]), Job(input="q", initial_messages=_history(6)))
    assert report.status == "completed" and report.content == "ok"
    assert [_is_summary_request(c) for c in adapter.calls] == [True, False] * 3
    summaries = [e for e in report.events if e.type == "worker.context_summarized"]
    assert len(summaries) == 3  # more than SUMMARY_ATTEMPT_LIMIT, and none counted as reactive
    record = desk.run_store.get_run(report.run_id)
    assert record is not None and record.state is not None
    assert record.state.payload["reactive_attempts"] == 0


def test_repeated_compaction_folds_earlier_summaries_in() -> None:
    @tool()
    def t() -> str:
        return "r"

    turns = [reply("S1"), call_tool("t"), reply("S2"), call_tool("t"), reply("S3"), reply("ok")]
    adapter = ScriptedAdapter(turns)
    desk = Desk(model=MODEL, adapter=adapter, run_store=InMemoryRunStore(), max_context_messages=5)
    report = desk.run(Worker(name="w", tools=[t]), Job(input="q", initial_messages=_history(6)))
    assert report.status == "completed" and report.content == "ok"
    # each new summary is written from the previous one, which it replaces: history stays
    # bounded instead of growing by one summary message per compaction
    assert "S1" in adapter.calls[2]["messages"][0]["content"]
    assert "S2" in adapter.calls[4]["messages"][0]["content"]
    final = adapter.calls[-1]["messages"]
    summaries = [m for m in final if "Summary of the earlier" in str(m["content"])]
    assert len(summaries) == 1 and "S3" in summaries[0]["content"]


def test_compaction_keeps_tool_call_groups_together() -> None:
    from deskwork import ToolCall

    history = [
        *_history(4),
        Message(role="user", content="use tools"),
        Message(
            role="assistant",
            tool_calls=[
                ToolCall(id="a", name="t", arguments={}),
                ToolCall(id="b", name="t", arguments={}),
                ToolCall(id="c", name="t", arguments={}),
            ],
        ),
        Message(role="tool", tool_call_id="a", name="t", content="ra"),
        Message(role="tool", tool_call_id="b", name="t", content="rb"),
        Message(role="tool", tool_call_id="c", name="t", content="rc"),
    ]
    adapter = ScriptedAdapter([reply("SUMMARY"), reply("ok")])
    desk = Desk(model=MODEL, adapter=adapter, run_store=InMemoryRunStore(), max_context_messages=5)
    # no new input: the history ends with tool results, and the tail must not start with them
    desk.run(Worker(name="w"), Job(initial_messages=history))
    sent = adapter.calls[1]["messages"]
    roles = [m["role"] for m in sent]
    assert roles[0] == "user" and roles[1] == "assistant"  # the summary is the user's
    assert roles[2:] == ["tool", "tool", "tool"]
    assert [c["id"] for c in sent[1]["tool_calls"]] == ["a", "b", "c"]


class Verdict(BaseModel):
    ok: bool


def test_reactive_compaction_for_structured_output_retries_with_the_summary() -> None:
    adapter = ScriptedAdapter(
        [
            fail(ContextLimitError("context window exceeded")),
            reply("SUMMARY"),
            structured({"ok": True}),
        ]
    )
    desk = Desk(model=MODEL, adapter=adapter, run_store=InMemoryRunStore())
    job = Job(input="judge", initial_messages=_history(8), response_schema=Verdict)
    report = desk.run(Worker(name="w"), job)
    assert report.status == "completed", report.errors
    assert report.data == Verdict(ok=True)
    retried = adapter.calls[2]["messages"]
    assert any("SUMMARY" in str(m["content"]) for m in retried)
    assert not any(m["content"] == "message 0" for m in retried)


def test_proactive_compaction_applies_to_structured_output() -> None:
    adapter = ScriptedAdapter([reply("SUMMARY"), structured({"ok": False})])
    desk = Desk(model=MODEL, adapter=adapter, run_store=InMemoryRunStore(), max_context_messages=5)
    job = Job(input="judge", initial_messages=_history(8), response_schema=Verdict)
    report = desk.run(Worker(name="w"), job)
    assert report.data == Verdict(ok=False)
    sent = adapter.calls[1]["messages"]
    assert "SUMMARY" in str(sent[0]["content"])
    assert not any(m["content"] == "message 0" for m in sent)


# --------------------------------------------------------------------------- odd values, cancel


class Opaque:
    """A value JSON cannot hold."""

    def __str__(self) -> str:
        return "an opaque thing"


@dataclasses.dataclass
class Point:
    x: int
    y: int


def test_tool_values_json_cannot_hold_are_stored_as_text(tmp_path: Path) -> None:
    @tool()
    def make() -> Opaque:
        return Opaque()

    @tool()
    def point() -> Point:
        return Point(1, 2)

    @tool()
    def wrapped() -> ToolResult:
        return ToolResult(content="wrapped", data={"thing": Opaque()})

    turns = [call_tools(("make", {}), ("point", {}), ("wrapped", {})), reply("ok"), reply("2")]
    desk = Desk(model=MODEL, adapter=ScriptedAdapter(turns), storage_dir=tmp_path)
    session = desk.session(Worker(name="w", tools=[make, point, wrapped]))
    assert session is not None
    report = session.run("go")
    assert report.status == "completed", report.errors
    results = [c.result for c in report.tool_calls]
    assert results[0] is not None and results[0].content == "an opaque thing"
    assert isinstance(results[0].data, Opaque)  # in process, the object itself
    assert results[1] is not None and json.loads(results[1].content or "") == {"x": 1, "y": 2}
    record = desk.run_store.get_run(report.run_id)
    assert record is not None and record.status == "completed" and record.state is not None
    stored = [c.result for c in record.state.tool_calls]
    assert stored[0] is not None and stored[0].data == "an opaque thing"
    assert stored[1] is not None and stored[1].data == {"x": 1, "y": 2}
    assert stored[2] is not None and stored[2].data == {"thing": "an opaque thing"}
    assert session.run("again").content == "2"


class OpaqueOutput(BaseModel):
    model_config = ConfigDict(arbitrary_types_allowed=True)

    thing: Opaque


class OpaqueRunner:
    """A runner whose structured output holds a value JSON cannot hold."""

    name = "opaque"
    runner_type = "custom"

    async def arun(self, config: RunConfig, job: Job) -> tuple[Report, RunState]:
        data = OpaqueOutput(thing=Opaque())
        state = RunState(
            run_id=config.run_id,
            status="completed",
            runner_type=self.runner_type,
            runner_name=self.name,
            job=job.to_state(),
        )
        return Report(run_id=config.run_id, status="completed", content="ok", data=data), state

    async def aresume(
        self, config: RunConfig, state: RunState, decision: Any, job: Job | None = None
    ) -> tuple[Report, RunState]:
        raise NotImplementedError


def test_output_data_json_cannot_hold_is_stored_as_text(tmp_path: Path) -> None:
    desk = Desk(model=MODEL, adapter=ScriptedAdapter(), storage_dir=tmp_path)
    report = desk.run(OpaqueRunner(), Job(input="go"))
    assert report.status == "completed" and isinstance(report.data, OpaqueOutput)
    record = desk.run_store.get_run(report.run_id)
    assert record is not None and record.status == "completed"
    assert record.output_json == {"thing": "an opaque thing"}


async def test_cancelling_a_run_marks_it_failed(tmp_path: Path) -> None:
    @tool()
    async def forever() -> str:
        await asyncio.sleep(30)
        return "never"

    desk = Desk(model=MODEL, adapter=ScriptedAdapter([call_tool("forever")]), storage_dir=tmp_path)
    task = asyncio.ensure_future(desk.arun(Worker(name="w", tools=[forever]), Job(input="go")))
    await asyncio.sleep(0.1)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    run_id = desk.run_store.list_runs()[0].run_id
    record = desk.run_store.get_run(run_id)
    assert record is not None and record.status == "failed"
    stored = desk.run_store.get_events(run_id)
    assert stored[-1].type == "run.failed" and stored[-1].payload == {"errors": ["run cancelled"]}


def test_a_failing_summary_call_fails_the_run_cleanly() -> None:
    from deskwork import ContextLimitError, Desk, EventType, Job, Message, Worker
    from deskwork.store import InMemoryRunStore
    from deskwork.testing import ScriptedAdapter, fail

    history = [Message(role="user", content=f"old {i}") for i in range(8)]
    adapter = ScriptedAdapter(
        [fail(ContextLimitError("context length exceeded")), fail(RuntimeError("summary down"))]
    )
    store = InMemoryRunStore()
    desk = Desk(model="m", adapter=adapter, run_store=store)
    report = desk.run(Worker(name="w"), Job(input="now", initial_messages=history))
    assert report.status == "failed"
    assert report.errors == ["context compaction failed: RuntimeError: summary down"]
    assert report.events[-2].type == EventType.WORKER_FAILED
    record = store.get_run(report.run_id)
    assert record is not None and record.status == "failed"
