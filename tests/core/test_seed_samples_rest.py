"""The core document's samples that ``test_doc_samples`` does not run, run offline.

Each sample is the documented code with ``blackgeorge`` read as ``deskwork``; the only
change is ``adapter=ScriptedAdapter(...)`` (and ``storage_dir=tmp_path``) on the desk.
"""

from __future__ import annotations

import asyncio
import io
import json
import logging
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from deskwork import Desk, Event, EventType, Job, Report, Worker, Workforce
from deskwork.collaboration import Blackboard, Channel
from deskwork.core.tool_call import ToolCall
from deskwork.event_bus import EventBus
from deskwork.exceptions import ContextLimitError, EventHandlerError, EventLoopRunningError
from deskwork.logging import StructuredLogger, get_logger
from deskwork.memory import InMemoryMemoryStore, SQLiteMemoryStore
from deskwork.store import SQLiteRunStore
from deskwork.testing import (
    ScriptedAdapter,
    Turn,
    call_tool,
    call_tools,
    fail,
    reply,
    structured,
)
from deskwork.tools import (
    Toolbelt,
    Toolkit,
    ToolResult,
    create_subworker_tool,
    create_swarm_tool,
    tool,
    transfer_to_agent_tool,
)
from deskwork.tools.execution import aexecute_tool, execute_tool
from deskwork.utils import new_id, utc_now
from deskwork.workflow import (
    AsyncCondition,
    AsyncLoop,
    Condition,
    Loop,
    Parallel,
    Router,
    Step,
    WorkflowContext,
)

MODEL = "openai/gpt-5-nano"


def _desk(tmp_path: Path, *turns: Any) -> Desk:
    return Desk(model=MODEL, adapter=ScriptedAdapter(list(turns)), storage_dir=tmp_path)


def _replies(count: int) -> list[Any]:
    return [reply(f"r{i}") for i in range(count)]


def test_workflow_flow_combines_step_contents(tmp_path: Path) -> None:
    desk = _desk(tmp_path, reply("a"), reply("b"))
    analyst = Worker(name="Analyst")
    writer = Worker(name="Writer")
    flow = desk.flow([Step(analyst), Step(writer)])
    report = flow.run(Job(input="Analyze feedback"))
    assert report.status == "completed"
    assert report.content == "## Analyst\n\na\n\n## Writer\n\nb"


def test_workflow_step_parallel_condition_router_loop(tmp_path: Path) -> None:
    worker = Worker(name="Analyst")
    worker_a = Worker(name="A")
    worker_b = Worker(name="B")

    def build_job(context: WorkflowContext) -> Job:
        return Job(input={"task": "Analyze", "seed": context.job.input})

    def stop_when_done(ctx: WorkflowContext) -> bool:
        iteration = ctx.loop_iteration("analysis_loop")
        return iteration >= 3 or len(ctx.outputs) > 0

    step = Step(worker, job_builder=build_job)
    parallel = Parallel(Step(worker_a), Step(worker_b))
    condition = Condition(
        predicate=lambda ctx: bool(ctx.outputs),
        if_true=[Step(worker_a)],
        if_false=[Step(worker_b)],
    )
    router = Router(
        selector=lambda ctx: "fast",
        routes={"fast": [Step(worker_a)], "deep": [Step(worker_b)]},
    )
    loop = Loop(steps=[Step(worker_a)], stop=stop_when_done, max_iterations=5, name="analysis_loop")
    desk = _desk(tmp_path, *_replies(6))
    report = desk.flow([step, parallel, condition, router, loop]).run(Job(input="seed"))
    assert report.status == "completed"
    adapter = desk.adapter
    assert isinstance(adapter, ScriptedAdapter)
    assert '"seed": "seed"' in str(adapter.calls[0]["messages"][-1]["content"])
    headers = [part.split("\n")[0] for part in (report.content or "").split("## ")[1:]]
    assert headers == ["Analyst", "A", "B", "A", "A", "A"]


def test_workflow_loop_sample_stops_by_its_predicate(tmp_path: Path) -> None:
    worker_a = Worker(name="A")
    loop = Loop(
        steps=[Step(worker_a)],
        stop=lambda ctx: len(ctx.outputs) >= 3,
        max_iterations=5,
        name="analysis_loop",
    )
    report = _desk(tmp_path, *_replies(5)).flow([loop]).run(Job(input="go"))
    assert report.status == "completed"
    assert (report.content or "").count("## A") == 3


def test_workflow_async_condition_and_async_loop(tmp_path: Path) -> None:
    worker_a = Worker(name="A")
    worker_b = Worker(name="B")

    async def check_external_service(ctx: WorkflowContext) -> bool:
        await asyncio.sleep(0)
        return True

    async def should_stop(ctx: WorkflowContext) -> bool:
        return True

    condition = AsyncCondition(
        predicate=check_external_service, if_true=[Step(worker_a)], if_false=[Step(worker_b)]
    )
    loop = AsyncLoop(
        steps=[Step(worker_a)], stop=should_stop, max_iterations=10, name="polling_loop"
    )
    flow = _desk(tmp_path, *_replies(3)).flow([condition, loop])
    report = asyncio.run(flow.arun(Job(input="s")))
    assert report.status == "completed"
    assert report.content == "## A\n\nr0\n\n## A\n\nr1"


def test_workflow_pause_and_resume(tmp_path: Path) -> None:
    @tool(requires_confirmation=True)
    def publish(text: str) -> str:
        return f"published:{text}"

    desk = _desk(tmp_path, call_tool("publish", text="t"), reply("done"), reply("written"))
    flow = desk.flow([Step(Worker(name="Ops", tools=[publish])), Step(Worker(name="Writer"))])
    report = flow.run(Job(input="go"))
    assert report.status == "paused"
    report = flow.resume(report, True)
    assert report.status == "completed"
    assert report.content == "## Ops\n\ndone\n\n## Writer\n\nwritten"


def test_workforce_create_and_swarm_samples() -> None:
    w1 = Worker(name="Researcher")
    w2 = Worker(name="Writer")
    workforce = Workforce([w1, w2], mode="managed", name="team")
    assert workforce.name == "team" and workforce.mode == "managed"
    handoff_tool = transfer_to_agent_tool(["coder", "reviewer"])
    coder = Worker(name="coder", tools=[handoff_tool])
    reviewer = Worker(name="reviewer")
    swarm = Workforce([coder, reviewer], mode="swarm")
    assert swarm.mode == "swarm"
    assert handoff_tool.name == "transfer_to_agent"


def test_collaboration_channel_blackboard_and_workforce() -> None:
    channel = Channel()
    channel.send("worker_a", "worker_b", {"task": "analyze data"})
    channel.broadcast("manager", {"status": "starting"})
    messages = channel.receive("worker_b")
    assert [(m.sender, m.content) for m in messages] == [
        ("worker_a", {"task": "analyze data"}),
        ("manager", {"status": "starting"}),
    ]
    all_messages = channel.receive("worker_b", broadcast_mode="all")
    assert [m.sender for m in all_messages] == ["manager"]
    bb = Blackboard()
    bb.write("analysis_result", {"score": 95}, author="analyst")
    assert bb.read("analysis_result") == {"score": 95}
    seen: list[Any] = []
    bb.subscribe("analysis_result", lambda k, v, a: seen.append(a))
    bb.write("analysis_result", {"score": 96}, author="reviewer")
    assert seen == ["reviewer"]
    workforce = Workforce(
        [Worker(name="w1"), Worker(name="w2")], mode="collaborate", channel=channel, blackboard=bb
    )
    assert workforce.channel is channel and workforce.blackboard is bb


def test_session_create_send_history_load_and_close(tmp_path: Path) -> None:
    desk = _desk(tmp_path, *_replies(4))
    worker = Worker(name="Assistant", instructions="You are helpful")
    assert desk.session(worker).session_id
    session = desk.session(
        worker=worker, session_id="user-123", metadata={"user_id": "123", "topic": "support"}
    )
    assert session.run("Hello, I'm Alice").content == "r0"
    assert session.run("What's my name?").content == "r1"
    adapter = desk.adapter
    assert isinstance(adapter, ScriptedAdapter)
    sent = adapter.calls[-1]["messages"]
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "user"]
    restored = desk.session(worker, session_id="user-123")
    assert restored is not None
    assert restored.run("Continue our conversation").content == "r2"
    history = [f"{m.role}: {m.content}" for m in session.history()]
    assert history[-2:] == ["user: Continue our conversation", "assistant: r2"]
    job = Job(input="new message", initial_messages=session.history())
    assert len(job.initial_messages or []) == 6
    session.close()
    assert desk.session(worker, session_id="user-123").history() == []


def test_session_worker_binding(tmp_path: Path) -> None:
    desk = _desk(tmp_path)
    session = desk.session(Worker(name="worker1"))
    loaded = desk.session(Worker(name="worker2"), session_id=session.session_id)
    assert loaded is None


def test_session_streaming_samples(tmp_path: Path) -> None:
    desk = _desk(tmp_path, *_replies(3))
    session = desk.session(Worker(name="Teller"))
    report = session.run("Hello", stream=True)
    tokens = [e.payload["token"] for e in report.events if e.type == "stream.token"]
    assert "".join(tokens) == "r0"
    kinds = [event.type for event in session.stream_run("Tell me a story")]
    assert "stream.token" in kinds and "worker.completed" in kinds

    async def collect() -> list[str]:
        return [event.type async for event in session.astream_run("Count to 10")]

    assert "stream.token" in asyncio.run(collect())


def test_session_thinking_drop_params_and_extra_body(tmp_path: Path) -> None:
    desk = _desk(tmp_path, *_replies(3))
    session = desk.session(Worker(name="Thinker"))
    session.run(
        "Which is larger: 9.11 or 9.8?", thinking={"type": "enabled", "budget_tokens": 1024}
    )
    adapter = desk.adapter
    assert isinstance(adapter, ScriptedAdapter)
    assert adapter.calls[-1]["thinking"] == {"type": "enabled", "budget_tokens": 1024}
    session.run("Explain quantum computing", thinking={"type": "enabled"}, drop_params=True)
    assert adapter.calls[-1]["drop_params"] is True
    extra = {"guardrails": ["pii-detection"], "custom_setting": 42}
    session.run("Analyze this data", extra_body=extra)
    assert adapter.calls[-1]["extra_body"] == extra
    for msg in session.history():
        if msg.role == "assistant" and not msg.tool_calls:
            assert msg.reasoning_content is None
            assert msg.thinking_blocks is None


def _call(name: str, **arguments: Any) -> ToolCall:
    return ToolCall(id="call-1", name=name, arguments=arguments)


def test_tools_define_user_input_and_input_key(tmp_path: Path) -> None:
    @tool(description="Add two numbers")
    def add(a: int, b: int) -> int:
        return a + b

    @tool(requires_user_input=True, input_key="answer")
    def ask(question: str, answer: str) -> str:
        return answer

    assert add.description == "Add two numbers"
    assert execute_tool(add, _call("add", a=1, b=2)).content == "3"
    desk = _desk(tmp_path, call_tool("ask", question="Q?"), lambda m, t: str(m[-1]["content"]))
    report = desk.run(Worker(name="W", tools=[ask]), Job(input="x"))
    assert report.status == "paused" and report.pending_action is not None
    assert report.pending_action.type == "user_input"
    report = desk.resume(report, "42")
    assert report.content == "42"


def test_tools_timeouts_retries_cancellation_and_toolresult() -> None:
    @tool(timeout=5.0, retries=3, retry_delay=1.0)
    async def fetch_data(url: str) -> str:
        return url

    @tool()
    def fetch_status(code: int) -> ToolResult:
        if code == 200:
            return ToolResult(content="ok", data={"code": code})
        return ToolResult(error="not ok")

    assert (fetch_data.timeout, fetch_data.retries, fetch_data.retry_delay) == (5.0, 3, 1.0)
    ok = execute_tool(fetch_status, _call("fetch_status", code=200))
    assert (ok.content, ok.data) == ("ok", {"code": 200})
    assert execute_tool(fetch_status, _call("fetch_status", code=500)).error == "not ok"


class AnalysisResult(BaseModel):
    findings: list[str]
    confidence: float


def test_tools_output_type_validation() -> None:
    @tool(output_type=AnalysisResult)
    def analyze(text: str) -> dict[str, Any]:
        return {"findings": ["insight 1", "insight 2"], "confidence": 0.85}

    @tool(output_type=AnalysisResult)
    def broken(text: str) -> dict[str, Any]:
        return {"findings": "none"}

    result = execute_tool(analyze, _call("analyze", text="t"))
    assert result.error is None
    assert result.data == {"findings": ["insight 1", "insight 2"], "confidence": 0.85}
    assert execute_tool(broken, _call("broken", text="t")).error


def test_tools_toolbelt_handoff_and_subworker_factories(tmp_path: Path) -> None:
    assert Toolkit is Toolbelt
    Toolbelt()
    handoff_tool = transfer_to_agent_tool(available_agents=["researcher", "coder"])
    Worker(name="router", tools=[handoff_tool])
    desk = _desk(tmp_path)

    @tool()
    def lookup(q: str) -> str:
        return q

    spawn = create_subworker_tool(desk=desk, max_subworkers=5, max_tools_per_subworker=8)
    assert spawn.name == "spawn_subworker"
    create_subworker_tool(
        desk=desk,
        available_tools=[lookup],
        default_model="deepseek/deepseek-chat",
        allowed_models={"deepseek/deepseek-chat"},
        max_subworkers=5,
        max_tools_per_subworker=8,
        max_iterations=10,
        max_tool_calls=10,
        structured_output_retries=1,
    )
    assert create_swarm_tool(desk=desk).name == "spawn_agent"


def test_tool_hooks_samples() -> None:
    seen: list[str] = []

    def validate_positive(call: ToolCall) -> None:
        for key, value in call.arguments.items():
            if isinstance(value, (int, float)) and value < 0:
                raise ValueError(f"{key} must be positive, got {value}")

    @tool(pre=(validate_positive,))
    def square_root(x: float) -> float:
        seen.append("ran")
        return float(x**0.5)

    def failing_post_hook(call: ToolCall, result: ToolResult) -> None:
        raise Exception("Post-hook failure")

    @tool(post=(failing_post_hook,))
    def my_tool(value: str) -> str:
        return value

    async def async_pre_hook(call: ToolCall) -> None:
        seen.append(f"pre:{call.name}")

    async def async_post_hook(call: ToolCall, result: ToolResult) -> None:
        seen.append(f"post:{result.content}")

    @tool(pre=(async_pre_hook,), post=(async_post_hook,))
    async def async_tool(value: str) -> str:
        return value.upper()

    refused = execute_tool(square_root, _call("square_root", x=-4))
    assert refused.error and "x must be positive, got -4" in refused.error and seen == []
    failed = execute_tool(my_tool, _call("my_tool", value="v"))
    assert failed.error and "Post-hook failure" in failed.error
    assert asyncio.run(aexecute_tool(async_tool, _call("async_tool", value="v"))).content == "V"
    assert seen == ["pre:async_tool", "post:V"]


def test_tools_cancellation_event_already_set_does_not_run_the_tool() -> None:
    fetched: list[str] = []

    @tool(timeout=5.0)
    async def fetch_data(url: str) -> str:
        fetched.append(url)
        return url

    async def run_cancelled() -> ToolResult:
        cancel_event = asyncio.Event()
        cancel_event.set()
        return await aexecute_tool(
            fetch_data, _call("fetch_data", url="u"), cancel_event=cancel_event
        )

    result = asyncio.run(run_cancelled())
    assert result.cancelled and result.error == "tool execution cancelled"
    assert fetched == []


@tool()
def search(query: str) -> str:
    """Search for information"""
    return f"Results for: {query}"


def test_tutorial_6_managed_workforce(tmp_path: Path) -> None:
    desk = _desk(tmp_path, structured({"worker": "Writer"}), reply("written"))
    researcher = Worker(name="Researcher", tools=[search])
    writer = Worker(name="Writer")
    workforce = Workforce([researcher, writer], mode="managed")
    report = desk.run(workforce, Job(input="Research and write about AI"))
    assert report.status == "completed" and report.content == "written"


def test_tutorial_7_swarm_handoff(tmp_path: Path) -> None:
    handoff = transfer_to_agent_tool(["Writer", "Editor"])
    researcher = Worker(name="Researcher", tools=[search, handoff])
    writer = Worker(name="Writer", tools=[handoff])
    editor = Worker(name="Editor")
    workforce = Workforce([researcher, writer, editor], mode="swarm")
    handoff_call = call_tool("transfer_to_agent", agent_name="Writer", context="draft it")
    desk = _desk(tmp_path, handoff_call, reply("draft"))
    report = desk.run(workforce, Job(input="Write about AI"))
    assert report.status == "completed" and report.content == "draft"
    assert handoff.schema["properties"]["agent_name"]["enum"] == ["Writer", "Editor"]


def test_workforce_configuration_custom_reducer(tmp_path: Path) -> None:
    def custom_reducer(reports: list[Report]) -> Report:
        combined_content = "\n\n".join(r.content or "" for r in reports)
        merged_errors = [error for report in reports for error in report.errors]
        return reports[0].model_copy(
            update={
                "status": "failed" if merged_errors else "completed",
                "content": combined_content,
                "errors": merged_errors,
                "pending_action": None,
            }
        )

    w1 = Worker(name="w1")
    w2 = Worker(name="w2")
    workforce = Workforce(workers=[w1, w2], mode="collaborate", reducer=custom_reducer)
    report = _desk(tmp_path, reply("one"), reply("two")).run(workforce, Job(input="x"))
    assert report.status == "completed" and report.content == "one\n\ntwo"


def test_desk_async_running_and_sync_run_inside_a_loop(tmp_path: Path) -> None:
    desk = _desk(tmp_path, reply("streamed"))
    worker = Worker(name="Researcher")

    async def in_loop() -> Report:
        with pytest.raises(EventLoopRunningError):
            desk.run(worker, Job(input="x"))
        return await desk.arun(worker, Job(input="x"), stream=True)

    report = asyncio.run(in_loop())
    assert report.status == "completed"
    assert [e.payload["token"] for e in report.events if e.type == "stream.token"] == ["streamed"]


def test_collaboration_blackboard_and_channel_operations() -> None:
    blackboard = Blackboard()
    blackboard.write("analysis_result", {"score": 95}, author="analyst")
    assert blackboard.exists("analysis_result")
    entry = blackboard.read_entry("analysis_result")
    assert entry is not None
    assert (entry.key, entry.value, entry.author) == ("analysis_result", {"score": 95}, "analyst")
    assert entry.created_at == entry.updated_at
    assert {k: e.value for k, e in blackboard.all_entries().items()} == {
        "analysis_result": {"score": 95}
    }
    writes: list[str] = []
    blackboard.subscribe_all(lambda key, value, author: writes.append(author))
    blackboard.write("other", 1, author="reviewer")
    assert writes == ["reviewer"]
    blackboard.delete("analysis_result")
    assert blackboard.keys() == ["other"]
    blackboard.clear()
    assert blackboard.keys() == []
    channel = Channel()
    message = channel.send(
        sender="worker_a",
        recipient="worker_b",
        content={"task": "analyze data"},
        metadata={"priority": "high"},
    )
    assert message.id and message.metadata == {"priority": "high"}
    channel.broadcast(sender="manager", content={"status": "starting"}, metadata={"phase": "1"})
    assert len(channel.peek("worker_b")) == 2
    assert len(channel.receive("worker_b", clear=False, broadcast_mode="one_shot")) == 2
    assert len(channel.all_messages()) == 2
    channel.clear("worker_b")
    channel.clear()
    assert channel.all_messages() == []


def test_collaboration_async_methods() -> None:
    blackboard = Blackboard()
    channel = Channel()

    async def use() -> tuple[Any, Any, list[str]]:
        await blackboard.awrite("key", 1, "author")
        value = await blackboard.aread("key")
        sent = await channel.asend("sender", "recipient", "content", {"m": 1})
        received = await channel.areceive("recipient", clear=True, broadcast_mode="one_shot")
        return value, sent, [m.id for m in received]

    value, sent, received = asyncio.run(use())
    assert value == 1 and received == [sent.id]


def test_event_bus_error_collection_and_await_pending() -> None:
    bus = EventBus()

    async def failing(event: Event) -> None:
        raise RuntimeError("nope")

    bus.subscribe("custom.event", failing)
    event = Event(
        event_id=new_id(),
        type="custom.event",
        timestamp=utc_now(),
        run_id="run-123",
        source="my_component",
        payload={"data": "value"},
    )
    bus.emit(event)
    errors = bus.get_errors()
    assert [(e.event_type, str(e.handler_error)) for e in errors] == [("custom.event", "nope")]
    bus.clear_errors()
    assert bus.get_errors() == []

    async def pending() -> None:
        bus.emit(event)
        with pytest.raises(EventHandlerError):
            await bus.await_pending(raise_on_error=True)

    asyncio.run(pending())
    bus.unsubscribe("custom.event", failing)
    assert EventType.WORKER_STARTED == "worker.started"


def test_events_stream_token_types_tool_previews_and_error_aggregation(tmp_path: Path) -> None:
    @tool()
    def echo(text: str) -> str:
        if text == "bad":
            raise ValueError("boom")
        return text

    turns = [call_tool("echo", text="hi"), reply("done"), call_tool("echo", text="bad"), reply("x")]
    desk = Desk(model=MODEL, adapter=ScriptedAdapter(turns), storage_dir=tmp_path, stream=True)
    tokens: list[dict[str, Any]] = []
    previews: list[tuple[str, Any]] = []
    failures: list[tuple[str, str, Any]] = []
    desk.event_bus.subscribe("stream.token", lambda e: tokens.append(dict(e.payload)))
    desk.event_bus.subscribe(
        "tool.completed", lambda e: previews.append((e.source, e.payload.get("result_preview")))
    )
    desk.event_bus.subscribe(
        "tool.failed", lambda e: failures.append((e.type, e.source, e.payload.get("error")))
    )
    worker = Worker(name="assistant", tools=[echo])
    report = desk.run(worker, Job(input="hello"))
    assert {t["type"] for t in tokens} == {"tool_argument", "content"}
    assert previews == [("echo", "hi")]
    stored = [e.type for e in desk.run_store.get_events(report.run_id)]
    assert stored[0] == "run.started" and stored[-1] == "run.completed"
    desk.run(worker, Job(input="again"))
    assert failures == [("tool.failed", "echo", "ValueError: boom")]


def test_storage_and_memory_desk_integration(tmp_path: Path) -> None:
    desk = _desk(tmp_path, reply("out1"))
    assert isinstance(desk.memory_store, InMemoryMemoryStore)
    assert isinstance(desk.run_store, SQLiteRunStore)
    worker = Worker(name="Analyst", memory_scope="analyst:session-1")
    desk.memory_store.write("context", "The user likes cats", "analyst:session-1")
    desk.run(worker, Job(input="hi"))
    adapter = desk.adapter
    assert isinstance(adapter, ScriptedAdapter)
    assert adapter.calls[0]["messages"][0]["content"].endswith("The user likes cats")
    assert desk.memory_store.read("last_output", "analyst:session-1") == "out1"
    for store in (InMemoryMemoryStore(), SQLiteMemoryStore(str(tmp_path / "memory.db"))):
        store.write("k", {"a": "hello world"}, "desk")
        assert store.search("hello", "desk") == [("k", {"a": "hello world"})]
        store.reset("desk")
        assert store.read("k", "desk") is None


def test_logging_levels_context_and_data_types() -> None:
    stream = io.StringIO()
    logger = get_logger("seed_samples_levels", level=logging.WARNING)
    logger.logger.addHandler(logging.StreamHandler(stream))
    logger.debug("This won't be logged")
    logger.info("Neither will this")
    logger.warning("This will be logged")
    logger.error("So will this")
    assert [json.loads(line)["message"] for line in stream.getvalue().splitlines()] == [
        "This will be logged",
        "So will this",
    ]
    base_logger = get_logger("seed_samples_context").with_context(service="api")
    request_logger = base_logger.with_context(request_id="req-456", user_id="user-789")
    assert base_logger.context == {"service": "api"}
    assert request_logger.context == {
        "service": "api",
        "request_id": "req-456",
        "user_id": "user-789",
    }
    assert isinstance(StructuredLogger("seed_samples_api", level=logging.INFO), StructuredLogger)


def _last_content(messages: list[dict[str, Any]], tools: Any) -> str:
    return str(messages[-1]["content"])


def test_subworkers_minimal_example_and_tool_contract(tmp_path: Path) -> None:
    @tool(requires_confirmation=True)
    def risky(x: str) -> str:
        return x

    spawn = ("spawn_subworker", {"name": "Scout", "instructions": "Find", "task": "List"})
    paused_spawn = {"name": "Scout2", "instructions": "i", "task": "t", "tools": ["risky"]}
    turns = [
        call_tools(spawn),
        reply("child out"),
        _last_content,
        call_tool("spawn_subworker", **paused_spawn),
        call_tool("risky", x="1"),
        _last_content,
    ]
    desk = Desk(
        model="deepseek/deepseek-chat", adapter=ScriptedAdapter(turns), storage_dir=tmp_path
    )
    spawn_subworker = create_subworker_tool(desk=desk, max_subworkers=3, available_tools=[risky])
    lead = Worker(
        name="Lead",
        model="deepseek/deepseek-chat",
        tools=[spawn_subworker],
        instructions="Delegate work with spawn_subworker and synthesize results.",
    )
    assert spawn_subworker.schema["required"] == ["name", "instructions", "task"]
    report = desk.run(lead, Job(input="Research top agent frameworks."))
    assert report.status == "completed" and report.content == "child out"
    result = report.tool_calls[0].result
    assert result is not None and result.content == "child out"
    assert result.data["status"] == "completed" and result.data["worker"] == "Scout"
    child = desk.run_store.get_run(result.data["run_id"])
    assert child is not None and child.status == "completed"
    report = desk.run(lead, Job(input="Delegate a risky task."))
    paused = report.tool_calls[0].result
    assert paused is not None and paused.error
    assert paused.data["status"] == "paused"
    assert paused.data["pending_action_type"] == "confirmation"


@pytest.mark.parametrize(
    ("decision", "ran"),
    [
        (True, True),
        ("yes", True),
        ("approve", True),
        ("confirm", True),
        ("sure", True),
        (False, False),
        (None, False),
        ("  ", False),
        ("no", False),
        ("decline", False),
        ("deny", False),
        ("cancel", False),
    ],
)
def test_worker_confirmation_decisions(tmp_path: Path, decision: Any, ran: bool) -> None:
    @tool(requires_confirmation=True)
    def risky(x: str) -> str:
        return "ran"

    desk = _desk(tmp_path, call_tool("risky", x="1"), _last_content)
    failed: list[Any] = []
    desk.event_bus.subscribe("tool.failed", lambda e: failed.append(e.payload.get("error")))
    report = desk.run(Worker(name="W", tools=[risky]), Job(input="go"))
    assert [e.type for e in report.events][-2:] == ["worker.paused", "run.paused"]
    report = desk.resume(report, decision)
    assert report.status == "completed"
    if ran:
        assert report.content == "ran" and failed == []
    else:
        assert failed == ["Tool execution declined"]


def test_worker_pauses_after_prior_calls_of_the_same_turn(tmp_path: Path) -> None:
    @tool(requires_confirmation=True)
    def risky(x: str) -> str:
        return "ran"

    @tool()
    def first(x: str) -> str:
        return "first:" + x

    @tool()
    def last(x: str) -> str:
        return "last:" + x

    turn = call_tools(("first", {"x": "1"}), ("risky", {"x": "2"}), ("last", {"x": "3"}))
    desk = _desk(tmp_path, turn, reply("fin"))
    report = desk.run(Worker(name="W", tools=[first, last, risky]), Job(input="go"))
    assert report.status == "paused"
    results = [c.result for c in report.tool_calls]
    assert results[0] is not None and results[0].content == "first:1"
    assert results[1] is None
    assert results[2] is not None and results[2].error
    report = desk.resume(report, True)
    assert report.status == "completed"
    tools = [m.content for m in report.messages if m.role == "tool"]
    assert tools[:2] == ["first:1", "ran"]


def test_worker_job_input_and_system_message(tmp_path: Path) -> None:
    desk = _desk(tmp_path, reply("x"))
    job = Job(input={"k": [1, 2]}, expected_output="A list", constraints=["no emojis"])
    desk.run(Worker(name="W", instructions="Be brief"), job)
    adapter = desk.adapter
    assert isinstance(adapter, ScriptedAdapter)
    system, user = adapter.calls[0]["messages"]
    assert system["role"] == "system"
    assert all(part in system["content"] for part in ("Be brief", "A list", "no emojis"))
    assert user == {"role": "user", "content": '{"k": [1, 2]}'}


def test_worker_limits_fail_the_run(tmp_path: Path) -> None:
    @tool()
    def step(x: str) -> str:
        return x

    turns = [call_tool("step", x=str(i)) for i in range(3)]
    desk = Desk(model=MODEL, adapter=ScriptedAdapter(turns), storage_dir=tmp_path, max_iterations=2)
    report = desk.run(Worker(name="W", tools=[step]), Job(input="go"))
    assert report.status == "failed" and "max_iterations" in report.errors[0]
    many = call_tools(("step", {"x": "1"}), ("step", {"x": "2"}), ("step", {"x": "3"}))
    desk = Desk(
        model=MODEL, adapter=ScriptedAdapter([many]), storage_dir=tmp_path, max_tool_calls=2
    )
    report = desk.run(Worker(name="W", tools=[step]), Job(input="go"))
    assert report.status == "failed" and "max_tool_calls" in report.errors[0]


def test_worker_tools_override(tmp_path: Path) -> None:
    @tool()
    def a(x: str) -> str:
        return "a:" + x

    @tool()
    def b(x: str) -> str:
        return "b:" + x

    @tool(name="b")
    def b2(x: str) -> str:
        return "b2:" + x

    desk = _desk(tmp_path, call_tool("b", x="1"), reply("done"))
    worker = Worker(name="W", tools=[a, b])
    desk.run(worker, Job(input="go", tools_override=["b", "unknown"]))
    adapter = desk.adapter
    assert isinstance(adapter, ScriptedAdapter)
    assert [t["function"]["name"] for t in adapter.calls[0]["tools"]] == ["b"]
    desk = _desk(tmp_path, call_tool("b", x="1"), reply("done"))
    report = desk.run(worker, Job(input="go", tools_override=[b, "a", b2]))
    result = report.tool_calls[0].result
    assert result is not None and result.content == "b2:1"


def test_session_multi_turn_reasoning_is_cleared_from_history(tmp_path: Path) -> None:
    turns = [reply("9.11", reasoning="compare"), reply("3", reasoning="count")]
    desk = _desk(tmp_path, *turns)
    session = desk.session(Worker(name="Thinker"))
    report1 = session.run("What is 9.11 vs 9.8?", thinking={"type": "enabled"})
    assert report1.reasoning_content == "compare"
    report2 = session.run("How many Rs in strawberry?")
    assert report2.reasoning_content == "count"
    adapter = desk.adapter
    assert isinstance(adapter, ScriptedAdapter)
    assert adapter.calls[1]["messages"][1] == {"role": "assistant", "content": "9.11"}
    for msg in session.history():
        if msg.role == "assistant" and not msg.tool_calls:
            assert msg.reasoning_content is None
            assert msg.thinking_blocks is None


def test_workforce_resume_collaborate_and_swarm(tmp_path: Path) -> None:
    @tool(requires_confirmation=True)
    def act(x: str) -> str:
        return "acted"

    w1 = Worker(name="w1", tools=[act])
    w2 = Worker(name="w2")
    desk = _desk(tmp_path, call_tool("act", x="1"), reply("one"), reply("two"))
    report = desk.run(Workforce([w1, w2], mode="collaborate"), Job(input="x"))
    assert report.status == "paused"
    report = desk.resume(report, True)
    assert report.status == "completed"
    assert "one" in (report.content or "") and "two" in (report.content or "")
    handoff = transfer_to_agent_tool(["b"])
    a = Worker(name="a", tools=[handoff])
    b = Worker(name="b", tools=[act])
    turns = [
        call_tool("transfer_to_agent", agent_name="b"),
        call_tool("act", x="1"),
        reply("b done"),
    ]
    desk = _desk(tmp_path, *turns)
    report = desk.run(Workforce([a, b], mode="swarm"), Job(input="x"))
    assert report.status == "paused" and report.pending_action is not None
    assert report.pending_action.tool_call.name == "act"
    report = desk.resume(report, True)
    assert report.status == "completed" and report.content == "b done"


class Verdict(BaseModel):
    title: str


def test_desk_memory_integration_order_and_last_output(tmp_path: Path) -> None:
    desk = _desk(tmp_path, reply("x"), structured({"title": "v"}))
    desk.memory_store.write("context", "CTX", "s1")
    leading = [{"role": "system", "content": "SYS2"}, {"role": "user", "content": "old"}]
    worker = Worker(name="W", instructions="INSTR", memory_scope="s1")
    desk.run(worker, Job(input="hi", initial_messages=leading))
    adapter = desk.adapter
    assert isinstance(adapter, ScriptedAdapter)
    roles = [(m["role"], m["content"]) for m in adapter.calls[0]["messages"]]
    assert roles[:3] == [("system", "INSTR"), ("system", "SYS2"), ("system", "Context:\nCTX")]
    desk.run(Worker(name="J", memory_scope="s2"), Job(input="hi", response_schema=Verdict))
    assert desk.memory_store.read("last_output", "s2") == {"title": "v"}


def test_desk_context_window_reactive_and_disabled(tmp_path: Path) -> None:
    error = ContextLimitError("context_length_exceeded: too long")
    history = [{"role": "user", "content": f"m{i}"} for i in range(6)]
    turns = [fail(error), reply("SUMMARY"), reply("ok")]
    report = _desk(tmp_path, *turns).run(
        Worker(name="W"), Job(input="hi", initial_messages=history)
    )
    assert report.status == "completed" and report.content == "ok"
    desk = Desk(
        model=MODEL,
        adapter=ScriptedAdapter([fail(error)]),
        storage_dir=tmp_path,
        respect_context_window=False,
    )
    report = desk.run(Worker(name="W"), Job(input="hi", initial_messages=history))
    assert report.status == "failed" and "context limit" in report.errors[0]


def test_session_survives_a_restart_and_stays_bound_to_its_worker(tmp_path: Path) -> None:
    worker = Worker(name="Assistant")
    desk = _desk(tmp_path, reply("a"))
    session = desk.session(worker=worker, session_id="user-123", metadata={"user_id": "123"})
    session.run("hi")
    desk.close()
    restarted = _desk(tmp_path, reply("b"))
    restored = restarted.session(worker, session_id="user-123")
    assert restored is not None
    assert [m.content for m in restored.history()] == ["hi", "a"]
    assert restored.run("Continue our conversation").content == "b"
    assert restarted.session(Worker(name="Other"), session_id="user-123") is None


@pytest.mark.parametrize(
    ("selection", "chosen"),
    [
        ({"worker": "Beta"}, "Beta"),
        ({"worker": "the beta team"}, "Beta"),
        ({"worker": "nobody"}, "Alpha"),
    ],
)
def test_workforce_managed_selection_rules(
    tmp_path: Path, selection: dict[str, str], chosen: str
) -> None:
    @tool()
    def lookup(q: str) -> str:
        return q

    manager = Worker(name="Boss", tools=[lookup])
    workforce = Workforce(
        [Worker(name="Alpha"), Worker(name="Beta")], mode="managed", manager=manager
    )
    desk = _desk(tmp_path, structured(selection), reply("done"))
    report = desk.run(workforce, Job(input="x"))
    assert report.status == "completed"
    started = [e.source for e in report.events if e.type == "worker.started"]
    assert started == ["Boss", chosen]
    adapter = desk.adapter
    assert isinstance(adapter, ScriptedAdapter)
    assert not adapter.calls[0]["tools"]


def test_workforce_swarm_handoff_rules(tmp_path: Path) -> None:
    handoff = transfer_to_agent_tool(["x", "y"])
    x = Worker(name="x", tools=[handoff])
    y = Worker(name="y", tools=[handoff])
    hops = [call_tool("transfer_to_agent", agent_name=n) for n in ["y", "x"] * 3]
    desk = _desk(tmp_path, *hops)
    report = desk.run(Workforce([x, y], mode="swarm", max_handoffs=3), Job(input="go"))
    assert report.status == "failed" and "max_handoffs" in report.errors[0]
    desk = _desk(tmp_path, call_tool("transfer_to_agent", agent_name="z"), reply("stay"))
    report = desk.run(Workforce([x, y], mode="swarm"), Job(input="go"))
    assert report.status == "completed" and report.content == "stay"


def test_workflow_composites_short_circuit_and_aresume(tmp_path: Path) -> None:
    @tool(requires_confirmation=True)
    def act(x: str) -> str:
        return "acted"

    ops = Worker(name="Ops", tools=[act])
    inner = Worker(name="Inner")
    condition = Condition(predicate=lambda ctx: True, if_true=[Step(ops), Step(inner)], if_false=[])
    router = Router(selector=lambda ctx: "a", routes={"a": [Step(ops), Step(inner)]})
    for node in (condition, router):
        turns = [call_tool("act", x="1"), reply("ok"), reply("inner"), reply("after")]
        desk = _desk(tmp_path, *turns)
        flow = desk.flow([node, Step(Worker(name="After"))])
        report = flow.run(Job(input="x"))
        assert report.status == "paused"
        adapter = desk.adapter
        assert isinstance(adapter, ScriptedAdapter) and len(adapter.calls) == 1
        report = asyncio.run(flow.aresume(report, True))
        assert report.status == "completed"
        assert report.content == "## Ops\n\nok\n\n## Inner\n\ninner\n\n## After\n\nafter"
        desk = _desk(tmp_path, fail(RuntimeError("boom")), reply("never"))
        report = desk.flow([node, Step(Worker(name="After"))]).run(Job(input="x"))
        assert report.status == "failed" and "boom" in report.errors[0]


@pytest.mark.parametrize(
    ("cost", "printed"), [(0.00042, "Cost: $0.000420"), (None, "Cost: $0.000000")]
)
def test_cost_tracking_sample_with_a_known_and_an_unknown_cost(
    tmp_path: Path, cost: float | None, printed: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """The seed's "Cost tracking" handler reads ``payload.get('cost', 0)``: ``cost`` is absent
    when the price is unknown (an unregistered model), not ``None``, which it cannot format."""
    desk = _desk(tmp_path, Turn(content="Hi!", usage={"total_tokens": 12}, cost=cost))

    # Track LLM costs
    def on_llm_completed(event: Event) -> None:
        payload = event.payload
        print(f"Model: {payload['model']}")
        print(f"Cost: ${payload.get('cost', 0):.6f}")
        print(f"Tokens: {payload['total_tokens']}")
        print(f"Latency: {payload['latency_ms']}ms")

    desk.event_bus.subscribe("llm.completed", on_llm_completed)
    worker = Worker(name="assistant")
    report = desk.run(worker, Job(input="Hello"))

    assert report.status == "completed"
    out = capsys.readouterr().out
    assert printed in out and "Tokens: 12" in out
