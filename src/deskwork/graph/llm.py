"""DeskworkChatModel: a LangChain chat model over a deskwork model adapter.

Graph agents take a LangChain chat model (``llm=``). ``DeskworkChatModel`` is that model for
any :class:`~deskwork.adapters.BaseModelAdapter`, so graph agents call models through deskwork's
adapters (LiteLLM by default) exactly as workers do::

    llm = DeskworkChatModel(model="openai/gpt-4o-mini")        # LiteLLMAdapter
    llm = DeskworkChatModel(adapter=ScriptedAdapter([...]))     # offline tests

Inside ``desk.run(GraphRunner(graph), job)`` a model without its own adapter or model string
uses the desk's (``Desk(model=..., adapter=...)``), and every call is an ``llm.completed`` (or
``llm.failed``) event of the run whose tokens count in the report's metrics.
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.language_models.chat_models import agenerate_from_stream
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.messages.ai import UsageMetadata
from langchain_core.messages.tool import ToolCallChunk
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from langchain_core.runnables import Runnable, RunnableLambda
from langchain_core.tools import BaseTool
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import ConfigDict, Field

from deskwork._sync import run_sync
from deskwork.adapters import _seam as seam
from deskwork.adapters.base import (
    BaseModelAdapter,
    ModelResponse,
    StreamChunk,
    ToolCallDelta,
    assemble_stream,
)
from deskwork.core.redact import redact_text
from deskwork.core.stream_redact import TokenHoldback
from deskwork.core.tool_call import ToolCall
from deskwork.graph._durable import step_adapter
from deskwork.graph._events import emit_graph_event
from deskwork.graph._messages import to_provider
from deskwork.runtime._budget import estimate_call_cost
from deskwork.runtime.config import RunConfig

__all__ = ["METERED", "DeskworkChatModel", "desk_model"]

METERED = "deskwork_metered"
"""``response_metadata`` flag of replies whose usage already reached the run as an event."""

_RUN: ContextVar[RunConfig | None] = ContextVar("deskwork_graph_run", default=None)


@contextmanager
def desk_model(config: RunConfig) -> Iterator[None]:
    """Let :class:`DeskworkChatModel` use the run's adapter and default model in this block."""
    token = _RUN.set(config)
    try:
        yield
    finally:
        _RUN.reset(token)


def _release_tail(model: str, held: TokenHoldback) -> None:
    """Emit the stream's held-back tail (before ``llm.completed`` or ``llm.failed``)."""
    if text := held.flush():
        emit_graph_event("stream.token", model, {"token": text, "type": "content"})


class DeskworkChatModel(BaseChatModel):
    """A LangChain ``BaseChatModel`` that calls a deskwork ``BaseModelAdapter``.

    Supports tool binding (``bind_tools``), ``with_structured_output`` (through tool calling),
    async streaming through the adapter's stream, and token usage in ``usage_metadata``.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    model: str | None = None
    """Provider model string (``openai/gpt-4o-mini``); the desk's model when omitted."""
    adapter: BaseModelAdapter | None = Field(default=None, exclude=True)
    """The adapter; the running desk's, else a ``LiteLLMAdapter``, when omitted."""
    temperature: float | None = None
    max_tokens: int | None = None

    @property
    def _llm_type(self) -> str:
        return "deskwork"

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return {"model": self.model, "adapter": type(self.adapter).__name__}

    def bind_tools(
        self,
        tools: Sequence[dict[str, Any] | type | Callable[..., Any] | BaseTool],
        *,
        tool_choice: str | dict[str, Any] | bool | None = None,
        **kwargs: Any,
    ) -> Runnable[LanguageModelInput, AIMessage]:
        """This model with ``tools`` (LangChain tools, functions, schemas) sent on every call."""
        formatted = [convert_to_openai_tool(item) for item in tools]
        return self.bind(tools=formatted, tool_choice=_tool_choice(tool_choice), **kwargs)

    def with_structured_output(
        self,
        schema: dict[str, Any] | type,
        *,
        include_raw: bool = False,
        method: str = "function_calling",
        **kwargs: Any,
    ) -> Runnable[LanguageModelInput, Any]:
        """A runnable returning ``schema`` instances.

        ``method="function_calling"`` (the default) asks for a tool call (LangChain's way);
        ``method="json_schema"`` uses deskwork's structured output: a JSON-schema response
        format, validation, and retries with the validation error (``schema`` must then be a
        Pydantic model or a type ``pydantic.TypeAdapter`` accepts).
        """
        if method != "json_schema":
            return super().with_structured_output(schema, include_raw=include_raw, **kwargs)
        if include_raw or isinstance(schema, dict):
            raise ValueError("method='json_schema' takes a Pydantic/typed schema, no include_raw")

        async def parse(model_input: LanguageModelInput) -> Any:
            adapter, model = self._target()
            messages = to_provider(self._convert_input(model_input).to_messages())
            started = _starting(model, {"messages": messages, "max_tokens": self.max_tokens})
            try:
                response = await seam.astructured(
                    adapter, calls=_calls(model, None), model=model, messages=messages,
                    response_schema=schema, temperature=self.temperature,
                    max_tokens=self.max_tokens,
                )  # fmt: skip
            except Exception as exc:
                _failed(model, exc, started)
                raise
            _completed(model, response.usage, response.cost, started)
            return response.parsed

        def parse_sync(model_input: LanguageModelInput) -> Any:
            return run_sync(parse(model_input), api="invoke")

        return RunnableLambda(parse_sync, afunc=parse, name="DeskworkStructuredOutput")

    # -- calls --------------------------------------------------------------------------

    def _target(self) -> tuple[BaseModelAdapter, str]:
        run = _RUN.get()
        # an adapter of its own is a step too on a durable desk (the desk's already is)
        own = step_adapter(self.adapter, run) if self.adapter is not None else None
        adapter = own or (run.adapter if run is not None else None)
        if adapter is None:
            from deskwork.adapters.litellm import LiteLLMAdapter

            adapter = LiteLLMAdapter()
        model = self.model or (run.default_model or run.model if run is not None else None)
        if not model:
            raise ValueError("DeskworkChatModel needs model=... (or a Desk(model=...) run)")
        return adapter, model

    def _request(self, messages: list[BaseMessage], stop: Any, **kwargs: Any) -> dict[str, Any]:
        tools = kwargs.pop("tools", None)
        choice = kwargs.pop("tool_choice", None)
        kwargs.pop("ls_structured_output_format", None)
        run = _RUN.get()  # unset settings come from the desk run, as for workers
        temperature, max_tokens = self.temperature, self.max_tokens
        if run is not None:
            temperature = run.temperature if temperature is None else temperature
            max_tokens = run.max_tokens if max_tokens is None else max_tokens
        return {
            "messages": to_provider(messages),
            "tools": tools or None,
            "tool_choice": choice if tools else None,
            "temperature": kwargs.pop("temperature", temperature),
            "max_tokens": kwargs.pop("max_tokens", max_tokens),
            "num_retries": kwargs.pop("num_retries", run.num_retries if run else None),
            **({"stop": stop} if stop else {}),
            **kwargs,
        }

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        run = _RUN.get()
        if run is not None and run.stream:  # desk.run(..., stream=True): stream.token events
            return await agenerate_from_stream(self._astream(messages, stop, run_manager, **kwargs))
        adapter, model = self._target()
        request = self._request(messages, stop, **kwargs)
        started = _starting(model, request)
        try:
            calls = _calls(model, request.pop("num_retries"))
            result = await seam.acomplete(
                adapter, calls=calls, model=model, stream=False, stream_options=None, **request
            )
            if not isinstance(result, ModelResponse):
                result = assemble_stream([chunk async for chunk in result], model=model)
        except Exception as exc:
            _failed(model, exc, started)
            raise
        _completed(model, result.usage, result.cost, started)
        message = _ai_message(result, model)
        return ChatResult(
            generations=[ChatGeneration(message=message)],
            llm_output={"token_usage": dict(result.usage), "model_name": model},
        )

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        return run_sync(self._agenerate(messages, stop, **kwargs), api="invoke")

    async def _astream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> AsyncIterator[ChatGenerationChunk]:
        adapter, model = self._target()
        request = self._request(messages, stop, **kwargs)
        started = _starting(model, request)
        chunks: list[StreamChunk] = []
        held = TokenHoldback()  # no secret is stored split over two tokens
        try:
            result = await seam.acomplete(
                adapter,
                calls=_calls(model, request.pop("num_retries")),
                model=model,
                stream=True,
                stream_options={"include_usage": True},
                **request,
            )
            if isinstance(result, ModelResponse):
                result = _as_stream(result)
            async for chunk in result:
                chunks.append(chunk)
                piece = _ai_chunk(chunk)
                if chunk.content:
                    if text := held.push(chunk.content):
                        emit_graph_event("stream.token", model, {"token": text, "type": "content"})
                    if run_manager is not None:
                        await run_manager.on_llm_new_token(chunk.content, chunk=piece)
                yield piece
            _release_tail(model, held)
        except Exception as exc:
            _release_tail(model, held)
            _failed(model, exc, started)
            raise
        whole = assemble_stream(chunks, model=model)
        _completed(model, whole.usage, whole.cost, started)
        yield ChatGenerationChunk(
            message=AIMessageChunk(
                content="", usage_metadata=_usage(whole.usage), response_metadata={METERED: True}
            )
        )


def _calls(model: str, retries: int | None) -> seam.CallPolicy:
    """The desk's retry policy for a graph model call (the one policy every adapter gets);
    each retry is an ``llm.retry`` event in the desk run."""
    run = _RUN.get()

    def on_retry(retry: int, wait: float, error: BaseException) -> None:
        emit_graph_event(
            "llm.retry",
            model,
            {
                "model": model,
                "retry": retry,
                "wait_seconds": round(wait, 3),
                "error_type": type(error).__name__,
                "error_message": redact_text(str(error))[:2000],
            },
        )

    if run is None:
        return seam.CallPolicy(retries or 0, on_retry=on_retry)
    return seam.CallPolicy(
        run.num_retries if retries is None else retries, run.retry_policy, on_retry
    )


def _tool_choice(choice: str | dict[str, Any] | bool | None) -> str | dict[str, Any] | None:
    if choice is None or choice is False:
        return None
    if choice is True or choice == "any":
        return "required"
    if isinstance(choice, str) and choice not in ("auto", "none", "required"):
        return {"type": "function", "function": {"name": choice}}
    return choice


def _usage(usage: dict[str, int]) -> UsageMetadata:
    prompt, completion = int(usage.get("prompt_tokens", 0)), int(usage.get("completion_tokens", 0))
    total = int(usage.get("total_tokens", prompt + completion))
    return UsageMetadata(input_tokens=prompt, output_tokens=completion, total_tokens=total)


def _ai_message(response: ModelResponse, model: str) -> AIMessage:
    calls = [
        {"id": call.id, "name": call.name, "args": call.arguments, "type": "tool_call"}
        for call in response.tool_calls
        if call.error is None
    ]
    invalid = [
        {"id": call.id, "name": call.name, "args": call.raw_arguments, "error": call.error,
         "type": "invalid_tool_call"}
        for call in response.tool_calls
        if call.error is not None
    ]  # fmt: skip
    metadata: dict[str, Any] = {"model_name": response.model or model, METERED: True}
    metadata |= {"finish_reason": response.finish_reason, "cost": response.cost}
    return AIMessage(
        content=response.content or "",
        tool_calls=calls,
        invalid_tool_calls=invalid,
        usage_metadata=_usage(response.usage),
        response_metadata=metadata,
    )


def _ai_chunk(chunk: StreamChunk) -> ChatGenerationChunk:
    pieces = [
        ToolCallChunk(index=d.index, id=d.id, name=d.name, args=d.arguments, type="tool_call_chunk")
        for d in chunk.tool_calls
    ]
    return ChatGenerationChunk(
        message=AIMessageChunk(content=chunk.content or "", tool_call_chunks=pieces)
    )


async def _as_stream(response: ModelResponse) -> AsyncIterator[StreamChunk]:
    """A whole reply as a stream, for adapters that do not stream."""
    calls = [
        ToolCallDelta(index=i, id=call.id, name=call.name, arguments=_arguments(call))
        for i, call in enumerate(response.tool_calls)
    ]
    yield StreamChunk(
        content=response.content, tool_calls=calls, usage=response.usage, cost=response.cost
    )


def _arguments(call: ToolCall) -> str:
    if call.error is not None:
        return call.raw_arguments or ""
    return json.dumps(call.arguments)


def _starting(model: str, request: dict[str, Any]) -> float:
    """Check the run's spending limit (raises before the call), emit ``llm.started``."""
    run = _RUN.get()
    if run is not None and run.budget is not None:
        estimate = estimate_call_cost(model, request["messages"], request.get("max_tokens"))
        run.budget.check(model, estimate)
    emit_graph_event(
        "llm.started",
        model,
        {
            "model": model,
            "messages_count": len(request["messages"]),
            "tools_count": len(request.get("tools") or ()),
        },
    )
    return time.perf_counter()


def _completed(model: str, usage: dict[str, int], cost: float | None, started: float) -> None:
    """Charge the run's budget and emit ``llm.completed`` (the worker's payload)."""
    run = _RUN.get()
    if run is not None and run.budget is not None and cost:
        run.budget.charge(cost)
    latency = round((time.perf_counter() - started) * 1000, 3)
    tokens = {k: int(v) for k, v in usage.items() if k.endswith("tokens")}
    payload: dict[str, Any] = {"model": model, "latency_ms": latency, **tokens}
    if cost is not None:  # optional, as the token counts: absent when unknown
        payload["cost"] = cost
    emit_graph_event("llm.completed", model, payload)


def _failed(model: str, exc: Exception, started: float) -> None:
    emit_graph_event(
        "llm.failed",
        model,
        {
            "model": model,
            "latency_ms": round((time.perf_counter() - started) * 1000, 3),
            "error_type": type(exc).__name__,
            "error_message": redact_text(str(exc))[:2000],
        },
    )
