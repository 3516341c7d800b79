"""Run events: persisted order, payload fields per the docs, sources, handlers, listeners."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from deskwork import Desk, Event, Job, Report, Worker
from deskwork.store import InMemoryRunStore, RunStore, SQLiteRunStore
from deskwork.testing import ScriptedAdapter, Turn, call_tool, reply
from deskwork.tools import tool

MODEL = "scripted/model"


@tool()
def lookup(q: str) -> str:
    return "x" * 250


@tool()
def broken(q: str) -> str:
    raise ValueError("nope")


@tool(requires_confirmation=True)
def approve_me(q: str) -> str:
    return "approved"


def _stores(tmp_path: Path) -> list[RunStore]:
    return [InMemoryRunStore(), SQLiteRunStore(tmp_path / "events.db")]


def _by_type(report: Report, event_type: str) -> list[Event]:
    return [e for e in report.events if e.type == event_type]


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
def test_stored_events_equal_report_events_including_resume(tmp_path: Path, kind: str) -> None:
    store: RunStore = InMemoryRunStore() if kind == "memory" else SQLiteRunStore(tmp_path / "e.db")
    turns = [call_tool("lookup", q="a"), call_tool("approve_me", q="b"), reply("done")]
    desk = Desk(model=MODEL, adapter=ScriptedAdapter(turns), run_store=store)
    worker = Worker(name="W", tools=[lookup, approve_me])
    paused = desk.run(worker, Job(input="go"))
    assert [e.event_id for e in store.get_events(paused.run_id)] == [
        e.event_id for e in paused.events
    ]
    done = desk.resume(paused, True)
    stored = store.get_events(done.run_id)
    assert [(e.event_id, e.type, e.source, e.payload) for e in stored] == [
        (e.event_id, e.type, e.source, e.payload) for e in done.events
    ]
    assert [e.event_id for e in done.events[: len(paused.events)]] == [
        e.event_id for e in paused.events
    ]
    assert len({e.event_id for e in done.events}) == len(done.events)
    assert all(e.run_id == done.run_id for e in done.events)
    stamps = [e.timestamp for e in done.events]
    assert stamps == sorted(stamps) and all(s.tzinfo is not None for s in stamps)


def test_completed_run_event_sequence_and_payloads() -> None:
    turns = [
        Turn(
            tool_calls=[("lookup", {"q": "a"}), ("broken", {"q": "b"})],
            usage={"prompt_tokens": 5, "completion_tokens": 7, "total_tokens": 12},
            cost=0.25,
        ),
        reply("final answer"),
    ]
    desk = Desk(model=MODEL, adapter=ScriptedAdapter(turns), run_store=InMemoryRunStore())
    job = Job(input="go")
    report = desk.run(Worker(name="Analyst", tools=[lookup, broken]), job)
    types = [e.type for e in report.events]
    assert types[:4] == ["run.started", "worker.started", "llm.started", "llm.completed"]
    assert types[4] == "assistant.message"
    assert sorted(types[5:9]) == ["tool.completed", "tool.failed", "tool.started", "tool.started"]
    assert types[9:] == [
        "llm.started",
        "llm.completed",
        "assistant.message",
        "worker.completed",
        "run.completed",
    ]

    started = report.events[0]
    assert started.source == "Analyst" and started.payload == {"job_id": job.id}
    assert _by_type(report, "worker.started")[0].payload == {}
    llm_started = _by_type(report, "llm.started")[0]
    assert llm_started.payload == {"model": MODEL, "messages_count": 1, "tools_count": 2}
    assert llm_started.source == "Analyst"
    llm_done = _by_type(report, "llm.completed")[0].payload
    assert llm_done["model"] == MODEL and llm_done["latency_ms"] >= 0
    assert (llm_done["prompt_tokens"], llm_done["completion_tokens"]) == (5, 7)
    assert (llm_done["total_tokens"], llm_done["cost"]) == (12, 0.25)
    message = _by_type(report, "assistant.message")[0].payload
    assert message["content"] is None
    assert message["tool_calls"] == [
        {"id": "call_0", "name": "lookup", "arguments": '{"q": "a"}'},
        {"id": "call_1", "name": "broken", "arguments": '{"q": "b"}'},
    ]
    assert _by_type(report, "assistant.message")[1].payload == {"content": "final answer"}
    tool_started = _by_type(report, "tool.started")
    assert {e.source for e in tool_started} == {"lookup", "broken"}
    assert {e.payload["tool_call_id"] for e in tool_started} == {"call_0", "call_1"}
    completed = _by_type(report, "tool.completed")[0]
    assert completed.source == "lookup"
    assert completed.payload == {
        "tool_call_id": "call_0",
        "result_preview": "x" * 200,
        "result_truncated": True,
        "timed_out": False,
        "cancelled": False,
    }
    failed = _by_type(report, "tool.failed")[0]
    assert failed.source == "broken" and failed.payload["tool_call_id"] == "call_1"
    assert "nope" in failed.payload["error"]
    assert _by_type(report, "worker.completed")[0].payload == {}
    assert report.events[-1].payload == {} and report.events[-1].source == "Analyst"
    assert report.metrics["cost"] == 0.25 and report.metrics["total_tokens"] >= 12


def test_timed_out_tool_event_reports_the_flag() -> None:
    @tool(timeout=0.02)
    async def slow() -> str:
        await asyncio.sleep(1)
        return "late"

    desk = Desk(
        model=MODEL,
        adapter=ScriptedAdapter([call_tool("slow"), reply("ok")]),
        run_store=InMemoryRunStore(),
    )
    report = desk.run(Worker(name="w", tools=[slow]), Job(input="go"))
    failed = _by_type(report, "tool.failed")[0]
    assert failed.payload["timed_out"] is True and "timed out" in failed.payload["error"]
    assert report.status == "completed"


def test_on_event_listener_sees_every_event_in_order() -> None:
    seen: list[str] = []
    desk = Desk(
        model=MODEL, adapter=ScriptedAdapter([reply("hi there")]), run_store=InMemoryRunStore()
    )
    report = desk.run(
        Worker(name="w"), Job(input="go"), stream=True, on_event=lambda e: seen.append(e.event_id)
    )
    assert seen == [e.event_id for e in report.events]


def test_bus_handlers_receive_events_of_every_run() -> None:
    desk = Desk(
        model=MODEL, adapter=ScriptedAdapter([reply("a"), reply("b")]), run_store=InMemoryRunStore()
    )
    seen: list[str] = []
    desk.event_bus.subscribe("run.completed", lambda e: seen.append(e.run_id))
    first = desk.run(Worker(name="w"), Job(input="1"))
    second = desk.run(Worker(name="w"), Job(input="2"))
    assert seen == [first.run_id, second.run_id]


def test_handler_exceptions_never_break_a_run() -> None:
    @tool()
    def t() -> str:
        return "r"

    desk = Desk(
        model=MODEL,
        adapter=ScriptedAdapter([call_tool("t"), reply("done")]),
        run_store=InMemoryRunStore(),
    )

    def sync_broken(event: Event) -> None:
        raise RuntimeError("sync handler broke")

    async def async_broken(event: Event) -> None:
        raise RuntimeError("async handler broke")

    desk.event_bus.subscribe("*", sync_broken)
    desk.event_bus.subscribe("tool.completed", async_broken)
    report = desk.run(Worker(name="w", tools=[t]), Job(input="go"))
    assert report.status == "completed" and report.content == "done"
    errors = desk.event_bus.get_errors()
    messages = [str(e.handler_error) for e in errors]
    assert messages.count("sync handler broke") == len(report.events)
    assert messages.count("async handler broke") == 1  # awaited before run() returned


def test_on_event_listener_exception_never_breaks_a_run() -> None:
    desk = Desk(model=MODEL, adapter=ScriptedAdapter([reply("done")]), run_store=InMemoryRunStore())

    def listener(event: Event) -> None:
        raise RuntimeError("listener broke")

    report = desk.run(Worker(name="w"), Job(input="go"), on_event=listener)
    assert report.status == "completed" and report.content == "done"
    errors = desk.event_bus.get_errors()
    assert len(errors) == len(report.events) and errors[0].event_type == "run.started"


def test_async_handlers_finish_before_sync_run_returns() -> None:
    done: list[str] = []

    async def slow_handler(event: Event) -> None:
        await asyncio.sleep(0.02)
        done.append(event.type)

    desk = Desk(model=MODEL, adapter=ScriptedAdapter([reply("x")]), run_store=InMemoryRunStore())
    desk.event_bus.subscribe("run.completed", slow_handler)
    desk.run(Worker(name="w"), Job(input="go"))
    assert done == ["run.completed"]


async def test_async_handlers_can_be_awaited_after_arun() -> None:
    done: list[str] = []

    async def slow_handler(event: Event) -> None:
        await asyncio.sleep(0.02)
        done.append(event.type)

    desk = Desk(model=MODEL, adapter=ScriptedAdapter([reply("x")]), run_store=InMemoryRunStore())
    desk.event_bus.subscribe("run.completed", slow_handler)
    await desk.arun(Worker(name="w"), Job(input="go"))
    assert await desk.event_bus.await_pending() == []
    assert done == ["run.completed"]


def test_custom_runner_events_are_persisted_with_the_run(tmp_path: Path) -> None:
    from deskwork import RunConfig, RunState

    class Custom:
        name = "custom"
        runner_type = "custom"

        async def arun(self, config: RunConfig, job: Job) -> tuple[Report, RunState]:
            config.emit("custom.progress", "my_tool", {"percent": 50})
            child = await config.desk.arun(Worker(name="child"), Job(input="sub"))  # type: ignore[union-attr]
            report = Report(run_id=config.run_id, status="completed", content=child.content)
            state = RunState(
                run_id=config.run_id,
                status="completed",
                runner_type="custom",
                runner_name="custom",
                job=job.to_state(),
            )
            return report, state

        async def aresume(
            self, config: RunConfig, state: RunState, decision: Any, job: Job | None = None
        ) -> tuple[Report, RunState]:
            raise NotImplementedError

    desk = Desk(
        model=MODEL, adapter=ScriptedAdapter([reply("child says hi")]), storage_dir=tmp_path
    )
    report = desk.run(Custom(), Job(input="go"))
    assert report.content == "child says hi"
    assert [e.type for e in report.events] == ["run.started", "custom.progress", "run.completed"]
    progress = report.events[1]
    assert progress.source == "my_tool" and progress.payload == {"percent": 50}
    runs = desk.run_store.list_runs()
    assert len(runs) == 2 and {r.status for r in runs} == {"completed"}
