"""The LLM seam of realtime agents: ``LLMClient.generate_json`` over deskwork's adapters.

An LLM agent asks ``agent.llm`` for JSON; the engine gives every agent that has none its own
``LLMClient`` on registration, backed by the engine's model adapter (LiteLLM by default).
Tests replace it with any object that has an async ``generate_json``::

    class FakeLLM:
        async def generate_json(self, model, messages, **kwargs):
            return {"has_insight": True, "content": "Slow down."}

    agent.llm = FakeLLM()            # honoured: the agent never makes a real call

``generate_json`` never raises into the turn: it returns the parsed object, or ``None`` when
the call or the parsing failed, and ``last_error`` / ``last_result`` (kept per asyncio task,
so concurrent agents sharing one client do not see each other's results) say why.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import re
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass, field
from functools import cache
from typing import Any, Protocol, runtime_checkable

from deskwork.adapters import _seam as seam
from deskwork.adapters.base import BaseModelAdapter, ModelResponse
from deskwork.exceptions import ConfigurationError, DeskworkError
from deskwork.utils import check_seconds, is_integer

__all__ = [
    "AgentOutputError",
    "JSONGenerator",
    "LLMClient",
    "LLMResult",
    "load_json_object",
]

_FENCE = re.compile(r"^```(?:json)?\s*|\s*```$", re.MULTILINE)
_JSON_MODE = {"type": "json_object"}


class AgentOutputError(DeskworkError, ValueError):
    """A model reply that is not valid JSON for the agent's output format."""


@runtime_checkable
class JSONGenerator(Protocol):
    """What ``agent.llm`` must provide: one async JSON call."""

    async def generate_json(
        self, model: str, messages: list[dict[str, Any]]
    ) -> dict[str, Any] | None:
        """Return the model's reply as a JSON object, or ``None`` on failure.

        Agents also pass ``max_tokens``, ``timeout``, ``reasoning_effort`` and
        ``extra_params`` (keywords), but only those that are configured, so a fake that takes
        ``(model, messages)`` works for agents that configure none of them.
        """


@dataclass(slots=True)
class LLMResult:
    """One ``LLMClient.generate`` call: the parsed reply or the error, and its usage."""

    parsed: dict[str, Any] | None = None
    """The reply as a JSON object (``None`` on failure)."""
    content: str | None = None
    """The reply text."""
    model: str | None = None
    """The model that answered."""
    usage: dict[str, Any] = field(default_factory=dict)
    """Token usage reported by the provider."""
    error: BaseException | None = None
    """Why the call failed (provider error, timeout, unusable JSON)."""


_LAST: ContextVar[LLMResult | None] = ContextVar("deskwork_realtime_llm_last", default=None)


class LLMClient:
    """JSON calls for realtime agents through a deskwork ``BaseModelAdapter``."""

    def __init__(
        self,
        adapter: BaseModelAdapter | None = None,
        *,
        adapter_provider: Callable[[], BaseModelAdapter] | None = None,
        timeout: float | None = None,
        max_tokens: int | None = None,
    ) -> None:
        """Create a client.

        Args:
            adapter: The model adapter to call.
            adapter_provider: Returns the adapter on each call (the engine's, which may change
                with ``update_api_key``); used when ``adapter`` is not given.
            timeout: Default seconds per call (``None``: no limit of its own).
            max_tokens: Default output token cap (``None``: the provider's).

        Raises:
            ConfigurationError: ``adapter`` is not a ``BaseModelAdapter``,
                ``adapter_provider`` cannot be called, ``timeout`` is not a number above 0
                or ``max_tokens`` not an integer above 0 (``None`` is fine for each).
        """
        _check_client(adapter, adapter_provider, timeout, max_tokens)
        self._adapter = adapter
        self._provider = adapter_provider
        self.timeout = timeout
        self.max_tokens = max_tokens

    @property
    def adapter(self) -> BaseModelAdapter:
        """The adapter calls go to (a default ``LiteLLMAdapter`` if none was given)."""
        if self._adapter is not None:
            return self._adapter
        if self._provider is not None:
            return self._provider()
        from deskwork.adapters.litellm import LiteLLMAdapter

        self._adapter = LiteLLMAdapter()
        return self._adapter

    @property
    def last_result(self) -> LLMResult | None:
        """The last result of a call made by the current asyncio task."""
        return _LAST.get()

    @property
    def last_error(self) -> BaseException | None:
        """Why the current task's last call failed (``None`` if it succeeded)."""
        result = _LAST.get()
        return None if result is None else result.error

    async def generate_json(
        self,
        model: str,
        messages: list[dict[str, Any]],
        max_tokens: int | None = None,
        timeout: float | None = None,
        reasoning_effort: str | None = None,
        extra_params: dict[str, Any] | None = None,
    ) -> dict[str, Any] | None:
        """Ask ``model`` for a JSON object; return it, or ``None`` on any failure.

        Args:
            model: Any LiteLLM provider string.
            messages: OpenAI-style chat messages.
            max_tokens: Output token cap (default: the client's).
            timeout: Seconds for the call (default: the client's).
            reasoning_effort: Sent to the provider when set.
            extra_params: More provider parameters (``temperature`` ...), sent as given.
        """
        result = await self.generate(
            model,
            messages,
            max_tokens=max_tokens,
            timeout=timeout,
            reasoning_effort=reasoning_effort,
            extra_params=extra_params,
        )
        return result.parsed

    async def generate(
        self,
        model: str,
        messages: list[dict[str, Any]],
        max_tokens: int | None = None,
        timeout: float | None = None,
        reasoning_effort: str | None = None,
        extra_params: dict[str, Any] | None = None,
    ) -> LLMResult:
        """Like :meth:`generate_json`, returning the whole :class:`LLMResult` (never raises)."""
        result = LLMResult(model=model)
        limit = timeout if timeout is not None else self.timeout
        deadline = asyncio.timeout(limit)
        try:
            async with deadline:
                reply = await self._call(
                    model, messages, max_tokens, reasoning_effort, extra_params or {}
                )
            result.content, result.usage = reply.content, dict(reply.usage or {})
            result.model = reply.model or model
            result.parsed = load_json_object(reply.content)
        except asyncio.CancelledError:
            raise
        except TimeoutError as exc:  # the provider's own timeout is reported as it came
            expired = deadline.expired()
            result.error = TimeoutError(f"model call timed out after {limit}s") if expired else exc
        except Exception as exc:
            result.error = exc
        _LAST.set(result)
        return result

    async def _call(
        self,
        model: str,
        messages: list[dict[str, Any]],
        max_tokens: int | None,
        reasoning_effort: str | None,
        extra: dict[str, Any],
    ) -> ModelResponse:
        adapter = self.adapter
        kwargs: dict[str, Any] = {"temperature": None, **extra}
        if _accepts_kwargs(type(adapter)):
            kwargs.setdefault("response_format", _JSON_MODE)
            if reasoning_effort is not None:
                kwargs["reasoning_effort"] = reasoning_effort
        return await seam.aresponse(
            adapter,
            model=model,
            messages=messages,
            tools=None,
            tool_choice=None,
            max_tokens=max_tokens if max_tokens is not None else self.max_tokens,
            stream=False,
            stream_options=None,
            drop_params=True,
            **kwargs,
        )


def _check_client(adapter: Any, provider: Any, timeout: Any, max_tokens: Any) -> None:
    """Refuse an ``LLMClient`` argument that would only fail at the first call."""
    problem = None
    if adapter is not None and not isinstance(adapter, BaseModelAdapter):
        problem = f"adapter must be a BaseModelAdapter, got {type(adapter).__name__}"
    elif provider is not None and not callable(provider):
        problem = f"adapter_provider must be callable, got {type(provider).__name__}"
    elif max_tokens is not None and (not is_integer(max_tokens) or max_tokens < 1):
        problem = f"max_tokens must be an integer above 0 or None, got {max_tokens!r}"
    if problem is not None:
        raise ConfigurationError(f"LLMClient: {problem}")
    check_seconds(timeout, "LLMClient: timeout")


@cache
def _accepts_kwargs(adapter_type: type[BaseModelAdapter]) -> bool:
    """Whether the adapter's ``acomplete`` takes extra keyword arguments."""
    params = inspect.signature(adapter_type.acomplete).parameters
    return any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())


def load_json_object(text: str | None) -> dict[str, Any]:
    """Parse a JSON object from a model reply, tolerating code fences and prose around it.

    Raises:
        AgentOutputError: no JSON object could be read.
    """
    if not text or not text.strip():
        raise AgentOutputError("the model returned an empty reply")
    cleaned = _FENCE.sub("", text.strip())
    try:
        value = json.loads(cleaned)
    except json.JSONDecodeError as exc:
        start, end = cleaned.find("{"), cleaned.rfind("}")
        try:
            value = json.loads(cleaned[start : end + 1]) if 0 <= start < end else None
        except json.JSONDecodeError:
            value = None
        if value is None:
            raise AgentOutputError(
                f"reply is not valid JSON ({exc.msg}); it starts with {text.strip()[:80]!r}"
            ) from exc
    if not isinstance(value, dict):
        raise AgentOutputError(f"reply must be a JSON object, got {type(value).__name__}")
    return value
