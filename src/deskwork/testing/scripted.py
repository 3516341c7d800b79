"""ScriptedAdapter: a deterministic model for offline tests and demos.

Each model call consumes the next turn of the script::

    adapter = ScriptedAdapter([
        call_tool("search", query="deskwork"),
        reply("Found it."),
    ])

A turn can also be a callable ``(messages, tools) -> Turn | str`` for replies that depend
on the request, and any turn may inject an error or latency.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import AsyncIterator, Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from deskwork.adapters.base import (
    BaseModelAdapter,
    ModelResponse,
    ModelResult,
    StreamChunk,
    ToolCallDelta,
    parse_tool_call,
)
from deskwork.core._model import trusted
from deskwork.exceptions import DeskworkError
from deskwork.utils import to_jsonable

__all__ = [
    "ScriptExhaustedError",
    "ScriptedAdapter",
    "Turn",
    "call_tool",
    "call_tools",
    "fail",
    "reply",
    "structured",
]


class ScriptExhaustedError(DeskworkError):
    """The model was called more times than the script has turns."""


@dataclass(slots=True)
class Turn:
    """One scripted model reply."""

    content: str | None = None
    tool_calls: list[tuple[str, dict[str, Any] | str]] = field(default_factory=list)
    """``(tool_name, arguments)``; a string argument is sent verbatim (even malformed JSON)."""
    reasoning: str | None = None
    error: BaseException | None = None
    """Raised instead of replying (provider errors, context-limit errors, ...)."""
    latency: float = 0.0
    """Seconds to wait before replying."""
    usage: dict[str, int] | None = None
    cost: float | None = None


TurnSource = Turn | str | Callable[[list[dict[str, Any]], list[dict[str, Any]] | None], Any]


def reply(content: str, *, reasoning: str | None = None, latency: float = 0.0) -> Turn:
    """A plain text reply."""
    return Turn(content=content, reasoning=reasoning, latency=latency)


def call_tool(_name: str, /, **arguments: Any) -> Turn:
    """A reply that calls one tool."""
    return Turn(tool_calls=[(_name, arguments)])


def call_tools(*calls: tuple[str, dict[str, Any] | str], content: str | None = None) -> Turn:
    """A reply that calls several tools in one turn."""
    return Turn(content=content, tool_calls=list(calls))


def structured(data: Any) -> Turn:
    """A reply whose content is ``data`` as JSON (for response-schema jobs)."""
    return Turn(content=json.dumps(to_jsonable(data)))


def fail(error: BaseException, *, latency: float = 0.0) -> Turn:
    """A call that raises ``error``."""
    return Turn(error=error, latency=latency)


class ScriptedAdapter(BaseModelAdapter):
    """Replays a script of turns; records every request in :attr:`calls`. Its tool calls
    are ``call_0``, ``call_1``, ... in the order of its replies (no id repeats, as with a
    provider)."""

    def __init__(
        self,
        turns: Iterable[TurnSource] = (),
        *,
        default: TurnSource | None = None,
        latency: float = 0.0,
    ) -> None:
        self._turns: list[TurnSource] = list(turns)
        self._default = default
        self._latency = latency
        self._lock = threading.Lock()
        self._call_ids = 0  # the next tool call's number: call_0, call_1, ... across replies
        self.calls: list[dict[str, Any]] = []
        """The keyword arguments of every call, in order."""

    def add(self, *turns: TurnSource) -> None:
        """Append turns to the script."""
        with self._lock:
            self._turns.extend(turns)

    @property
    def remaining(self) -> int:
        """Turns not yet used."""
        return len(self._turns)

    def _next(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None) -> Turn:
        with self._lock:
            source = self._turns.pop(0) if self._turns else self._default
        if source is None:
            raise ScriptExhaustedError("the scripted model has no turns left")
        if callable(source) and not isinstance(source, Turn):
            source = source(messages, tools)
        if isinstance(source, BaseModel):
            return structured(source)
        return reply(source) if isinstance(source, str) else source

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
        self.calls.append(
            {"model": model, "messages": messages, "tools": tools, "tool_choice": tool_choice,
             "temperature": temperature, "max_tokens": max_tokens, "stream": stream,
             "stream_options": stream_options, "thinking": thinking, "extra_body": extra_body,
             "drop_params": drop_params, "num_retries": num_retries, **kwargs}
        )  # fmt: skip
        turn = self._next(messages, tools)
        delay = turn.latency or self._latency
        if delay:
            await asyncio.sleep(delay)
        if turn.error is not None:
            raise turn.error
        first = self._take_call_ids(len(turn.tool_calls)) if turn.tool_calls else 0
        if stream:
            return _stream(turn, first)
        return _response(turn, model, first)

    def _take_call_ids(self, count: int) -> int:
        """The number of the first of ``count`` tool call ids no other reply of this adapter
        has (``call_<n>``, in the order the replies are made: a first reply's first call is
        ``call_0``), as a provider's ids are unique in a conversation."""
        with self._lock:
            first = self._call_ids
            self._call_ids = first + count
        return first


def _usage(turn: Turn) -> dict[str, int]:
    if turn.usage is not None:
        return dict(turn.usage)
    completion = len((turn.content or "").split()) + 8 * len(turn.tool_calls)
    return {"prompt_tokens": 10, "completion_tokens": completion, "total_tokens": 10 + completion}


def _raw(arguments: dict[str, Any] | str) -> str:
    return arguments if isinstance(arguments, str) else json.dumps(arguments)


_JSON_SCALARS = frozenset({str, int, float, bool, type(None)})


def _sent(arguments: dict[str, Any] | str) -> dict[str, Any] | str:
    """What a provider's reply would carry: the arguments as JSON text, or a dict that JSON
    gives back unchanged (text keys, plain scalar values: the common case), whose round trip
    through the text would only copy it."""
    if type(arguments) is dict and all(
        type(key) is str and type(value) in _JSON_SCALARS and value == value  # not NaN
        for key, value in arguments.items()
    ):
        return arguments
    return _raw(arguments)


_RESPONSE_DEFAULTS = {name: None for name in ModelResponse.model_fields}
_TEXT = frozenset({str, type(None)})


def _response(turn: Turn, model: str, first: int) -> ModelResponse:
    calls = [
        parse_tool_call(f"call_{i}", name, _sent(args))
        for i, (name, args) in enumerate(turn.tool_calls, first)
    ]
    named: dict[str, Any] = {
        "content": turn.content,
        "reasoning_content": turn.reasoning,
        "tool_calls": calls,
        "usage": _usage(turn),
        "cost": turn.cost,
        "model": model,
        "finish_reason": "tool_calls" if calls else "stop",
    }
    if _typed(turn, model):  # validating would only copy them (~9k instructions a reply)
        return trusted(ModelResponse, {**_RESPONSE_DEFAULTS, **named}, set(named))
    return ModelResponse(**named)


def _typed(turn: Turn, model: str) -> bool:
    """Whether a reply's parts have their fields' types already: texts (or ``None``) and the
    computed usage. A turn's own ``usage`` or ``cost`` is validated (coerced) as given."""
    return (
        type(turn.content) in _TEXT
        and type(turn.reasoning) in _TEXT
        and type(model) is str
        and turn.usage is None
        and turn.cost is None
    )


async def _stream(turn: Turn, first: int) -> AsyncIterator[StreamChunk]:
    if turn.reasoning:
        yield StreamChunk(reasoning=turn.reasoning)
    words = (turn.content or "").split(" ")
    for i, word in enumerate(words if turn.content else ()):
        yield StreamChunk(content=word if i == 0 else " " + word)
    for index, (name, args) in enumerate(turn.tool_calls):
        raw = _raw(args)
        half = len(raw) // 2
        call_id = f"call_{first + index}"
        yield StreamChunk(tool_calls=[ToolCallDelta(index, call_id, name, raw[:half])])
        yield StreamChunk(tool_calls=[ToolCallDelta(index, arguments=raw[half:])])
    yield StreamChunk(
        finish_reason="tool_calls" if turn.tool_calls else "stop",
        usage=_usage(turn),
        cost=turn.cost,
    )
