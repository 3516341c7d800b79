"""Running the tool calls of a model turn, pausing for people, and resuming."""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from typing import Any

from deskwork._aio import gather_or_cancel
from deskwork.core.event import EventType
from deskwork.core.pending import PendingAction
from deskwork.core.redact import REDACTED, redact, redact_text
from deskwork.core.tool_call import ToolCall, ToolResult
from deskwork.exceptions import ConfigurationError
from deskwork.runtime._answers import answer_schema
from deskwork.runtime._run import WorkerRun, new_message
from deskwork.runtime.steps import Failure, Interruption, RunAgain
from deskwork.store._blobs import (
    MAX_STORED_DEPTH,
    DataTooDeep,
    KeysCollide,
    check_sizes,
    check_text,
)
from deskwork.store._errors import StoreError
from deskwork.tools.base import Tool
from deskwork.tools.execution import RetryListener, aexecute_tool, tool_result_from_value
from deskwork.tools.handoff import NO_SWARM, handoff_unanswered
from deskwork.utils import new_id

__all__ = [
    "check_answer",
    "check_answered_action",
    "handle_tool_calls",
    "is_approved",
    "resume_pending",
]

PREVIEW_CHARS = 200
DECLINED = "Tool execution declined"
SKIPPED = "Tool call skipped: the run paused for an earlier tool call in the same turn"
REDACTED_ARGUMENTS = (
    "Tool call not run: its arguments held a secret, which the run store does not keep"
    f" ({REDACTED} in its place), and the run was resumed from the store; call the tool again"
)
_DECLINE_WORDS = {"no", "n", "decline", "declined", "deny", "denied", "cancel", "reject", "false"}


def is_approved(decision: Any) -> bool:
    """How a resume decision answers a confirmation: ``True`` approves and ``False`` or
    ``None`` declines; a text declines when it is blank or a word such as ``"no"`` and
    approves otherwise; a mapping answers with its ``"approved"`` value, read the same way
    (``{"approved": False}`` declines).

    Raises:
        ConfigurationError: any other answer (a number, a list, a mapping without
            ``"approved"``, another object): none says which way it goes, and reading it
            as true ran a tool the person had declined.
    """
    if isinstance(decision, Mapping) and "approved" in decision:
        decision = decision["approved"]
    if decision is None or isinstance(decision, bool):
        return decision is True
    if isinstance(decision, str):
        text = decision.strip().lower()
        return bool(text) and text not in _DECLINE_WORDS
    raise ConfigurationError(
        "a confirmation is answered with True or False, a text such as 'no', or a mapping"
        f" with an 'approved' key; not {_shape(decision)}"
    )


def _shape(decision: Any) -> str:
    if isinstance(decision, Mapping):
        return "a mapping without an 'approved' answer"
    return f"a {type(decision).__name__}"


def check_answer(action: PendingAction | None, decision: Any) -> None:
    """Refuse, before a paused run is claimed, an answer its pause cannot take: one a
    confirmation cannot read (:func:`is_approved`), or a ``user_input`` answer that does not
    fit the pause's ``answer_schema`` (the tool's call would fail with the pause used up);
    ``None`` declines a user input, and other pauses take any answer.

    Raises:
        ConfigurationError: the answer is refused (the run stays paused).
    """
    if action is None:
        return
    if action.type == "confirmation":
        is_approved(decision)
    elif action.type == "user_input" and action.answer_schema is not None and decision is not None:
        from deskwork.runtime._answers import answer_problems  # jsonschema: only when needed

        problems = answer_problems(action.answer_schema, decision)
        if problems:
            raise ConfigurationError(
                f"the answer to {action.tool_call.name!r} does not fit what it asks for"
                f" ({'; '.join(problems)}); the run stays paused"
            )


def check_answered_action(run_id: str, action: PendingAction | None, action_id: str) -> None:
    """Refuse, before a paused run is claimed, an answer to another pause than ``action``,
    the one the run waits for now: an answer to an earlier pause (a call made again with its
    Report or its action id) would answer the next one, which its caller never saw.

    Raises:
        ConfigurationError: ``action_id`` is not ``action``'s (the run stays paused).
    """
    if action is None or action.action_id != action_id:
        raise ConfigurationError(
            f"action {action_id!r} is not the one run {run_id} waits for (an answer to an"
            " earlier pause?); the run stays paused"
        )


def _pauses(run: WorkerRun, tool: Tool | None) -> bool:
    """Whether a call of ``tool`` pauses the run (a swarm's handoff only in a swarm)."""
    return tool is not None and (
        tool.requires_confirmation
        or tool.requires_user_input
        or (tool.requires_handoff and not handoff_unanswered(tool, run.config.run_id))
    )


async def handle_tool_calls(
    run: WorkerRun, calls: list[ToolCall]
) -> RunAgain | Interruption | Failure:
    """Execute the turn's calls in parallel, or up to the first that needs a person."""
    limit = run.config.max_tool_calls
    if run.tool_call_count + len(calls) > limit:
        return Failure(f"max_tool_calls exceeded ({limit})")
    run.tool_call_count += len(calls)
    pending = next((i for i, c in enumerate(calls) if _pauses(run, run.tools.get(c.name))), None)
    await _execute_all(run, calls if pending is None else calls[:pending])
    if pending is None:
        append_tool_messages(run, calls)
        return RunAgain()
    for call in calls[pending + 1 :]:
        call.result = ToolResult(error=SKIPPED)
    return Interruption(_pending_action(run, calls[pending]))


async def _execute_all(run: WorkerRun, calls: list[ToolCall]) -> None:
    if len(calls) == 1:
        await execute_call(run, calls[0], calls[0])
    elif calls:
        await gather_or_cancel(*(execute_call(run, c, c) for c in calls))


async def execute_call(run: WorkerRun, call: ToolCall, request: ToolCall) -> None:
    """Run one call (``request`` may carry resume input) and record ``call.result``."""
    tool = run.tools.get(call.name)
    run.emit(EventType.TOOL_STARTED, {"tool_call_id": call.id}, source=call.name)
    if tool is None:
        available = ", ".join(sorted(run.tools)) or "none"
        result = ToolResult(
            error=f"unknown tool {call.name!r}; available tools: {available}",
            exception_type="UnknownTool",
        )
    elif tool.requires_handoff and handoff_unanswered(tool, run.config.run_id):
        result = ToolResult(error=f"{call.name}: {NO_SWARM}", exception_type="NoSwarm")
    else:
        if run.config.desk is not None:  # the turn so far is on disk before the tool runs
            run.config.desk.run_store.flush()
        if tool.pre:  # what a pre-hook changes (a credential it adds) reaches the tool only,
            # not the history the model is sent again: that keeps the call the model made
            request = request.model_copy(update={"arguments": copy.deepcopy(request.arguments)})
        on_retry = _retry_events(run, call, tool.retries) if tool.retries else None
        result = await aexecute_tool(tool, request, pool=run.config.tool_pool, on_retry=on_retry)
        result = _storable(call.name, result)
    call.result = result
    _emit_result(run, call, result)


def _retry_events(run: WorkerRun, call: ToolCall, retries: int) -> RetryListener:
    """What emits ``tool.retry`` for each failed attempt of ``call`` that is tried again."""

    def on_retry(attempt: int, wait: float, result: ToolResult) -> None:
        run.emit(
            EventType.TOOL_RETRY,
            {
                "tool_call_id": call.id,
                "attempt": attempt,
                "retries": retries,
                "wait_seconds": round(wait, 3),
                "error_type": result.exception_type,
                "error_message": redact_text(result.error or "")[:2000],
                "timed_out": result.timed_out,
            },
            source=call.name,
        )

    return on_retry


def _storable(name: str, result: ToolResult) -> ToolResult:
    """A result with a text longer than a run store keeps, data that contains itself, or a
    dict with two keys that are one JSON key (``1``, ``"1"``), fails the call (the model is
    told), instead of failing the run when it is saved or losing a value there."""
    try:
        check_text(result.content)
        check_sizes(result.data)
    except DataTooDeep:  # a ToolResult's data that contains itself, or nests as deep
        return _too_deep(name)
    except KeysCollide as exc:  # a returned ToolResult's data (a returned dict's: to_jsonable)
        return ToolResult(
            error=f"tool {name!r} returned data a run store cannot keep: {exc}",
            exception_type="ToolResultKeysCollide",
        )
    except StoreError as exc:
        return ToolResult(
            error=f"tool {name!r} returned a result too large to keep: {exc}",
            exception_type="ToolResultTooLarge",
        )
    return result


def _too_deep(name: str) -> ToolResult:
    """The failed result of tool ``name`` whose data contains itself or nests too deep."""
    return ToolResult(
        error=f"tool {name!r} returned data that contains itself or nests more than"
        f" {MAX_STORED_DEPTH} levels deep, more than a run store keeps",
        exception_type="ToolResultTooDeep",
    )


def _emit_result(run: WorkerRun, call: ToolCall, result: ToolResult) -> None:
    if result.error is not None:
        kind = _count_failure(run, result)
        run.emit(
            EventType.TOOL_FAILED,
            {
                "tool_call_id": call.id,
                "error": result.error,
                "kind": kind,
                "exception_type": result.exception_type,
                "timed_out": result.timed_out,
                "cancelled": result.cancelled,
            },
            source=call.name,
        )
        return
    text = result.model_text()
    run.emit(
        EventType.TOOL_COMPLETED,
        {
            "tool_call_id": call.id,
            "result_preview": text[:PREVIEW_CHARS],
            "result_truncated": len(text) > PREVIEW_CHARS,
            "timed_out": result.timed_out,
            "cancelled": result.cancelled,
        },
        source=call.name,
    )


_INVALID_CALL = frozenset({"ToolValidationError", "UnknownTool"})


def _count_failure(run: WorkerRun, result: ToolResult) -> str:
    """Count a failed tool call in the run's metrics, so a report tells a clean run from one
    that limped on (the model saw the error as the tool's result and the run went on).

    ``tool_errors`` counts every failed call; ``tool_timeouts``, ``tool_cancellations`` and
    ``tool_invalid_calls`` (malformed or invalid arguments, unknown tools) count its kinds.
    """
    if result.timed_out:
        kind = "timeout"
    elif result.cancelled:
        kind = "cancelled"
    elif result.exception_type in _INVALID_CALL:
        kind = "invalid_call"
    else:
        kind = "error"
    key = {"timeout": "tool_timeouts", "cancelled": "tool_cancellations",
           "invalid_call": "tool_invalid_calls"}.get(kind)  # fmt: skip
    metrics = run.metrics
    metrics["tool_errors"] = metrics.get("tool_errors", 0) + 1
    if key is not None:
        metrics[key] = metrics.get(key, 0) + 1
    return kind


def append_tool_messages(run: WorkerRun, calls: list[ToolCall]) -> None:
    """One tool message per call, in the model's call order."""
    for call in calls:
        result = call.result or ToolResult(error="no result")
        run.messages.append(
            new_message(
                role="tool", tool_call_id=call.id, name=call.name, content=result.model_text()
            )
        )


def _pending_action(run: WorkerRun, call: ToolCall) -> PendingAction:
    tool = run.tools[call.name]
    args = ", ".join(str(v) for v in call.arguments.values())
    if tool.requires_handoff:
        kind, prompt = "handoff", f"Hand off to {call.arguments.get('agent_name', '?')}"
    elif tool.requires_confirmation:
        kind = "confirmation"
        prompt = tool.confirmation_prompt or f"Confirm {call.name} ({args})"
        run.emit(EventType.TOOL_CONFIRMATION_REQUESTED, {"tool_call_id": call.id}, call.name)
    else:
        kind = "user_input"
        prompt = tool.user_input_prompt or f"Input needed for {call.name} ({args})"
        run.emit(EventType.TOOL_USER_INPUT_REQUESTED, {"tool_call_id": call.id}, call.name)
    return PendingAction(
        action_id=new_id(),
        type=kind,  # type: ignore[arg-type]  # one of the three literals above
        tool_call=call,
        prompt=prompt,
        options=["approve", "decline"] if kind == "confirmation" else None,
        metadata={
            "tool": call.name,
            "input_key": tool.effective_input_key,
            ARGUMENTS_REDACTED: redact(call.arguments) != call.arguments,  # the store's copy
        },
        answer_schema=answer_schema(tool) if kind == "user_input" else None,
    )


def _turn_calls(run: WorkerRun) -> list[ToolCall]:
    """The stored calls of the last assistant message (results live in ``run.tool_calls``)."""
    last = next(m for m in reversed(run.messages) if m.role == "assistant")
    by_id = {c.id: c for c in run.tool_calls}
    return [by_id.get(c.id, c) for c in last.tool_calls or ()]


async def resume_pending(
    run: WorkerRun, action: PendingAction, decision: Any
) -> RunAgain | Failure:
    """Answer the pending call and close the turn.

    A ``user_input`` answer goes to the tool's input-key parameter (``user_input`` unless the
    tool sets ``input_key``); a tool without that parameter is not called: the answer is the
    call's result.

    A ``handoff`` is answered by its orchestrator: a ``ToolResult`` decision becomes the call's
    result as is (a swarm uses this to reject a target); any other decision runs the tool.

    Calls completed before the pause keep their stored results (they are never re-run);
    calls after the pending one keep the "skipped" error they received at the pause. A call
    whose arguments lost a secret to the run store's redaction (a run resumed from the store)
    is not run: its result is the ``RedactedArguments`` error.
    """
    calls = _turn_calls(run)
    call = next((c for c in calls if c.id == action.tool_call.id), None)
    if call is None:
        return Failure(f"pending tool call {action.tool_call.id!r} not found in run state")
    if call.name not in run.tools:
        return Failure(f"pending tool {call.name!r} is not available to worker {run.worker.name!r}")
    tool = run.tools[call.name]
    takes_answer = tool.effective_input_key in tool.input_model.model_fields
    if _declined(action, decision):
        _decline(run, call)
    elif action.type == "user_input" and not takes_answer:
        _answer(run, call, tool, decision)  # no parameter takes the answer: it is the result
    elif action.type != "handoff" and _lost_a_secret(action, call):
        _refuse_redacted(run, call)
    elif action.type == "user_input":
        request = call.model_copy(
            update={"arguments": {**call.arguments, tool.effective_input_key: decision}}
        )
        await execute_call(run, call, request)
    elif action.type == "handoff" and isinstance(decision, ToolResult):
        call.result = decision  # the orchestrator answered the handoff (accepted or rejected)
        _emit_result(run, call, decision)
    else:
        await execute_call(run, call, call)
    append_tool_messages(run, calls)
    return RunAgain()


def _answer(run: WorkerRun, call: ToolCall, tool: Tool, decision: Any) -> None:
    """The person's answer as the call's result, for a user-input tool without a parameter
    named its input key (``ask(question)``): the function is not called."""
    call.result = _storable(call.name, tool_result_from_value(tool, decision))
    _emit_result(run, call, call.result)


def _declined(action: PendingAction, decision: Any) -> bool:
    """Whether ``decision`` declines a confirmation or leaves a question unanswered."""
    if action.type == "confirmation":
        return not is_approved(decision)
    return action.type == "user_input" and decision is None


ARGUMENTS_REDACTED = "arguments_redacted"
"""The pending action's metadata key that says whether the run store keeps its call's
arguments redacted (they held a secret when the run paused)."""


def _lost_a_secret(action: PendingAction, call: ToolCall) -> bool:
    """Whether ``call``'s arguments are the store's redacted copy: they held a secret at the
    pause, and hold none now (a live run still has it). Arguments that merely contain the
    placeholder's text (a model quoting a redacted log line) run. A pause stored before the
    flag existed: whether the placeholder is in them."""
    held = action.metadata.get(ARGUMENTS_REDACTED)
    if held is None:
        return REDACTED in json.dumps(call.arguments, default=str)
    return bool(held) and redact(call.arguments) == call.arguments


def _refuse_redacted(run: WorkerRun, call: ToolCall) -> None:
    """Fail a paused call whose stored arguments lost a secret: the run store keeps none, so
    a run resumed from it (another process, a restart) would call the tool with the
    ``<redacted>`` placeholder in place of the secret."""
    call.result = ToolResult(error=REDACTED_ARGUMENTS, exception_type="RedactedArguments")
    _emit_result(run, call, call.result)


def _decline(run: WorkerRun, call: ToolCall) -> None:
    call.result = ToolResult(error=DECLINED)
    run.emit(EventType.TOOL_FAILED, {"tool_call_id": call.id, "error": DECLINED}, source=call.name)
