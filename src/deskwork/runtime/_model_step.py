"""Calling the model for a worker: LLM events, streaming, compaction, structured output."""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator
from typing import Any

from pydantic import ValidationError

from deskwork.adapters import _seam as seam
from deskwork.adapters.base import (
    ModelResponse,
    StreamChunk,
    StructuredOutputError,
    assemble_stream,
    parse_structured,
    schema_adapter,
)
from deskwork.core.event import EventType
from deskwork.core.redact import describe_exception, exception_text, redact
from deskwork.core.stream_redact import TokenHoldback
from deskwork.runtime._budget import Budget, BudgetExceededError, estimate_call_cost
from deskwork.runtime._run import WorkerRun, new_message
from deskwork.runtime.context import (
    SUMMARY_ATTEMPT_LIMIT,
    compact_messages,
    is_context_limit_error,
    model_is_registered,
)
from deskwork.runtime.steps import Failure, FinalOutput

__all__ = ["request_reply", "structured_turn"]


def _common_params(run: WorkerRun) -> dict[str, Any]:
    job, config = run.job, run.config
    return {
        "model": run.model,
        "messages": [m.to_provider() for m in run.messages],
        "temperature": config.temperature,
        "max_tokens": config.max_tokens,
        "thinking": job.thinking,
        "drop_params": job.drop_params,
        "extra_body": job.extra_body,
        "num_retries": config.num_retries,
    }


def _calls(
    run: WorkerRun, *, stream: bool, reading: _StreamReading | None = None
) -> seam.CallPolicy | None:
    """The desk's retries for this run's model calls; each retry emits ``llm.retry``, a
    stream replaced by a plain call ``llm.stream_fallback``, a stream asked for again after
    it failed midway is dropped by ``reading``. ``None`` (the seam's plain single attempt)
    when there is neither a retry nor a stream to listen to."""
    if not run.config.num_retries and not stream:
        return None

    def on_retry(retry: int, wait: float, error: BaseException) -> None:
        run.emit(
            EventType.LLM_RETRY,
            {
                "model": run.model,
                "retry": retry,
                "wait_seconds": round(wait, 3),
                "error_type": type(error).__name__,
                "error_message": exception_text(error)[:2000],
            },
        )

    def on_stream_fallback(error: BaseException) -> None:
        run.emit(
            EventType.LLM_STREAM_FALLBACK,
            {
                "model": run.model,
                "error_type": type(error).__name__,
                "error_message": exception_text(error)[:2000],
            },
        )

    return seam.CallPolicy(
        run.config.num_retries,
        run.config.retry_policy,
        on_retry,
        on_stream_fallback,
        None if reading is None else reading.restart,
    )


async def _timed_call(run: WorkerRun, params: dict[str, Any], call: Any) -> ModelResponse:
    """Run ``call()`` between ``llm.started`` and ``llm.completed``/``llm.failed``.

    Raises:
        BudgetExceededError: the call would exceed the run's spending limit (not made).
    """
    budget = run.config.budget
    if budget is not None:
        estimate = estimate_call_cost(run.model, params["messages"], params.get("max_tokens"))
        budget.check(run.model, estimate)
    run.emit(
        EventType.LLM_STARTED,
        {
            "model": run.model,
            "messages_count": len(params["messages"]),
            "tools_count": len(params.get("tools") or ()),
        },
    )
    started = time.perf_counter()
    try:
        response: ModelResponse = await call()
    except Exception as exc:
        latency = (time.perf_counter() - started) * 1000
        payload = {
            "model": run.model,
            "latency_ms": round(latency, 3),
            "error_type": type(exc).__name__,
            "error_message": exception_text(exc)[:2000],
        }
        if isinstance(exc, StructuredOutputError):
            _spent(run, budget, exc, latency)
            if exc.reply is not None:
                payload["reply"] = exc.reply  # redacted and bounded by the error itself
        run.emit(EventType.LLM_FAILED, payload)
        raise
    latency = (time.perf_counter() - started) * 1000
    run.add_usage(response.usage, response.cost, latency)
    if budget is not None and response.cost:
        budget.charge(response.cost)
    payload = {"model": run.model, "latency_ms": round(latency, 3), **response.usage}
    if response.cost is not None:  # optional, as the token counts: absent when unknown
        payload["cost"] = response.cost
    if response.finish_reason not in _PLAIN_ENDS:  # cut at max_tokens, a content filter
        payload["finish_reason"] = response.finish_reason
    run.emit(EventType.LLM_COMPLETED, payload)
    return response


_PLAIN_ENDS = frozenset({None, "stop", "tool_calls"})
"""Finish reasons ``llm.completed`` does not repeat: a reply that ended as replies do."""


def _spent(
    run: WorkerRun, budget: Budget | None, exc: StructuredOutputError, latency: float
) -> None:
    """Count what a structured output's failed attempts spent, as a call that succeeded
    (the money is gone: a budget that did not see it let the run spend past it)."""
    if exc.usage or exc.cost:
        run.add_usage(exc.usage, exc.cost, latency)
        if budget is not None and exc.cost:
            budget.charge(exc.cost)


class _StreamReading:
    """A streamed reply as the run reads it: its chunks, and its tokens emitted as
    ``stream.token`` events, held back so that no secret is split over two of them (stored
    events are redacted one by one); the rest goes out when the stream ends.

    A stream cut midway and asked for again (the seam's restart, under ``num_retries``)
    starts the reply over: what came of it is dropped and, when some of it went out as
    tokens already, ``llm.stream_restarted`` tells a listener (a UI) to drop those tokens
    too: the reply is the tokens after it. What was held back of it never goes out.
    """

    __slots__ = ("chunks", "emitted", "guards", "run")

    def __init__(self, run: WorkerRun) -> None:
        self.run = run
        self._start_over()

    def _start_over(self) -> None:
        self.chunks: list[StreamChunk] = []
        self.guards = {"content": TokenHoldback(), "tool_argument": TokenHoldback()}
        self.emitted = False  # whether a token of this stream went out

    def emit(self, kind: str, text: str) -> None:
        if text:
            self.emitted = True
            self.run.emit(EventType.STREAM_TOKEN, {"token": text, "type": kind})

    def restart(self, error: BaseException) -> None:
        if self.emitted:
            self.run.emit(
                EventType.LLM_STREAM_RESTARTED,
                {
                    "model": self.run.model,
                    "error_type": type(error).__name__,
                    "error_message": exception_text(error)[:2000],
                },
            )
        self._start_over()

    async def consume(self, stream: AsyncIterator[StreamChunk]) -> ModelResponse:
        """The stream's chunks assembled into one reply, its tokens emitted on the way."""
        try:
            async for chunk in stream:
                self.chunks.append(chunk)
                if chunk.content:
                    self.emit("content", self.guards["content"].push(chunk.content))
                for delta in chunk.tool_calls:
                    if delta.arguments:
                        text = self.guards["tool_argument"].push(delta.arguments)
                        self.emit("tool_argument", text)
        finally:  # nothing streamed is lost, and it all precedes llm.completed
            for kind, guard in self.guards.items():
                self.emit(kind, guard.flush())
        return assemble_stream(self.chunks, model=self.run.model)


async def _call_model(run: WorkerRun, *, stream: bool, extra: dict[str, Any]) -> ModelResponse:
    tools = [t.to_provider() for t in run.tools.values()] or None
    params = _common_params(run)
    params["tools"] = tools
    params["tool_choice"] = "auto" if tools else None
    params["stream"] = stream
    params["stream_options"] = run.config.stream_options if stream else None
    params.update(extra)
    return await _timed_call(run, params, lambda: _reply(run, params, stream))


async def _reply(run: WorkerRun, params: dict[str, Any], stream: bool) -> ModelResponse:
    """The adapter's reply to ``params`` (a stream consumed into one), through the seam."""
    reading = _StreamReading(run) if stream else None
    result = await seam.complete(
        run.config.adapter, params, _calls(run, stream=stream, reading=reading)
    )
    if isinstance(result, ModelResponse):
        return result
    return await (reading or _StreamReading(run)).consume(result)


async def _compact(run: WorkerRun) -> bool | Failure:
    """Summarize older history; ``False`` if there was nothing to summarize."""
    try:
        compacted = await compact_messages(
            run.config.adapter, run.model, run.messages, limit=run.config.max_context_messages
        )
    except Exception as exc:  # the summary call itself failed
        return Failure(f"context compaction failed: {describe_exception(exc)}")
    if compacted is None:
        return False
    run.messages, summarized, kept = compacted
    registered = model_is_registered(run.model)
    run.emit(
        EventType.WORKER_CONTEXT_SUMMARIZED,
        {
            "model": run.model,
            "summarized_messages": summarized,
            "kept_messages": kept,
            "unregistered_model": not registered,
            "registration_hint": None
            if registered
            else f"register {run.model!r} with litellm.register_model to set its context size",
        },
    )
    return True


async def _with_compaction(run: WorkerRun, attempt: Any) -> ModelResponse | Failure:
    limit = run.config.max_context_messages
    if limit is not None and len(run.messages) > limit:
        compacted = await _compact(run)  # proactive: does not use the reactive budget
        if isinstance(compacted, Failure):
            return compacted
    while True:
        try:
            response: ModelResponse = await attempt()
            return response
        except Exception as exc:
            if isinstance(exc, StructuredOutputError | BudgetExceededError):
                return Failure(exception_text(exc))  # a provider's text, quoted
            if not is_context_limit_error(exc):
                return Failure(f"model call failed: {describe_exception(exc)}")
            can_retry = (
                run.config.respect_context_window and run.reactive_attempts < SUMMARY_ATTEMPT_LIMIT
            )
            if can_retry:
                run.reactive_attempts += 1
                compacted = await _compact(run)
                if isinstance(compacted, Failure):
                    return compacted
                if compacted:
                    continue
            return Failure(f"context limit exceeded for model {run.model!r}: {exception_text(exc)}")


async def request_reply(run: WorkerRun, *, stream: bool) -> ModelResponse | Failure:
    """One model turn with tools offered, streaming if asked, compaction as configured."""
    return await _with_compaction(run, lambda: _call_model(run, stream=stream, extra={}))


def append_assistant(run: WorkerRun, response: ModelResponse) -> None:
    """Record the model's reply in history and emit ``assistant.message``."""
    blocks = response.thinking_blocks
    message = new_message(
        role="assistant",
        content=response.content,
        reasoning_content=response.reasoning_content,
        thinking_blocks=None if blocks is None else [dict(block) for block in blocks],
        tool_calls=list(response.tool_calls) or None,
    )
    run.messages.append(message)
    run.tool_calls.extend(response.tool_calls)
    payload: dict[str, Any] = {"content": response.content}
    if response.tool_calls:
        payload["tool_calls"] = [
            {
                "id": c.id,
                "name": c.name,
                # rendered from redacted arguments: the emitter cannot see inside the JSON text
                "arguments": c.raw_arguments or json.dumps(redact(c.arguments)),
            }
            for c in response.tool_calls
        ]
    run.emit(EventType.ASSISTANT_MESSAGE, payload)


def _preview_enabled(run: WorkerRun) -> bool:
    mode = run.job.structured_stream_mode or run.config.structured_stream_mode
    return run.config.stream and mode == "preview"


async def structured_turn(run: WorkerRun) -> FinalOutput | Failure:
    """Produce the final structured output (preview streaming first when enabled)."""
    schema = run.job.response_schema
    if _preview_enabled(run):
        reply = await _with_compaction(
            run, lambda: _call_model(run, stream=True, extra={"tools": None, "tool_choice": None})
        )
        if isinstance(reply, Failure):
            return reply
        try:
            data = parse_structured(reply.content, schema)
        except (ValidationError, ValueError):
            pass  # invalid preview: fall back to strict structured completion
        else:
            return _structured_output(run, reply, data)

    async def attempt() -> ModelResponse:
        params = _common_params(run)  # built per attempt: compaction replaces run.messages

        async def call() -> ModelResponse:
            return await seam.astructured(
                run.config.adapter,
                calls=_calls(run, stream=False),
                **params,
                response_schema=schema,
                retries=run.config.structured_output_retries,
            )

        return await _timed_call(run, params, call)

    response = await _with_compaction(run, attempt)
    if isinstance(response, Failure):
        return response
    return _structured_output(run, response, response.parsed)


def _structured_output(run: WorkerRun, response: ModelResponse, data: Any) -> FinalOutput:
    content = schema_adapter(run.job.response_schema).dump_json(data).decode()
    append_assistant(run, response.model_copy(update={"content": content, "tool_calls": []}))
    return FinalOutput(content=content, data=data, reasoning=response.reasoning_content)
