"""The AG-UI endpoint: ``POST /agui/{runner}`` takes a ``RunAgentInput`` and streams AG-UI
events (the ``ag-ui-protocol`` package's types) while the desk runs the runner.

- The last user message is the job's input; earlier text messages become its history.
- ``runId`` is the desk's run id (a new run must use a new id).
- A run that pauses ends with ``RUN_FINISHED`` whose outcome is an ``interrupt``; its id is
  ``"<run id>:<action id>"``. Send it back in ``resume`` (``status: resolved`` with the
  decision as ``payload``, or ``cancelled`` to decline) to continue the run.
- Desk events without an AG-UI counterpart arrive as ``CUSTOM`` events named by their type.
- A stream cut midway and asked for again (``llm.stream_restarted``) ends the text message
  of its tokens; the ``CUSTOM`` event's ``discard_message_id`` names it for the client to
  drop, and the reply comes again as a new message.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from typing import Any

from ag_ui.core import (
    BaseEvent,
    CustomEvent,
    Interrupt,
    RunAgentInput,
    RunErrorEvent,
    RunFinishedEvent,
    RunFinishedInterruptOutcome,
    RunFinishedSuccessOutcome,
    RunStartedEvent,
    StepFinishedEvent,
    StepStartedEvent,
    TextMessageContentEvent,
    TextMessageEndEvent,
    TextMessageStartEvent,
    ToolCallArgsEvent,
    ToolCallEndEvent,
    ToolCallResultEvent,
    ToolCallStartEvent,
)

from deskwork.core.event import Event, EventType
from deskwork.core.job import Job
from deskwork.core.message import Message
from deskwork.core.report import Report
from deskwork.serve._holdback import TokenGuard
from deskwork.serve._hub import Outgoing
from deskwork.serve._models import RunReport
from deskwork.serve._service import (
    ApiError,
    RunService,
    check_action,
    check_decision,
    check_id,
    checked_pause,
    json_bytes,
    make_job,
)
from deskwork.utils import new_id, to_jsonable

__all__ = ["AguiRun", "agui_stream"]

_SKIPPED = {
    EventType.RUN_STARTED,
    EventType.RUN_COMPLETED,
    EventType.RUN_PAUSED,
    EventType.RUN_FAILED,
    EventType.TOOL_STARTED,
}


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    parts = [getattr(p, "text", None) for p in content or []]
    return "".join(p for p in parts if isinstance(p, str))


def _job(body: RunAgentInput) -> Job:
    messages = [m for m in body.messages if m.role in ("user", "assistant", "system")]
    if not messages or messages[-1].role != "user":
        raise ApiError(422, "the last message must be a user message (the job's input)")
    history = [
        Message(role=m.role, content=_text(getattr(m, "content", ""))) for m in messages[:-1]
    ]
    return make_job(input=_text(messages[-1].content), initial_messages=history or None)


class AguiRun:
    """Translates one run's desk events into AG-UI events."""

    def __init__(self, body: RunAgentInput) -> None:
        self.thread_id = body.thread_id
        self.run_id = body.run_id
        self.open_message: str | None = None

    def translate(self, event: Event) -> list[BaseEvent]:
        p = event.payload
        kind = event.type
        if kind == EventType.STREAM_TOKEN:
            return self._token(p) if p.get("type", "content") == "content" else []
        if kind == EventType.ASSISTANT_MESSAGE:
            return self._assistant(p)
        if kind == EventType.LLM_STREAM_RESTARTED:
            return self._restarted(p)
        if kind == EventType.TOOL_COMPLETED or kind == EventType.TOOL_FAILED:
            content = (
                p.get("result_preview") if kind == EventType.TOOL_COMPLETED else p.get("error")
            )
            return [
                ToolCallResultEvent(
                    message_id=new_id(),
                    tool_call_id=str(p.get("tool_call_id", "")),
                    content=str(content or ""),
                    role="tool",
                )
            ]
        if kind in (EventType.STEP_STARTED, EventType.WORKER_STARTED):
            return [StepStartedEvent(step_name=event.source)]
        if kind in (EventType.STEP_COMPLETED, EventType.WORKER_COMPLETED):
            return [StepFinishedEvent(step_name=event.source)]
        if kind in _SKIPPED:
            return []
        return [CustomEvent(name=kind, value=to_jsonable(p))]

    def _token(self, payload: dict[str, Any]) -> list[BaseEvent]:
        out: list[BaseEvent] = []
        if self.open_message is None:
            self.open_message = new_id()
            out.append(TextMessageStartEvent(message_id=self.open_message, role="assistant"))
        delta = str(payload.get("token") or "")
        if delta:
            out.append(TextMessageContentEvent(message_id=self.open_message, delta=delta))
        return out

    def _restarted(self, payload: dict[str, Any]) -> list[BaseEvent]:
        """A stream cut midway, asked for again: the text message of its tokens ends, and
        the ``CUSTOM`` event names it (``discard_message_id``, ``None`` when no text went
        out) for the client to drop; the reply asked again comes as a new message."""
        partial, self.open_message = self.open_message, None
        out: list[BaseEvent] = []
        if partial is not None:
            out.append(TextMessageEndEvent(message_id=partial))
        value = {**to_jsonable(payload), "discard_message_id": partial}
        out.append(CustomEvent(name=EventType.LLM_STREAM_RESTARTED.value, value=value))
        return out

    def _assistant(self, payload: dict[str, Any]) -> list[BaseEvent]:
        out: list[BaseEvent] = []
        content = payload.get("content")
        if self.open_message is not None:
            out.append(TextMessageEndEvent(message_id=self.open_message))
            self.open_message = None
        elif content:
            message_id = new_id()
            out += [
                TextMessageStartEvent(message_id=message_id, role="assistant"),
                TextMessageContentEvent(message_id=message_id, delta=str(content)),
                TextMessageEndEvent(message_id=message_id),
            ]
        for call in payload.get("tool_calls") or []:
            call_id = str(call.get("id"))
            out += [
                ToolCallStartEvent(tool_call_id=call_id, tool_call_name=str(call.get("name"))),
                ToolCallArgsEvent(tool_call_id=call_id, delta=str(call.get("arguments") or "")),
                ToolCallEndEvent(tool_call_id=call_id),
            ]
        return out

    def finish(self, report: RunReport) -> BaseEvent:
        """The last AG-UI event: ``report`` (redacted as the store keeps it) as its end."""
        if report.status == "failed":
            return RunErrorEvent(message="; ".join(report.errors) or "run failed")
        action = report.pending_action
        if report.status == "paused" and action is not None:
            interrupt = Interrupt(
                id=f"{report.run_id}:{action.action_id}",
                reason=action.type,
                message=action.prompt,
                tool_call_id=action.tool_call.id,
                metadata={"options": action.options, "tool": action.tool_call.name},
            )
            outcome: Any = RunFinishedInterruptOutcome(interrupts=[interrupt])
        else:
            outcome = RunFinishedSuccessOutcome()
        result = report.data if report.data is not None else report.content
        return RunFinishedEvent(
            thread_id=self.thread_id, run_id=self.run_id, result=result, outcome=outcome
        )


def _resume_target(body: RunAgentInput) -> tuple[str, str, Any] | None:
    """The run, action id and decision of the first ``resume`` entry (``None``: no resume);
    its interrupt id is ``"<run id>:<action id>"``."""
    if not body.resume:
        return None
    entry = body.resume[0]
    run_id, _, action_id = entry.interrupt_id.partition(":")
    decision = entry.payload if entry.status == "resolved" else False
    if entry.status == "resolved" and entry.payload is None:
        decision = True
    return run_id, action_id, decision


async def agui_stream(
    service: RunService, runner_name: str, body: RunAgentInput
) -> AsyncIterator[bytes]:
    """Validate, start (or resume) the run, and return its AG-UI event stream."""
    queue: asyncio.Queue[Event | None] = asyncio.Queue()
    check_id(body.thread_id, "threadId")  # (echoed in the stream's first event)
    target = _resume_target(body)
    if target is not None:
        run_id, action_id, decision = target
        record = service.record(run_id)
        if record.status != "paused":
            raise ApiError(409, f"run {run_id} is {record.status}, not paused")
        check_action(record, action_id)  # not an answer to an earlier pause
        check_decision(record, decision)
        pause = checked_pause(record)
        resume = service.resumer(record)  # a session turn's saves to its session
        work = resume(pause, decision, stream=True, on_event=queue.put_nowait)
    else:
        runner = service.runner(runner_name)
        check_id(body.run_id, "runId")  # the new run's id
        if service.desk.run_store.get_run(body.run_id) is not None:
            raise ApiError(409, f"run {body.run_id} exists already; use a new runId")
        job = _job(body)
        run_id = body.run_id
        work = service.desk.arun(runner, job, stream=True, on_event=queue.put_nowait, run_id=run_id)
    task: asyncio.Task[Report] = asyncio.ensure_future(work)
    task.add_done_callback(lambda _: queue.put_nowait(None))
    if target is None:
        await service.started(run_id, task)  # (an error before the stream starts)
    else:
        service.track(run_id, task)  # POST /runs/{id}/cancel and shutdown reach it
    return _frames(AguiRun(body), queue, lambda: service.outcome(run_id, task))


def _frame(event: BaseEvent) -> bytes:
    """The SSE frame of ``event``, as ag-ui's ``EventEncoder`` writes it but with the API's
    :func:`json_bytes`: a text with a lone surrogate escaped, where the encoder's
    pydantic-core JSON failed and cut the stream short."""
    return b"data: " + json_bytes(event.model_dump(mode="json", by_alias=True)) + b"\n\n"


async def _frames(
    run: AguiRun, queue: asyncio.Queue[Event | None], outcome: Callable[[], RunReport]
) -> AsyncIterator[bytes]:
    yield _frame(RunStartedEvent(thread_id=run.thread_id, run_id=run.run_id))
    guard = TokenGuard()  # no secret split over tokens goes out in clear text
    position = 0
    while (event := await queue.get()) is not None:
        for _, item in guard.feed(position, Outgoing(event)):
            for out in run.translate(item.event):
                yield _frame(out)
        position += 1
    for _, item in guard.close():
        for out in run.translate(item.event):
            yield _frame(out)
    yield _frame(run.finish(outcome()))
