"""The runtime's side of the model port: every call to an adapter goes through here.

It checks what the adapter returned (a wrong type fails the run with a message naming the
adapter and the expected type, not a confusing ``'async for'`` error deep in the loop), and
it owns retries: one policy for every adapter (see ``_retry``).
"""

from __future__ import annotations

import inspect
import json
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from deskwork.adapters._retry import (
    REFUSED_STATUSES,
    RetryListener,
    RetryPolicy,
    is_transient,
    with_retries,
)
from deskwork.adapters.base import (
    BaseModelAdapter,
    ModelResponse,
    StreamChunk,
    ToolCallDelta,
    assemble_stream,
    unique_call_ids,
)
from deskwork.exceptions import DeskworkError

__all__ = [
    "AdapterContractError",
    "CallPolicy",
    "acomplete",
    "aresponse",
    "astructured",
    "complete",
]

_EXPECTED = "a ModelResponse, or (when streaming) an async iterator of StreamChunk"


class AdapterContractError(DeskworkError, TypeError):
    """An adapter returned something the runtime cannot use."""


def _adapter_name(adapter: BaseModelAdapter) -> str:
    return type(adapter).__qualname__


def _wrong_type(adapter: BaseModelAdapter, method: str, value: Any, expected: str) -> str:
    return (
        f"model adapter {_adapter_name(adapter)}.{method}() returned"
        f" {type(value).__name__}; expected {expected}"
    )


@dataclass(frozen=True, slots=True)
class CallPolicy:
    """How the runtime retries a model call: ``retries`` times, waits shaped by ``policy``."""

    retries: int = 0
    policy: RetryPolicy = field(default_factory=RetryPolicy)
    on_retry: RetryListener | None = None
    on_stream_fallback: Callable[[BaseException], None] | None = None
    """Called when a stream failed before its first chunk and a plain call is made instead."""
    on_stream_restart: Callable[[BaseException], None] | None = None
    """Called when a stream that failed midway (a transient error) is asked for again: the
    caller drops every chunk it received of it, as the new stream starts the reply over.
    Without it, a stream that already yielded part of the reply (text, reasoning or a tool
    call) fails with its error; one that yielded nothing of it is asked for again."""


_NO_RETRIES = CallPolicy()


async def acomplete(
    adapter: BaseModelAdapter, *, calls: CallPolicy | None = None, **params: Any
) -> ModelResponse | AsyncIterator[StreamChunk]:
    """``adapter.acomplete(**params)``, checked and retried by the desk's policy.

    The adapter is told ``num_retries=0`` (its client must not retry too). A stream is
    started before it is returned: a stream failing before its first chunk is retried like a
    failed call and, if the error is not transient (a provider or adapter that cannot stream,
    say), replaced once by a non-streaming call. A stream failing midway with a transient
    error (a cut connection) is asked for again from the start under the same retries
    (``1 + retries`` requests in all, at most): when nothing of the reply has come yet, as
    a failed call is; when part of it has, only for a caller that drops what it received
    (:attr:`CallPolicy.on_stream_restart`), else the error is raised. A plain iterator of
    chunks is accepted as a stream.

    Raises:
        AdapterContractError: the adapter returned neither a response nor a chunk stream.
    """
    return await complete(adapter, params, calls)  # (this call's own keyword dict)


async def complete(
    adapter: BaseModelAdapter, params: dict[str, Any], calls: CallPolicy | None = None
) -> ModelResponse | AsyncIterator[StreamChunk]:
    """:func:`acomplete` of ``params``, a dict the caller hands over (its ``num_retries`` is
    set here): the worker's turns pass theirs as they built it, not as keywords that Python
    would unpack into a second dict."""
    calls = calls or _NO_RETRIES
    params["num_retries"] = 0
    try:
        if not calls.retries:  # one attempt: no retry loop around it
            return await _start(adapter, params)
        if params.get("stream"):
            return await _restartable(adapter, params, calls)
        return await _retried(adapter, params, calls)
    except Exception as exc:
        if not params.get("stream") or not _may_fall_back(exc):
            raise
        if calls.on_stream_fallback is not None:
            calls.on_stream_fallback(exc)
    return await _retried(adapter, {**params, "stream": False, "stream_options": None}, calls)


def _retried(
    adapter: BaseModelAdapter, params: dict[str, Any], calls: CallPolicy
) -> Awaitable[ModelResponse | AsyncIterator[StreamChunk]]:
    return with_retries(
        lambda: _start(adapter, params), calls.retries, calls.policy, calls.on_retry
    )


async def _restartable(
    adapter: BaseModelAdapter, params: dict[str, Any], calls: CallPolicy
) -> ModelResponse | AsyncIterator[StreamChunk]:
    """A stream started as :func:`_retried` starts a call, asked for again if it fails
    midway (:func:`_restarted`); the retries its start made count against ``calls.retries``."""
    made = [0]

    def counted(retry: int, wait: float, error: BaseException) -> None:
        made[0] = retry
        if calls.on_retry is not None:
            calls.on_retry(retry, wait, error)

    result = await with_retries(
        lambda: _start(adapter, params), calls.retries, calls.policy, counted
    )
    if isinstance(result, ModelResponse):
        return result
    return _restarted(adapter, params, calls, result, made[0])


async def _restarted(
    adapter: BaseModelAdapter,
    params: dict[str, Any],
    calls: CallPolicy,
    stream: AsyncIterator[StreamChunk] | None,
    made: int,
) -> AsyncIterator[StreamChunk]:
    """``stream``'s chunks, and when it fails midway with a transient error, those of the
    stream asked for again (see :func:`acomplete`); ``made``: the retries made so far."""
    said = False  # whether part of the reply went out
    while True:
        try:
            if stream is None:
                stream = _as_stream(await _start(adapter, params))
            async for chunk in stream:
                said = said or _says_something(chunk)
                yield chunk
            return
        except Exception as exc:
            wait = calls.policy.wait_before(made, exc) if made < calls.retries else None
            if wait is None or (said and calls.on_stream_restart is None):
                raise
            made, said, stream = made + 1, False, None
            if calls.on_retry is not None:
                calls.on_retry(made, wait, exc)
            if calls.on_stream_restart is not None:
                calls.on_stream_restart(exc)
            import asyncio  # here, not with deskwork (tests/core/test_lazy_imports.py)

            await asyncio.sleep(wait)


def _says_something(chunk: StreamChunk) -> bool:
    """Whether ``chunk`` holds part of the reply (not only usage or a finish reason)."""
    return bool(chunk.content or chunk.reasoning or chunk.tool_calls or chunk.thinking_blocks)


async def _as_stream(
    result: ModelResponse | AsyncIterator[StreamChunk],
) -> AsyncIterator[StreamChunk]:
    """``result`` as chunks: a stream as it is, a whole reply (an adapter that answered the
    stream asked for again without one) as one chunk."""
    if not isinstance(result, ModelResponse):
        async for chunk in result:
            yield chunk
        return
    yield StreamChunk(
        content=result.content,
        reasoning=result.reasoning_content,
        tool_calls=[
            ToolCallDelta(
                index, call.id, call.name, call.raw_arguments or json.dumps(call.arguments)
            )
            for index, call in enumerate(result.tool_calls)
        ],
        usage=result.usage or None,
        finish_reason=result.finish_reason,
        thinking_blocks=result.thinking_blocks,
        cost=result.cost,
    )


def _may_fall_back(error: Exception) -> bool:
    """A stream that failed for a reason a plain call may not share."""
    from deskwork.runtime.context import is_context_limit_error

    if getattr(error, "status_code", None) in REFUSED_STATUSES:
        return False
    return not (is_transient(error) or is_context_limit_error(error))


async def _start(
    adapter: BaseModelAdapter, params: dict[str, Any]
) -> ModelResponse | AsyncIterator[StreamChunk]:
    result: Any = adapter.acomplete(**params)
    if inspect.isawaitable(result):
        result = await result
    if isinstance(result, ModelResponse):
        return _with_unique_call_ids(result)
    if hasattr(result, "__aiter__"):
        return await _first_chunk_read(_checked(adapter, result))
    if isinstance(result, Iterable) and not isinstance(result, str | bytes | Mapping):
        return await _first_chunk_read(_checked(adapter, _from_sync(result)))
    raise AdapterContractError(_wrong_type(adapter, "acomplete", result, _EXPECTED))


def _with_unique_call_ids(response: ModelResponse) -> ModelResponse:
    calls = response.tool_calls
    if len(calls) < 2 or len({call.id for call in calls}) == len(calls):
        return response
    return response.model_copy(update={"tool_calls": unique_call_ids(calls)})


async def _from_sync(chunks: Iterable[Any]) -> AsyncIterator[Any]:
    """A plain iterator of chunks as a stream; a lazy one (a sync client's stream, which may
    block on the network) is advanced in a worker thread, off the event loop."""
    if isinstance(chunks, list | tuple):
        for chunk in chunks:
            yield chunk
        return
    import asyncio  # here, not with deskwork (tests/core/test_lazy_imports.py)

    iterator = iter(chunks)
    done = object()
    while (chunk := await asyncio.to_thread(next, iterator, done)) is not done:
        yield chunk


async def _first_chunk_read(stream: AsyncIterator[StreamChunk]) -> AsyncIterator[StreamChunk]:
    """``stream`` with its first chunk already read (so a failing start raises here)."""
    iterator = aiter(stream)
    try:
        first = await anext(iterator)
    except StopAsyncIteration:
        return _chain(None, iterator)
    return _chain(first, iterator)


async def _chain(
    first: StreamChunk | None, rest: AsyncIterator[StreamChunk]
) -> AsyncIterator[StreamChunk]:
    if first is None:
        return
    yield first
    async for chunk in rest:
        yield chunk


async def _checked(
    adapter: BaseModelAdapter, stream: AsyncIterator[Any]
) -> AsyncIterator[StreamChunk]:
    async for chunk in stream:
        if not isinstance(chunk, StreamChunk):
            raise AdapterContractError(
                _wrong_type(
                    adapter, "acomplete", chunk, "each streamed item to be a StreamChunk"
                ).replace("returned", "streamed", 1)
            )
        yield chunk


async def aresponse(
    adapter: BaseModelAdapter, *, calls: CallPolicy | None = None, **params: Any
) -> ModelResponse:
    """A non-streaming call; a stream the adapter returns anyway is assembled."""
    result = await acomplete(adapter, calls=calls, **{**params, "stream": False})
    if isinstance(result, ModelResponse):
        return result
    return assemble_stream([chunk async for chunk in result], model=params.get("model"))


async def astructured(
    adapter: BaseModelAdapter, *, calls: CallPolicy | None = None, **params: Any
) -> ModelResponse:
    """``adapter.astructured_complete(**params)``, checked and retried like :func:`acomplete`.

    Raises:
        AdapterContractError: the adapter did not return a ModelResponse.
    """
    calls = calls or _NO_RETRIES
    params = {**params, "num_retries": 0}
    result: Any = await with_retries(
        lambda: _structured_once(adapter, params), calls.retries, calls.policy, calls.on_retry
    )
    if not isinstance(result, ModelResponse):
        raise AdapterContractError(
            _wrong_type(adapter, _structured_method(adapter), result, "a ModelResponse")
        )
    return result


def _structured_method(adapter: BaseModelAdapter) -> str:
    """``structured_complete`` for an adapter that implements only the sync hook."""
    cls = type(adapter)
    sync_only = (
        cls.structured_complete is not BaseModelAdapter.structured_complete
        and cls.astructured_complete is BaseModelAdapter.astructured_complete
    )
    return "structured_complete" if sync_only else "astructured_complete"


async def _structured_once(adapter: BaseModelAdapter, params: dict[str, Any]) -> Any:
    if _structured_method(adapter) == "structured_complete":  # run the sync hook off the loop
        import asyncio

        return await asyncio.to_thread(lambda: adapter.structured_complete(**params))
    return await adapter.astructured_complete(**params)
