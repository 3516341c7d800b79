"""The code samples of the core documentation, run offline with ``ScriptedAdapter``.

Each sample is the documented code with ``blackgeorge`` read as ``deskwork``; the only
change is ``adapter=ScriptedAdapter(...)`` (and ``storage_dir=tmp_path``) on the desk.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, TypeAdapter

from deskwork import (
    AssistantMessagePayload,
    Desk,
    DeskworkError,
    Event,
    EventType,
    Job,
    LLMCompletedPayload,
    LLMFailedPayload,
    Report,
    RunConfig,
    RunFailedPayload,
    RunStartedPayload,
    StepCompletedPayload,
    StepPausedPayload,
    StreamTokenPayload,
    ToolCompletedPayload,
    ToolFailedPayload,
    ToolStartedPayload,
    Worker,
    WorkerContextSummarizedPayload,
    WorkerFailedPayload,
    WorkerPausedPayload,
    WorkforcePausedPayload,
    encode_file,
)
from deskwork.adapters.base import BaseModelAdapter, ModelResponse
from deskwork.core.types import RunStatus
from deskwork.event_bus import EventBus
from deskwork.store import RunRecord, RunState, RunStore
from deskwork.testing import ScriptedAdapter, call_tool, fail, reply, structured
from deskwork.tools import Toolbelt, tool
from deskwork.utils import new_id, utc_now
from deskwork.worker_context import is_context_limit_error

MODEL = "openai/gpt-5-nano"


def _desk(tmp_path: Path, *turns: Any, **kwargs: Any) -> Desk:
    return Desk(model=MODEL, adapter=ScriptedAdapter(turns), storage_dir=tmp_path, **kwargs)


def _echo_last_tool(messages: list[dict[str, Any]], tools: Any) -> str:
    return str(messages[-1]["content"])


def test_quickstart_first_run(tmp_path: Path) -> None:
    desk = _desk(tmp_path, reply("A short summary of the topic."))
    worker = Worker(name="Researcher")
    job = Job(input="Summarize this topic", expected_output="A short summary")
    report = desk.run(worker, job)
    assert report.status == "completed"
    assert report.content == "A short summary of the topic."
    adapter = desk.adapter
    assert isinstance(adapter, ScriptedAdapter)
    sent = adapter.calls[0]["messages"]
    assert sent[0]["role"] == "system" and "A short summary" in sent[0]["content"]
    assert sent[-1] == {"role": "user", "content": "Summarize this topic"}
    assert adapter.calls[0]["model"] == MODEL
    assert (tmp_path / "deskwork.db").is_file()


def test_quickstart_add_a_tool(tmp_path: Path) -> None:
    @tool(description="Echo text back")
    def echo(text: str) -> str:
        return text

    desk = _desk(tmp_path, call_tool("echo", text="hello"), _echo_last_tool)
    worker = Worker(name="Agent", tools=[echo])
    report = desk.run(worker, Job(input="Call echo with text=hello"))
    assert report.status == "completed"
    assert report.content == "hello"
    assert report.tool_calls[0].result is not None
    assert report.tool_calls[0].result.content == "hello"


def test_quickstart_pause_and_resume(tmp_path: Path) -> None:
    @tool(requires_confirmation=True)
    def risky(action: str) -> str:
        return f"ok:{action}"

    desk = _desk(tmp_path, call_tool("risky", action="reboot"), _echo_last_tool)
    worker = Worker(name="Ops", tools=[risky])
    report = desk.run(worker, Job(input="Run the risky action"))
    assert report.status == "paused" and report.pending_action is not None
    report = desk.resume(report, True)
    assert report.status == "completed"
    assert report.content == "ok:reboot"


class Summary(BaseModel):
    title: str
    bullets: list[str]


def test_quickstart_structured_output(tmp_path: Path) -> None:
    desk = _desk(tmp_path, structured({"title": "T", "bullets": ["a", "b"]}))
    worker = Worker(name="Writer", model=MODEL)
    report = desk.run(worker, Job(input="Summarize the report", response_schema=Summary))
    assert report.status == "completed"
    assert report.data == Summary(title="T", bullets=["a", "b"])
    assert isinstance(report.data, Summary)


def test_tutorial_2_tool_docstring_becomes_description(tmp_path: Path) -> None:
    @tool()
    def search(query: str) -> str:
        """Search for information"""
        return f"Results for: {query}"

    assert search.description == "Search for information"
    desk = _desk(tmp_path, call_tool("search", query="Python tutorials"), _echo_last_tool)
    report = desk.run(Worker(name="Agent", tools=[search]), Job(input="Search for Python"))
    assert report.content == "Results for: Python tutorials"


class Analysis(BaseModel):
    sentiment: str
    confidence: float


def test_tutorial_3_structured_output(tmp_path: Path) -> None:
    desk = _desk(tmp_path, structured({"sentiment": "positive", "confidence": 0.95}))
    job = Job(input="Analyze: 'I love this product!'", response_schema=Analysis)
    report = desk.run(Worker(name="Analyst"), job)
    assert report.data == Analysis(sentiment="positive", confidence=0.95)


def test_tutorial_4_pause_prompt_and_resume(tmp_path: Path) -> None:
    deleted: list[str] = []

    @tool(requires_confirmation=True)
    def delete_file(path: str) -> str:
        deleted.append(path)
        return f"Deleted: {path}"

    desk = _desk(tmp_path, call_tool("delete_file", path="config.yaml"), reply("Done"))
    report = desk.run(Worker(name="Agent", tools=[delete_file]), Job(input="Delete config.yaml"))
    assert report.status == "paused"
    assert report.pending_action is not None
    assert report.pending_action.prompt == "Confirm delete_file (config.yaml)"
    assert report.pending_action.type == "confirmation"
    assert deleted == []
    report = desk.resume(report, True)
    assert report.status == "completed" and deleted == ["config.yaml"]


def test_tutorial_5_events_wildcard_subscription(tmp_path: Path) -> None:
    @tool()
    def search(query: str) -> str:
        return "r"

    seen: list[str] = []

    def on_event(event: Event) -> None:
        if event.type == EventType.TOOL_COMPLETED:
            seen.append(f"Tool finished: {event.source}")

    desk = _desk(tmp_path, call_tool("search", query="q"), reply("ok"))
    desk.event_bus.subscribe("*", on_event)
    desk.run(Worker(name="Agent", tools=[search]), Job(input="go"))
    assert seen == ["Tool finished: search"]


def test_patterns_tool_safety_decorators() -> None:
    @tool(requires_confirmation=True)
    def delete(path: str) -> str:
        return path

    @tool(requires_user_input=True)
    def ask(question: str) -> str:
        return question

    @tool(timeout=30.0, retries=3)
    def fetch(url: str) -> str:
        return url

    assert delete.requires_confirmation and not delete.requires_user_input
    assert ask.requires_user_input
    assert (fetch.timeout, fetch.retries, fetch.retry_delay) == (30.0, 3, 1.0)


def test_patterns_runconfig_short_form() -> None:
    """``RunConfig(model=..., max_iterations=..., max_context_messages=...)`` from Patterns."""
    config = RunConfig(
        adapter=ScriptedAdapter([reply("hi")]),
        model="openai/gpt-5-mini",
        max_iterations=20,
        max_context_messages=15,
    )
    assert config.model_name(None) == "openai/gpt-5-mini"
    assert config.run_id  # generated
    report, state = Worker(name="w").run(config, Job(input="x"))
    assert report.content == "hi" and state.status == "completed"


def test_patterns_runconfig_literal_sample_defaults_to_litellm() -> None:
    pytest.importorskip("deskwork.adapters.litellm")
    config = RunConfig(model="openai/gpt-5-mini", max_iterations=20, max_context_messages=15)
    assert type(config.adapter).__name__ == "LiteLLMAdapter"
    assert config.model_name(None) == "openai/gpt-5-mini"


def test_configuration_runconfig_sample() -> None:
    emitted: list[tuple[str, str]] = []
    adapter = ScriptedAdapter([reply("one"), reply("two")])
    worker = Worker(name="analyst")
    job = Job(input="Summarize the latest incident report")
    config = RunConfig(
        adapter=adapter,
        emit=lambda type, source, payload: emitted.append((type, source)),
        run_id="run-123",
        temperature=0.7,
        max_tokens=1000,
        max_iterations=5,
        max_tool_calls=10,
        default_model="openai/gpt-5-nano",
    )
    report, state = worker.run(config, job)
    assert report.run_id == "run-123" and report.content == "one"
    assert isinstance(state, RunState) and state.runner_name == "analyst"
    assert ("worker.started", "analyst") in emitted and ("worker.completed", "analyst") in emitted
    new_config = config.with_overrides(temperature=0.5, max_tokens=500)
    assert (new_config.temperature, new_config.max_tokens) == (0.5, 500)
    assert (config.temperature, config.max_tokens) == (0.7, 1000)
    assert config.model_name(worker.model) == "openai/gpt-5-nano"
    assert config.model_name("other/model") == "other/model"
    assert adapter.calls[0]["temperature"] == 0.7 and adapter.calls[0]["max_tokens"] == 1000


async def test_configuration_runconfig_async_sample() -> None:
    config = RunConfig(
        adapter=ScriptedAdapter([reply("async")]),
        emit=lambda *_: None,
        run_id="run-1",
        default_model=MODEL,
    )
    report, state = await Worker(name="analyst").arun(config, Job(input="x"))
    assert report.content == "async" and state.run_id == "run-1"


def test_runconfig_without_any_model_raises() -> None:
    config = RunConfig(adapter=ScriptedAdapter(), emit=lambda *_: None, run_id="r")
    with pytest.raises(ValueError, match="no model"):
        config.model_name(None)


async def test_async_desk_arun_and_aresume(tmp_path: Path) -> None:
    @tool(requires_confirmation=True)
    def act(x: str) -> str:
        return x

    desk = _desk(tmp_path, call_tool("act", x="1"), reply("fin"))
    worker = Worker(name="w", tools=[act])
    report = await desk.arun(worker, Job(input="go"))
    assert report.status == "paused"
    report = await desk.aresume(report, "yes")
    assert report.status == "completed" and report.content == "fin"


def test_creating_a_desk_with_every_documented_parameter(tmp_path: Path) -> None:
    desk = Desk(
        model="openai/gpt-5-nano",
        temperature=0.2,
        max_tokens=800,
        stream=False,
        structured_stream_mode="off",
        structured_output_retries=3,
        max_iterations=10,
        max_tool_calls=20,
        num_retries=0,
        respect_context_window=True,
        max_context_messages=10,
        event_bus=EventBus(),
        adapter=ScriptedAdapter([reply("x")]),
        storage_dir=str(tmp_path),
    )
    config = desk.config("r1")
    assert (config.temperature, config.max_tokens, config.max_context_messages) == (0.2, 800, 10)
    assert config.default_model == "openai/gpt-5-nano" and config.desk is desk
    report = desk.run(Worker(name="w"), Job(input="hi"))
    adapter = desk.adapter
    assert isinstance(adapter, ScriptedAdapter)
    assert adapter.calls[0]["temperature"] == 0.2 and adapter.calls[0]["max_tokens"] == 800
    assert report.status == "completed"


def test_desk_run_accepts_a_plain_string_job(tmp_path: Path) -> None:
    desk = _desk(tmp_path, reply("ok"))
    report = desk.run(Worker(name="w"), "hello")
    assert report.content == "ok"


def test_cleanup_registries(tmp_path: Path) -> None:
    desk = _desk(tmp_path, reply("x"))
    worker = Worker(name="Temp")
    desk.run(worker, Job(input="go"))
    assert desk.get_runner("worker", "Temp") is worker
    desk.unregister_worker(worker)
    assert desk.get_runner("worker", "Temp") is None
    desk.register_worker(worker)
    assert desk.get_runner("worker", "Temp") is worker


def test_desk_events_sample_subscribe_run_started(tmp_path: Path) -> None:
    seen: list[tuple[str, str]] = []

    def handle_event(event: Event) -> None:
        seen.append((event.type, event.source))

    desk = _desk(tmp_path, reply("x"))
    desk.event_bus.subscribe("run.started", handle_event)
    desk.run(Worker(name="R"), Job(input="go"))
    assert seen == [("run.started", "R")]


def test_custom_events_sample(tmp_path: Path) -> None:
    desk = _desk(tmp_path, reply("x"))
    got: list[Event] = []
    desk.event_bus.subscribe("custom.progress", got.append)
    report = desk.run(Worker(name="assistant"), Job(input="hello"))
    custom_event = Event(
        event_id=new_id(),
        type="custom.progress",
        timestamp=utc_now(),
        run_id=report.run_id,
        source="my_tool",
        payload={"percent": 50},
    )
    desk.event_bus.emit(custom_event)
    assert got == [custom_event]


class CustomRunStore(RunStore):
    """The documented custom-store sample, filled in with dictionaries."""

    def __init__(self) -> None:
        self.runs: dict[str, RunRecord] = {}
        self.events: list[Event] = []

    def create_run(self, run_id: str, input_payload: Any) -> None:
        now = utc_now()
        self.runs[run_id] = RunRecord(
            run_id=run_id, status="running", input=input_payload, created_at=now, updated_at=now
        )

    def update_run(
        self,
        run_id: str,
        status: RunStatus,
        output: str | None,
        output_json: Any | None,
        state: RunState | None,
    ) -> None:
        self.runs[run_id] = self.runs[run_id].model_copy(
            update={"status": status, "output": output, "output_json": output_json, "state": state}
        )

    def get_run(self, run_id: str) -> RunRecord | None:
        return self.runs.get(run_id)

    def add_event(self, event: Event) -> None:
        self.events.append(event)

    def get_events(self, run_id: str) -> list[Event]:
        return [e for e in self.events if e.run_id == run_id]


def test_custom_run_store_sample_supports_pause_and_resume(tmp_path: Path) -> None:
    @tool(requires_confirmation=True)
    def act(x: str) -> str:
        return x

    store = CustomRunStore()
    desk = Desk(
        model=MODEL,
        adapter=ScriptedAdapter([call_tool("act", x="1"), reply("done")]),
        run_store=store,
        storage_dir=tmp_path,
    )
    report = desk.run(Worker(name="w", tools=[act]), Job(input="go"))
    assert store.runs[report.run_id].status == "paused"
    report = desk.resume(report, True)
    assert report.status == "completed"
    assert store.runs[report.run_id].status == "completed"
    assert store.runs[report.run_id].output == "done"
    assert [e.type for e in store.get_events(report.run_id)] == [e.type for e in report.events]
    assert not (tmp_path / "deskwork.db").exists()  # the custom store replaced SQLite


def test_custom_event_bus_sample(tmp_path: Path) -> None:
    bus = EventBus()
    logged: list[str] = []

    def log_events(event: Event) -> None:
        logged.append(f"{event.type}: {event.payload}")

    for event_type in ("run.started", "run.completed", "run.failed"):
        bus.subscribe(event_type, log_events)
    desk = Desk(
        event_bus=bus, model=MODEL, adapter=ScriptedAdapter([reply("x")]), storage_dir=tmp_path
    )
    assert desk.event_bus is bus
    desk.run(Worker(name="w"), Job(input="go"))
    assert [line.split(":")[0] for line in logged] == ["run.started", "run.completed"]


class CustomAdapter(BaseModelAdapter):
    """The documented custom adapter: implements both ``complete`` and ``acomplete``."""

    def complete(  # type: ignore[override]
        self,
        *,
        model: str,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None,
        tool_choice: str | dict[str, Any] | None,
        temperature: float | None,
        max_tokens: int | None,
        stream: bool,
        stream_options: dict[str, Any] | None,
        thinking: dict[str, Any] | None = None,
        drop_params: bool | None = None,
        extra_body: dict[str, Any] | None = None,
        num_retries: int | None = None,
    ) -> ModelResponse:
        return ModelResponse(content=f"sync:{messages[-1]['content']}")

    async def acomplete(  # type: ignore[override]
        self,
        *,
        model: str,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None,
        tool_choice: str | dict[str, Any] | None,
        temperature: float | None,
        max_tokens: int | None,
        stream: bool,
        stream_options: dict[str, Any] | None,
        thinking: dict[str, Any] | None = None,
        drop_params: bool | None = None,
        extra_body: dict[str, Any] | None = None,
        num_retries: int | None = None,
    ) -> ModelResponse:
        last = messages[-1]["content"]
        if "JSON" in str(messages[-1]):  # the structured-output instruction (no response_format)
            return ModelResponse(content='{"title": "t", "bullets": []}')
        return ModelResponse(content=f"async:{last}", usage={"total_tokens": 3})


def test_custom_adapter_sample(tmp_path: Path) -> None:
    desk = Desk(adapter=CustomAdapter(), model=MODEL, storage_dir=tmp_path)
    report = desk.run(Worker(name="w"), Job(input="hi"))
    assert report.content == "async:hi"
    assert report.metrics["total_tokens"] == 3
    # the inherited structured pipeline works for adapters without response_format support
    report = desk.run(Worker(name="w"), Job(input="x", response_schema=Summary))
    assert report.data == Summary(title="t", bullets=[])


def test_exceptions_usage_sample_never_raises_for_run_failures(tmp_path: Path) -> None:
    desk = _desk(tmp_path, fail(RuntimeError("boom")))
    try:
        report = desk.run(Worker(name="w"), Job(input="x"))
    except DeskworkError:  # pragma: no cover - the documented except branch
        pytest.fail("run failures must not raise")
    assert report.status == "failed"
    assert any("boom" in e for e in report.errors)


def test_tool_result_exception_access_sample(tmp_path: Path) -> None:
    @tool()
    def risky_operation(data: str) -> str:
        raise ValueError("Something went wrong")

    desk = _desk(tmp_path, call_tool("risky_operation", data="d"), reply("handled"))
    report = desk.run(Worker(name="worker", tools=[risky_operation]), Job(input="Process this"))
    errors = [
        (c.result.error, c.result.exception_type)
        for c in report.tool_calls
        if c.result and c.result.error
    ]
    assert len(errors) == 1
    assert "Something went wrong" in (errors[0][0] or "")
    assert errors[0][1] == "ValueError"
    assert report.status == "completed"


def test_is_context_limit_error_sample() -> None:
    from deskwork import ContextLimitError

    assert is_context_limit_error(ContextLimitError("too big", model="m"))
    assert is_context_limit_error(RuntimeError("This model's maximum context length is 8192"))
    assert is_context_limit_error(type("ContextWindowExceededError", (Exception,), {})("x"))
    assert not is_context_limit_error(RuntimeError("rate limit exceeded"))
    err = ContextLimitError("x", model="m", model_registered=False, summary_attempted=True)
    assert (err.model, err.model_registered, err.summary_attempted) == ("m", False, True)


def test_event_payload_dataclasses_match_the_documented_fields() -> None:
    assert RunStartedPayload(job_id="job-123").job_id == "job-123"
    assert RunFailedPayload(errors=["Error 1", "Error 2"]).errors == ["Error 1", "Error 2"]
    assert WorkerPausedPayload(pending_action_type="confirmation").pending_action_type
    assert WorkerFailedPayload(error="Something went wrong").error == "Something went wrong"
    summary = WorkerContextSummarizedPayload(
        model="gpt-4",
        summarized_messages=10,
        kept_messages=4,
        unregistered_model=False,
        registration_hint=None,
    )
    assert summary.kept_messages == 4
    assert ToolStartedPayload(tool_call_id="call-123").tool_call_id == "call-123"
    completed = ToolCompletedPayload(
        tool_call_id="call-123",
        result_preview="Success...",
        result_truncated=False,
        timed_out=False,
        cancelled=False,
    )
    assert completed.result_preview == "Success..."
    assert ToolFailedPayload(tool_call_id="c", error="Execution failed").error
    assert StreamTokenPayload(token="Hello", type="content").type == "content"
    assert StreamTokenPayload(token='{"path":', type="tool_argument").type == "tool_argument"
    message = AssistantMessagePayload(
        content="Response text", tool_calls=[{"id": "call-1", "name": "tool", "arguments": "{}"}]
    )
    assert message.tool_calls and message.tool_calls[0]["id"] == "call-1"
    llm = LLMCompletedPayload(
        model="gpt-4",
        latency_ms=150,
        prompt_tokens=100,
        completion_tokens=50,
        total_tokens=150,
        cost=0.001,
    )
    assert llm.total_tokens == 150
    failed = LLMFailedPayload(
        model="gpt-4",
        latency_ms=100,
        error_type="RateLimitError",
        error_message="Rate limit exceeded",
    )
    assert failed.error_type == "RateLimitError"
    assert StepCompletedPayload(status="completed").status == "completed"
    assert StepPausedPayload(status="paused").status == "paused"
    paused = WorkforcePausedPayload(
        root_job={"input": "task"}, completed_reports=[], pending_worker_index=0
    )
    assert paused.root_job == {"input": "task"}


def test_encode_file_sample(tmp_path: Path) -> None:
    image = tmp_path / "photo.jpg"
    image.write_bytes(b"\xff\xd8\xff")
    assert encode_file(image).startswith("data:image/jpeg;base64,")
    pdf = tmp_path / "doc.pdf"
    pdf.write_bytes(b"%PDF")
    assert encode_file(str(pdf)) == "data:application/pdf;base64,JVBERg=="
    other = tmp_path / "file.bin"
    other.write_bytes(b"\x00")
    assert encode_file(other, mime_type="application/octet-stream").startswith(
        "data:application/octet-stream;base64,"
    )
    with pytest.raises(FileNotFoundError):
        encode_file(tmp_path / "missing.png")


def test_toolbelt_sample() -> None:
    belt = Toolbelt()
    assert len(belt) == 0


def test_typeadapter_list_structured_output_is_a_json_array(tmp_path: Path) -> None:
    desk = _desk(tmp_path, structured([{"title": "a", "bullets": []}]))
    schema = TypeAdapter(list[Summary])
    report = desk.run(Worker(name="w"), Job(input="x", response_schema=schema))
    assert report.data == [Summary(title="a", bullets=[])]
    assert report.content == '[{"title":"a","bullets":[]}]'


def test_report_is_returned_for_doc_async_section(tmp_path: Path) -> None:
    desk = _desk(tmp_path, reply("x"))
    assert isinstance(desk.run(Worker(name="w"), Job(input="y")), Report)


def test_logging_configuration_sample(caplog: pytest.LogCaptureFixture) -> None:
    from deskwork.logging import get_logger

    logger = get_logger("deskwork-doc-sample", level=logging.INFO)
    logger.logger.propagate = True
    with caplog.at_level(logging.INFO, logger="deskwork-doc-sample"):
        logger.info("Application started", user_id="123")
    assert '"message": "Application started"' in caplog.text and '"user_id": "123"' in caplog.text
