"""LiteLLMAdapter: the default model adapter (any LiteLLM provider string).

LiteLLM is imported by an adapter's first call, not when the adapter is made, with
``LITELLM_LOCAL_MODEL_COST_MAP=True`` so the import never reaches for the network.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import inspect
import logging
import os
import sys
import threading
from collections.abc import AsyncIterator, Iterator
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ValidationError

from deskwork._logs import get_stdlib_logger
from deskwork._sync import on_shutdown
from deskwork.adapters.base import (
    MIN_STRUCTURED_RETRIES,
    BaseModelAdapter,
    ModelResponse,
    ModelResult,
    StreamChunk,
    StructuredOutputError,
    ToolCallDelta,
    _add_usage,
    fallback_call_id,
    parse_structured,
    parse_tool_call,
)
from deskwork.adapters.cost import calculate_cost, cost_from_usage
from deskwork.core.redact import (
    hide_header_lines,
    hide_values,
    known_credentials,
    linked_exceptions,
    rewrite_exception,
)
from deskwork.exceptions import DeskworkError, StreamingUnsupportedError
from deskwork.utils import check_seconds, is_number

if TYPE_CHECKING:
    import httpx

__all__ = ["DEFAULT_REQUEST_TIMEOUT", "LiteLLMAdapter", "ProviderReplyError", "import_litellm"]

DEFAULT_REQUEST_TIMEOUT = 600.0
"""Seconds a model request may take unless the adapter is given another ``timeout`` (the
OpenAI SDK's default); LiteLLM's own, which ``timeout=None`` keeps, is 6000."""

_configured = threading.Lock()
_done = False


def import_litellm() -> Any:
    """Import LiteLLM offline-safely and configure it once for deskwork."""
    global _done
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm

    with _configured:
        if not _done:
            litellm.telemetry = False
            litellm.suppress_debug_info = True
            on_shutdown(shutdown_litellm)
            _done = True
    return litellm


_adopted: set[asyncio.Task[Any]] = set()


def _adopt_logging_task() -> None:
    """Keep LiteLLM's logging task of another loop referenced (before every async call:
    plain, streamed or structured; never failing it).

    LiteLLM restarts its logging worker on whichever loop calls it next and forgets the old
    task; unreferenced, that pending task is destroyed by the GC with a warning. Referenced,
    it is cancelled cleanly when its loop closes (the sync bridge does that at exit).
    """
    with contextlib.suppress(Exception):  # hardening only
        _adopt()


def _adopt() -> None:
    import_litellm()  # the first call may get here first: LiteLLM must load offline
    from litellm.litellm_core_utils.logging_worker import GLOBAL_LOGGING_WORKER

    task = getattr(GLOBAL_LOGGING_WORKER, "_worker_task", None)
    running = asyncio.get_running_loop()
    if isinstance(task, asyncio.Task) and not task.done() and task.get_loop() is not running:
        _adopted.add(task)
        task.add_done_callback(_adopted.discard)


async def shutdown_litellm() -> None:
    """Stop LiteLLM's background logging task and close its async HTTP clients.

    Without this, a process exit can warn about a pending ``LoggingWorker`` task or a
    never-awaited client-cleanup coroutine.
    """
    if "litellm" not in sys.modules:  # never loaded: nothing to stop
        return
    import litellm
    from litellm.litellm_core_utils.logging_worker import GLOBAL_LOGGING_WORKER

    with contextlib.suppress(Exception):
        await GLOBAL_LOGGING_WORKER.stop()
    close = getattr(litellm, "close_litellm_async_clients", None)
    if close is not None:
        with contextlib.suppress(Exception):
            await close()
        # closed clients must not be handed out again: later calls build fresh ones
        with contextlib.suppress(Exception):
            litellm.in_memory_llm_clients_cache.flush_cache()  # type: ignore[no-untyped-call]


class ProviderReplyError(DeskworkError):
    """The provider answered HTTP 200 with no model reply: no choice in it, or a stream that
    ended before the provider finished its reply (a cut connection, or a body that was not a
    chat completion stream).

    Treated as HTTP 502 (a bad answer from upstream): transient, retried under ``num_retries``.
    """

    status_code = 502


def _hide_in_error(exc: BaseException, secrets: list[str]) -> None:
    """Mask ``secrets`` and the values of credential headers it quotes (``Cookie: a=b``,
    whatever their shape: :func:`hide_header_lines`) in ``exc``'s message and in what it
    keeps of the server's answer (``body``, which a durable desk pickles into its store), in
    place, and in every exception linked to it (a mid-stream error's text ends with its
    original exception's): its type, status and headers stay, so the desk still classifies
    and retries it."""
    for linked in linked_exceptions(exc):
        rewrite_exception(linked, lambda value: hide_values(hide_header_lines(value), secrets))


_hidden_in_logs: ContextVar[tuple[str, ...]] = ContextVar("_hidden_in_logs", default=())
"""The credentials of the adapter whose Instructor call is under way."""


class _HideCredentials(logging.Filter):
    """Masks the calling adapter's credentials in Instructor's records: it logs each failed
    call's error at ERROR level, a key the server echoed in it."""

    def filter(self, record: logging.LogRecord) -> bool:
        secrets = _hidden_in_logs.get()
        if secrets:
            with contextlib.suppress(Exception):  # arguments that do not fit: left as they are
                record.msg, record.args = hide_values(record.getMessage(), secrets), None
        return True


_HIDE_CREDENTIALS = _HideCredentials()


def _watch_instructor_logs() -> None:
    """Put the filters on the loggers Instructor logs failed calls on (added once each; a
    filter sees only its own logger's records): :class:`_HideCredentials`, and the pattern
    redaction of deskwork's own loggers."""
    for name in ("instructor", "instructor.v2.retry"):
        get_stdlib_logger(name).addFilter(_HIDE_CREDENTIALS)


def _request_timeout(value: Any) -> float | httpx.Timeout | None:
    """``value`` as an adapter's ``timeout``: seconds (:func:`check_seconds`), or an
    ``httpx.Timeout``, which LiteLLM accepts as it is."""
    if value is not None and not is_number(value):
        import httpx  # only for a value that is no number: most desks never need it

        if isinstance(value, httpx.Timeout):
            return value
    return check_seconds(value, "LiteLLMAdapter: timeout")


class LiteLLMAdapter(BaseModelAdapter):
    """Calls models through LiteLLM with OpenAI-compatible inputs.

    Args:
        api_base: endpoint override (e.g. a proxy or a local OpenAI-compatible server).
        api_key: key override; otherwise LiteLLM reads the provider's environment variable.
        timeout: seconds each model request may take before it fails with a timeout
            (:data:`DEFAULT_REQUEST_TIMEOUT`, 600, unless given; ``None``: LiteLLM's own,
            ``litellm.request_timeout``), or an ``httpx.Timeout`` (connect, read, write and
            pool limits), which LiteLLM hands to the provider's SDK. A ``timeout`` in
            ``extra_params`` wins.
        extra_params: more keyword arguments passed to every ``litellm`` call.

    Raises:
        ConfigurationError: ``timeout`` is not a number of seconds above 0, an
            ``httpx.Timeout`` or ``None``.
    """

    def __init__(
        self,
        *,
        api_base: str | None = None,
        api_key: str | None = None,
        timeout: float | httpx.Timeout | None = DEFAULT_REQUEST_TIMEOUT,
        extra_params: dict[str, Any] | None = None,
    ) -> None:
        self.api_base = api_base
        self._api_key = api_key  # never logged or stored
        self.timeout = _request_timeout(timeout)
        self.extra_params = dict(extra_params or {})

    def __repr__(self) -> str:
        return f"LiteLLMAdapter(api_base={self.api_base!r})"

    def _credentials(self) -> list[str]:
        """The keys a call may send, longest first: this adapter's, those of its
        ``extra_headers`` named like one (``X-Gateway-Key``, ``cf-aig-authorization``), and
        the provider keys LiteLLM reads from the environment (``OPENAI_API_KEY``, ...)."""
        headers = self.extra_params.get("extra_headers")
        return known_credentials(
            (self._api_key, self.extra_params.get("api_key")),
            env=os.environ,
            headers=headers if isinstance(headers, dict) else None,
        )

    @contextlib.contextmanager
    def _no_credentials(self) -> Iterator[None]:
        """A server may echo the key it was sent in its error body, and a key without a
        recognisable shape (an Azure key is 32 hex digits) passes the desk's pattern-based
        redaction: errors leave the adapter with every key it knows masked, and the value of
        every credential header they quote (``X-Api-Key: abc123``)."""
        try:
            yield
        except Exception as exc:
            _hide_in_error(exc, self._credentials())
            raise

    @functools.cached_property
    def _litellm(self) -> Any:
        """LiteLLM, imported by the first call: a desk whose runs never call a model (or
        call another adapter) never loads it (~2.5 s)."""
        return import_litellm()

    async def aclose(self) -> None:
        """Release LiteLLM's loop-bound resources (call before closing your own loop)."""
        await shutdown_litellm()

    def _params(self, model: str, messages: list[dict[str, Any]], **options: Any) -> dict[str, Any]:
        params: dict[str, Any] = {"model": model, "messages": messages, **self.extra_params}
        tools = options.pop("tools", None)
        if tools:
            params["tools"] = tools
            params["tool_choice"] = options.pop("tool_choice", None) or "auto"
            if self._supports_parallel(model):
                params["parallel_tool_calls"] = True
        options.pop("tool_choice", None)
        num_retries = options.pop("num_retries", None) or 0
        params["num_retries"] = num_retries
        # the OpenAI SDK under LiteLLM retries on its own unless told not to
        params.setdefault("max_retries", 0)
        for key, value in options.items():
            if value is not None:
                params[key] = value
        if self.api_base:
            params["api_base"] = self.api_base
        if self._api_key:
            params["api_key"] = self._api_key
        if self.timeout is not None:  # not over one given for the call or in extra_params
            params.setdefault("timeout", self.timeout)
        return params

    def _supports_parallel(self, model: str) -> bool:
        try:
            return bool(self._litellm.supports_parallel_function_calling(model=model))
        except Exception:
            return False

    async def acomplete(
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
        **kwargs: Any,
    ) -> ModelResult:
        params = self._params(
            model, messages, tools=tools, tool_choice=tool_choice, temperature=temperature,
            max_tokens=max_tokens, thinking=thinking, drop_params=drop_params,
            extra_body=extra_body, num_retries=num_retries, **kwargs,
        )  # fmt: skip
        _adopt_logging_task()
        with self._no_credentials():
            if stream:
                params["stream"] = True
                params["stream_options"] = stream_options or {"include_usage": True}
                response = await self._litellm.acompletion(**params)
                # LiteLLM's mock streams send no finish reason: not a cut stream
                whole = not params.get("mock_response")
                return self._guarded_chunks(response, model, whole)
            return _to_response(await self._litellm.acompletion(**params), model)

    async def _guarded_chunks(
        self, stream: Any, model: str, whole: bool
    ) -> AsyncIterator[StreamChunk]:
        with self._no_credentials():
            async for chunk in _chunks(stream, model, whole):
                yield chunk

    def complete(self, **kwargs: Any) -> ModelResponse:
        """Synchronous completion through ``litellm.completion`` (never streams)."""
        kwargs.pop("stream", None)
        kwargs.pop("stream_options", None)
        model = kwargs.pop("model")
        messages = kwargs.pop("messages")
        with self._no_credentials():
            response = self._litellm.completion(**self._params(model, messages, **kwargs))
            return _to_response(response, model)

    async def astructured_complete(
        self,
        *,
        model: str,
        messages: list[dict[str, Any]],
        response_schema: Any,
        retries: int = MIN_STRUCTURED_RETRIES,
        temperature: float | None = None,
        max_tokens: int | None = None,
        thinking: dict[str, Any] | None = None,
        drop_params: bool | None = None,
        extra_body: dict[str, Any] | None = None,
        num_retries: int | None = None,
    ) -> ModelResponse:
        """JSON-schema ``response_format`` first; on failure, Instructor (Pydantic models).

        ``TypeAdapter`` schemas use the generic validate-and-retry pipeline instead.
        """
        options: dict[str, Any] = {
            "temperature": temperature, "max_tokens": max_tokens, "thinking": thinking,
            "drop_params": drop_params, "extra_body": extra_body, "num_retries": num_retries,
        }  # fmt: skip
        _adopt_logging_task()  # LiteLLM is called directly here, not through acomplete
        with self._no_credentials():
            if not (isinstance(response_schema, type) and issubclass(response_schema, BaseModel)):
                return await super().astructured_complete(
                    model=model, messages=messages, response_schema=response_schema,
                    retries=retries, **options,
                )  # fmt: skip
            native = await self._native_attempt(model, messages, response_schema, options)
            if native is not None and native.parsed is not None:
                return native
            try:
                response = await self._instructor(
                    model, messages, response_schema, retries, options
                )
            except StructuredOutputError as exc:  # the native attempt was spent too
                spent = _spent_on_both(native, ModelResponse(usage=exc.usage, cost=exc.cost))
                exc.usage, exc.cost = spent.usage, spent.cost
                raise
            return _spent_on_both(native, response)

    async def _native_attempt(
        self,
        model: str,
        messages: list[dict[str, Any]],
        schema: type[BaseModel],
        options: dict[str, Any],
    ) -> ModelResponse | None:
        """The reply to a JSON-schema ``response_format`` call, ``parsed`` when it validates;
        ``None`` when the call failed (not fatally: the fallback may do better)."""
        response_format = {
            "type": "json_schema",
            "json_schema": {"name": schema.__name__, "schema": schema.model_json_schema()},
        }
        try:
            result = await self._litellm.acompletion(
                **self._params(model, messages, response_format=response_format, **options)
            )
            response = _to_response(result, model)
        except Exception as exc:
            if _is_fatal(exc):
                raise
            return None
        try:
            parsed = parse_structured(response.content, schema)
        except (ValidationError, ValueError):
            return response
        return response.model_copy(update={"parsed": parsed})

    async def _instructor(
        self,
        model: str,
        messages: list[dict[str, Any]],
        schema: type[BaseModel],
        retries: int,
        options: dict[str, Any],
    ) -> ModelResponse:
        import instructor

        client: Any = instructor.from_litellm(self._litellm.acompletion, mode=instructor.Mode.JSON)
        params = self._params(model, messages, **options)
        params.pop("max_retries", None)  # Instructor's own retry budget takes this name
        _watch_instructor_logs()
        hiding = _hidden_in_logs.set(tuple(self._credentials()))
        try:
            parsed, raw = await client.chat.completions.create_with_completion(
                response_model=schema,
                max_retries=max(retries, MIN_STRUCTURED_RETRIES),
                **params,
            )
        except Exception as exc:
            cause = _provider_error(exc)
            if _is_fatal(cause):
                raise cause from None
            reply = _last_reply(exc)  # the error of the last attempt, not Instructor's dump
            usage = _usage({"usage": getattr(exc, "total_usage", None)})
            raise StructuredOutputError(
                f"structured output failed: {cause}",
                reply,
                usage=usage,
                cost=cost_from_usage(model, usage) if usage else None,
            ) from exc
        finally:
            _hidden_in_logs.reset(hiding)
        # Instructor hands back its own subclass; users get an instance of their own model
        parsed = schema.model_validate(parsed.model_dump())
        response = _to_response(raw, model)
        # the usage is that of all of Instructor's calls, the price LiteLLM put on it the last's
        cost = cost_from_usage(model, response.usage) if response.usage else response.cost
        return response.model_copy(
            update={"parsed": parsed, "content": parsed.model_dump_json(), "cost": cost}
        )


def _spent_on_both(native: ModelResponse | None, response: ModelResponse) -> ModelResponse:
    """``response`` with the tokens and cost of the native attempt before it added in."""
    if native is None:
        return response
    costs = [cost for cost in (native.cost, response.cost) if cost is not None]
    return response.model_copy(
        update={
            "usage": _add_usage(native.usage, response.usage),
            "cost": sum(costs) if costs else None,
        }
    )


def _last_reply(exc: Exception) -> str | None:
    """The text of the last completion Instructor gave up on (``last_completion``), if any."""
    choices = _get(getattr(exc, "last_completion", None), "choices")
    return _text(_get(choices[0], "message") or {}) if choices else None


def _provider_error(exc: Exception) -> Exception:
    """The error of Instructor's last attempt (the provider's, or the reply's validation
    error), which its ``InstructorRetryException`` is raised ``from``; or ``exc``."""
    cause = exc.__cause__
    return cause if isinstance(cause, Exception) else exc


def _is_fatal(exc: Exception) -> bool:
    """Errors the structured pipeline must not swallow: the worker handles them, and the
    desk retries a transient one ``num_retries`` times (a fallback call would be one more).
    A refused key or model (401, 403, 404) is one, whatever LiteLLM names it (an
    OpenAI-style 401 body becomes its ``BadRequestError``)."""
    from deskwork.adapters._retry import REFUSED_STATUSES, is_transient
    from deskwork.runtime.context import is_context_limit_error

    name = type(exc).__name__
    return (
        is_context_limit_error(exc)
        or is_transient(exc)
        or name in {"AuthenticationError", "RateLimitError"}
        or getattr(exc, "status_code", None) in REFUSED_STATUSES
    )


def _get(obj: Any, key: str) -> Any:
    if isinstance(obj, dict):
        return obj.get(key)
    return getattr(obj, key, None)


def _text(message: Any) -> str | None:
    """A message's (or delta's) content; a refusal when it has none: OpenAI declines with
    ``refusal`` set and content null, and that text is the answer the user should see."""
    content = _get(message, "content")
    if content is None:  # LiteLLM keeps a reply's refusal among its provider fields
        extra = _get(message, "provider_specific_fields") or {}
        content = _get(message, "refusal") or _get(extra, "refusal")
    return content if isinstance(content, str) else None


def _content(delta: Any) -> str | None:
    """A streamed delta's content, without a refusal (read off the provider's stream)."""
    content = _get(delta, "content")
    return content if isinstance(content, str) else None


def _usage(response: Any) -> dict[str, int]:
    usage = _get(response, "usage")
    if not usage:
        return {}
    out = {}
    for key in ("prompt_tokens", "completion_tokens", "total_tokens"):
        value = _get(usage, key)
        if value is not None:
            out[key] = int(value)
    return out


def _to_response(response: Any, model: str) -> ModelResponse:
    choices = _get(response, "choices")
    if not choices:
        raise ProviderReplyError("the provider's reply has no choices (HTTP 200, no answer)")
    choice = choices[0]
    message = _get(choice, "message") or {}
    calls = []
    for index, raw in enumerate(_get(message, "tool_calls") or ()):
        function = _get(raw, "function") or {}
        calls.append(
            parse_tool_call(
                _get(raw, "id") or fallback_call_id(index),
                _get(function, "name") or "",
                _get(function, "arguments"),
            )
        )
    return ModelResponse(
        content=_text(message),
        reasoning_content=_get(message, "reasoning_content"),
        thinking_blocks=_get(message, "thinking_blocks") or None,
        tool_calls=calls,
        usage=_usage(response),
        cost=calculate_cost(response),
        model=_get(response, "model") or model,
        finish_reason=_get(choice, "finish_reason"),
        raw=response,
    )


def _cut_short(stream: Any) -> bool:
    """Whether LiteLLM's stream ended before the provider sent a finish reason. LiteLLM adds
    one of its own at the end of every stream; its wrapper keeps whether the provider did."""
    if not hasattr(stream, "received_finish_reason"):  # not LiteLLM's stream: cannot tell
        return False
    said = stream.received_finish_reason or getattr(stream, "intermittent_finish_reason", None)
    return said is None


async def _chunks(stream: Any, model: str, whole: bool = True) -> AsyncIterator[StreamChunk]:
    """The stream's chunks. With ``whole``, a stream that ends before the provider finished
    its reply raises :class:`ProviderReplyError` (not a truncated answer), or, when nothing
    came at all (a server that answered without a stream), ``StreamingUnsupportedError``
    before the first chunk, so that the desk asks again without streaming."""
    held: list[StreamChunk] = []  # chunks with nothing in them, until one says something
    said = False
    async for chunk in _parsed(stream, model):
        if said or chunk.content or chunk.reasoning or chunk.tool_calls or chunk.thinking_blocks:
            said = True
            for early in held:
                yield early
            held.clear()
            yield chunk
        else:
            held.append(chunk)
    if whole and _cut_short(stream):
        if not said:
            raise StreamingUnsupportedError(
                "the server's answer to a streamed call was no chat completion stream"
            )
        raise ProviderReplyError(
            "the model's stream ended before the provider finished its reply (no"
            " finish_reason): the connection was cut, or the body was not a chat completion stream"
        )
    for early in held:
        yield early


async def _parsed(stream: Any, model: str) -> AsyncIterator[StreamChunk]:
    """LiteLLM's chunks as deskwork's, with the refusal they dropped: an OpenAI-compatible
    server streams a refusal as ``delta.refusal`` pieces, and LiteLLM's stream passes none
    of them on (a refused streamed call completed empty), so they are read off the
    provider's own stream (:class:`_RefusalTap`), each as the text it is, as a plain call's
    refusal is the reply's text (:func:`_text`)."""
    tap = _RefusalTap.put_on(stream)
    async for raw in stream:
        if tap is not None and tap.pieces:
            yield StreamChunk(content=tap.taken())
        yield _stream_chunk(raw, model, refusal=tap is None)
    if tap is not None and tap.pieces:
        yield StreamChunk(content=tap.taken())


class _RefusalTap:
    """The provider's stream under a LiteLLM stream (its ``completion_stream``), passed on as
    it is, the ``delta.refusal`` text of each chunk kept in :attr:`pieces` on the way."""

    def __init__(self, provider_stream: Any) -> None:
        self._stream = provider_stream
        self._chunks = aiter(provider_stream)
        self.pieces: list[str] = []

    @classmethod
    def put_on(cls, stream: Any) -> _RefusalTap | None:
        """A tap put between LiteLLM's ``stream`` and its provider's; ``None`` when the
        provider's stream is not there yet (LiteLLM opens some on the first read)."""
        provider_stream = getattr(stream, "completion_stream", None)
        if not hasattr(provider_stream, "__aiter__") or isinstance(provider_stream, str | bytes):
            return None
        tap = cls(provider_stream)
        stream.completion_stream = tap
        return tap

    def taken(self) -> str:
        text = "".join(self.pieces)
        self.pieces.clear()
        return text

    def __aiter__(self) -> _RefusalTap:
        return self  # LiteLLM starts an ``async for`` on it for each chunk it reads

    async def __anext__(self) -> Any:
        chunk = await anext(self._chunks)
        choices = _get(chunk, "choices")
        refusal = _get(_get(choices[0], "delta"), "refusal") if choices else None
        if isinstance(refusal, str) and refusal:
            self.pieces.append(refusal)
        return chunk

    async def aclose(self) -> None:
        close = getattr(self._stream, "aclose", None) or getattr(self._stream, "close", None)
        if close is not None:
            result = close()
            if inspect.isawaitable(result):
                await result


def _stream_chunk(chunk: Any, model: str, *, refusal: bool = True) -> StreamChunk:
    choice = (_get(chunk, "choices") or [None])[0]
    delta = _get(choice, "delta") or {}
    deltas = [
        ToolCallDelta(
            index=_get(raw, "index") or 0,
            id=_get(raw, "id"),
            name=_get(_get(raw, "function") or {}, "name"),
            arguments=_get(_get(raw, "function") or {}, "arguments") or "",
        )
        for raw in _get(delta, "tool_calls") or ()
    ]
    usage = _usage(chunk) or None
    return StreamChunk(
        content=_text(delta) if refusal else _content(delta),
        reasoning=_get(delta, "reasoning_content"),
        tool_calls=deltas,
        usage=usage,
        finish_reason=_get(choice, "finish_reason"),
        thinking_blocks=_get(delta, "thinking_blocks") or None,
        cost=cost_from_usage(model, usage) if usage else None,
    )
