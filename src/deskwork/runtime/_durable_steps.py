"""The seams of a durable run: model calls and tool calls as DBOS steps, and a replay that
emits no event twice.

Inside a durable workflow, ``DurableAdapter`` (the run's ``RunConfig.adapter``) runs each
model call as a step, and :func:`tool_step` (set as ``tools._step_hook``) runs each tool call
as one; elsewhere both are plain calls. A step's name carries who asks (model calls) or the
call id (tool calls), so a replay that reaches the steps in another order fails loudly
instead of handing one call's recorded result to another.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import os
import pickle
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

from dbos import DBOS
from dbos._context import get_local_dbos_context

from deskwork.adapters.base import BaseModelAdapter, ModelResponse, StreamChunk
from deskwork.core.redact import (
    exception_text,
    known_credentials,
    redact,
    redact_exception,
    redact_text,
    rewrite_exception,
)
from deskwork.exceptions import DeskworkError
from deskwork.utils import picklable, to_jsonable

if TYPE_CHECKING:
    from deskwork.core.event import Event
    from deskwork.core.tool_call import ToolCall, ToolResult
    from deskwork.runtime.config import EventEmitter
    from deskwork.store.base import RunStore
    from deskwork.tools.base import Tool

__all__ = [
    "DurableAdapter",
    "Replay",
    "StepFailedError",
    "call_step",
    "carried_events",
    "in_run",
    "in_workflow",
    "tool_step",
]


def in_run() -> bool:
    """Whether the caller runs inside a durable run (a tool's child run, say): such a run
    runs inline, its calls part of the enclosing run's workflow or step."""
    ctx = get_local_dbos_context()
    return ctx is not None and ctx.is_within_workflow()


def in_workflow() -> bool:
    """Whether the caller is workflow code of a durable run (not inside one of its steps)."""
    ctx = get_local_dbos_context()
    return ctx is not None and ctx.is_workflow()


def carried_events(store: RunStore, system_url: str) -> AbstractContextManager[Any]:
    """While a durable run runs: its events ride its DBOS checkpoints (one round trip for
    both: ``PostgresRunStore.carried``) when ``store`` is in DBOS's database
    ``system_url``; else nothing changes."""
    carried = getattr(store, "carried", None)
    if carried is None or getattr(store, "database", None) is None:
        return contextlib.nullcontext()
    if store.database.url != system_url:  # type: ignore[attr-defined]  # PostgresRunStore
        return contextlib.nullcontext()
    result: AbstractContextManager[Any] = carried(in_workflow)
    return result


# -- the model port and the tool executor as steps ------------------------------------------


class _Chunks:
    """A streamed model answer as recorded by its step (replayed as a stream)."""

    def __init__(self, chunks: list[StreamChunk]) -> None:
        self.chunks = chunks


async def _replay_stream(chunks: list[StreamChunk]) -> AsyncIterator[StreamChunk]:
    for chunk in chunks:
        yield chunk


async def _collect(
    result: Any, live: asyncio.Queue[StreamChunk] | None = None
) -> ModelResponse | _Chunks:
    """``result`` as its step records it; each streamed chunk also goes to ``live`` as it
    arrives (the caller reads them while the step runs)."""
    if isinstance(result, ModelResponse):
        return _storable_response(result)
    chunks: list[StreamChunk] = []
    async for chunk in _as_async(result):
        chunks.append(chunk)
        if live is not None:
            live.put_nowait(chunk)
    return _Chunks(chunks)


async def _as_async(result: Any) -> AsyncIterator[StreamChunk]:
    if hasattr(result, "__aiter__"):
        async for chunk in result:
            yield chunk
    else:
        for chunk in result:
            yield chunk


async def _next_live(
    live: asyncio.Queue[StreamChunk], step: asyncio.Future[Any]
) -> StreamChunk | None:
    """The next chunk the running step streamed, or ``None`` once the step has ended and
    every chunk it streamed was read."""
    while live.empty() and not step.done():
        getter = asyncio.ensure_future(live.get())
        await asyncio.wait({getter, step}, return_when=asyncio.FIRST_COMPLETED)
        if getter.done():
            return getter.result()
        getter.cancel()
    return None if live.empty() else live.get_nowait()


async def _forward(
    first: StreamChunk, live: asyncio.Queue[StreamChunk], step: asyncio.Future[Any]
) -> AsyncIterator[StreamChunk]:
    """The chunks of a running step as they arrive; raises the step's error at the end."""
    try:
        yield first
        while (chunk := await _next_live(live, step)) is not None:
            yield chunk
        await step
    finally:
        if not step.done():  # the reader gave up (a cancelled run): the step stops too
            step.cancel()
            with contextlib.suppress(BaseException):
                await step


def _storable_response(response: ModelResponse) -> ModelResponse:
    """``response`` as DBOS can checkpoint it: the provider's raw object is dropped if it
    does not pickle (it is never stored or shown anyway)."""
    if response.raw is None or picklable(response):
        return response
    return response.model_copy(update={"raw": None})


def _keeps_no_secret(value: Any) -> bool:
    """Whether ``value`` pickles, as DBOS checkpoints it, into texts and bytes none of which
    holds anything redaction replaces or a provider key of the environment: an exception's
    own text is not all a pickle of it keeps (an ``httpx.HTTPStatusError`` keeps its
    request, ``Authorization: Bearer ...`` header and all, while its message reads clean)."""
    try:
        data = pickle.dumps(value)
    except Exception:
        return False
    keys = known_credentials(env=os.environ)
    return not any(
        redact_text(text) != text or any(key in text for key in keys)
        for text in _pickled_texts(data)
    )


def _pickled_texts(data: bytes) -> Iterator[str]:
    """Each text and bytes value a pickle holds (bytes read one character a byte)."""
    import pickletools  # with the first failed step, not with deskwork

    for _, argument, _ in pickletools.genops(data):
        if isinstance(argument, str):
            yield argument
        elif isinstance(argument, bytes | bytearray):
            yield bytes(argument).decode("latin-1")


def _storable_result(result: ToolResult) -> ToolResult:
    """``result`` as DBOS can checkpoint it: an exception that does not pickle or keeps a
    secret (:func:`_keeps_no_secret`) is dropped (its type name and redacted message stay),
    and data that does not pickle is kept as JSON."""
    exc = result.original_exception
    if picklable(result) and (exc is None or _keeps_no_secret(exc)):
        return result
    result = result.model_copy(update={"original_exception": None})
    if picklable(result):
        return result
    return result.model_copy(update={"data": to_jsonable(result.data)})


class StepFailedError(DeskworkError):
    """A model call failed with an exception that cannot be checkpointed; this carries its
    type name and message instead (``exception_type``)."""

    def __init__(self, exception_type: str, message: str) -> None:
        super().__init__(f"{exception_type}: {message}")
        self.exception_type = exception_type


def _storable_error(exc: Exception) -> Exception:
    """``exc`` as DBOS checkpoints it (pickled into its database): itself, with any secret in
    its message, arguments, attributes or notes, or in an ``ExceptionGroup``'s members (a
    pickle keeps them all), redacted in place (:func:`redact_exception`: its type, status
    code and headers stay, so the desk still classifies and retries it; a secret its text
    test missed, in a dict it keeps, is redacted the same way); else, when it does not
    pickle or its pickle still keeps a secret (:func:`_keeps_no_secret`: an object it keeps,
    as an HTTP request with its headers), its type name and redacted text
    (:class:`StepFailedError`)."""
    exc = redact_exception(exc)  # a copy of a group whose own message told a secret
    if _keeps_no_secret(exc):
        return exc
    rewrite_exception(exc, redact)  # a secret only its pickle showed (a dict's value)
    if _keeps_no_secret(exc):
        return exc
    return StepFailedError(type(exc).__name__, exception_text(exc))


def _model_step_name(params: dict[str, Any]) -> str:
    """``deskwork.model:<model>:<who>``: who asks (a digest of the system message), so a
    replay that reaches the calls in another order fails loudly instead of mixing answers."""
    messages = params.get("messages") or [{}]
    first = json.dumps(to_jsonable(messages[0]), sort_keys=True, default=str)
    return f"deskwork.model:{params.get('model')}:{hashlib.sha256(first.encode()).hexdigest()[:8]}"


class DurableAdapter(BaseModelAdapter):
    """The desk's adapter, with each call a DBOS step inside a durable run.

    Outside a durable workflow (or inside a step, such as a tool's child run) calls go straight
    to the wrapped adapter. A streamed answer reaches the runner chunk by chunk while its step
    runs, and the step records the whole stream; a replay hands the recorded chunks back
    without calling the model.
    """

    def __init__(self, inner: BaseModelAdapter) -> None:
        self.inner = inner

    def __getattr__(self, name: str) -> Any:
        if name == "inner":  # not set yet (a copy being built): no recursion
            raise AttributeError(name)
        return getattr(self.inner, name)

    async def acomplete(self, **params: Any) -> Any:
        if not in_workflow():
            return await _maybe_await(self.inner.acomplete(**params))
        live: asyncio.Queue[StreamChunk] | None = asyncio.Queue() if params.get("stream") else None

        async def step() -> ModelResponse | _Chunks:
            try:
                return await _collect(await _maybe_await(self.inner.acomplete(**params)), live)
            except Exception as exc:
                raise _storable_error(exc) from None

        options: Any = {"name": _model_step_name(params)}
        if live is None:
            return _answer(await DBOS.run_step_async(options, step))
        # a stream: the step runs beside the caller, who reads its chunks as they come
        reservation = DBOS.reserve_step()  # the step's id is drawn here, in call order
        running = asyncio.ensure_future(reservation.run_async(options, step))
        first = await _next_live(live, running)
        if first is None:  # ended before streaming (a replay returns its recorded chunks)
            return _answer(running.result())
        return _forward(first, live, running)

    async def astructured_complete(self, **params: Any) -> ModelResponse:
        from deskwork.adapters._seam import _structured_once

        async def call() -> ModelResponse:
            result: ModelResponse = await _structured_once(self.inner, params)
            return result

        async def step() -> ModelResponse:
            try:
                return _storable_response(await call())
            except Exception as exc:
                raise _storable_error(exc) from None

        if not in_workflow():
            return await call()
        return await DBOS.run_step_async({"name": _model_step_name(params)}, step)


def _answer(result: ModelResponse | _Chunks) -> ModelResponse | AsyncIterator[StreamChunk]:
    if isinstance(result, _Chunks):
        return _replay_stream(result.chunks)
    return result


async def _maybe_await(value: Any) -> Any:
    if isinstance(value, Awaitable):
        return await value
    return value


async def call_step(name: str, call: Callable[[], Awaitable[Any]]) -> Any:
    """``await call()``, as the DBOS step ``name`` inside a durable workflow: its result (or
    its error, by type name and message when the exception does not pickle) is checkpointed
    and a replay returns it without calling again. Elsewhere a plain call.

    Raises:
        StepFailedError: the result cannot be checkpointed (it does not pickle).
    """
    if not in_workflow():
        return await call()

    async def step() -> Any:
        try:
            result = await call()
        except Exception as exc:
            raise _storable_error(exc) from None
        if not picklable(result):
            raise StepFailedError(
                "UnserializableResult",
                f"the result of step {name} ({type(result).__name__}) cannot be checkpointed:"
                " it does not pickle",
            )
        return result

    return await DBOS.run_step_async({"name": name}, step)


async def tool_step(
    tool: Tool, call: ToolCall, run: Callable[[], Awaitable[ToolResult]]
) -> ToolResult:
    if not in_workflow():
        return await run()

    async def step() -> ToolResult:
        return _storable_result(await run())

    return await DBOS.run_step_async({"name": f"deskwork.tool:{tool.name}:{call.id}"}, step)


# -- events: a replay emits nothing twice -------------------------------------------------

_VOLATILE = ("duration", "elapsed", "latency", "timestamp", "_ms", "_at", "_seconds")


def _event_key(event_type: str, source: str, payload: dict[str, Any]) -> str:
    def stable(value: Any) -> Any:
        if isinstance(value, dict):
            return {
                k: stable(v)
                for k, v in value.items()
                if not any(mark in str(k) for mark in _VOLATILE)
            }
        if isinstance(value, list):
            return [stable(v) for v in value]
        return value

    body = json.dumps(stable(to_jsonable(payload)), sort_keys=True, default=str)
    return f"{event_type}\x00{source}\x00{body}"


class Replay:
    """Drops an event that a recovered run emits again (same type, source and payload, up to
    timings) when the run had stored it before the crash; each stored event absorbs one."""

    def __init__(self, stored: list[Event]) -> None:
        self._left = Counter(_event_key(e.type, e.source, e.payload) for e in stored)

    def wrap(self, emit: EventEmitter) -> EventEmitter:
        def replaying(event_type: str, source: str, payload: dict[str, Any]) -> None:
            key = _event_key(str(event_type), source, redact(payload) if payload else {})
            if self._left[key] > 0:
                self._left[key] -= 1
                return
            emit(event_type, source, payload)

        return replaying
