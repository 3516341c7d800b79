"""The model port: ``BaseModelAdapter`` and the data it returns.

An adapter turns OpenAI-style messages (and optional tool schemas) into a
:class:`ModelResponse`, or, for streaming calls, an async iterator of
:class:`StreamChunk` that the worker assembles with :func:`assemble_stream`.
Structured output has a default pipeline here (JSON schema ``response_format`` plus
validation retries) that any adapter inherits; adapters may override it.
"""

from __future__ import annotations

import inspect
import json
import os
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from functools import cache
from typing import TYPE_CHECKING, Any

from pydantic import ConfigDict, Field, ValidationError

from deskwork._sync import run_sync
from deskwork.core._model import DeskworkModel, trusted
from deskwork.core._tool_names import as_tool_name
from deskwork.core.redact import redacted_preview
from deskwork.core.tool_call import ToolCall
from deskwork.exceptions import DeskworkError

if TYPE_CHECKING:  # pydantic.type_adapter loads with the first structured output
    from pydantic import TypeAdapter

__all__ = [
    "BaseModelAdapter",
    "ModelResponse",
    "ModelResult",
    "StreamChunk",
    "StructuredOutputError",
    "ToolCallDelta",
    "assemble_stream",
    "fallback_call_id",
    "parse_tool_call",
    "schema_adapter",
    "structured_reply",
    "unique_call_ids",
]

MIN_STRUCTURED_RETRIES = 3
REPLY_PREVIEW_CHARS = 300
"""At most this much of the model's last reply is kept in a :class:`StructuredOutputError`."""
_REPLY_MARKER = "\nthe model's last reply: "
_STRUCTURED_FAILED = "structured output failed"


class StructuredOutputError(DeskworkError):
    """The model did not produce output matching the response schema after all retries.

    ``reply`` is the model's last reply (redacted, at most :data:`REPLY_PREVIEW_CHARS`), also
    at the end of the message: the error a failed report keeps (and the ``llm.failed`` and
    ``worker.failed`` events) still shows what the model said, and :func:`structured_reply`
    reads it back (a managed workforce looks there for a manager that answered in prose).
    """

    def __init__(
        self,
        message: str,
        reply: str | None = None,
        *,
        usage: dict[str, int] | None = None,
        cost: float | None = None,
    ) -> None:
        self.reply = redacted_preview(reply, REPLY_PREVIEW_CHARS) if reply else None
        super().__init__(f"{message}{_REPLY_MARKER}{self.reply}" if self.reply else message)
        self.usage = usage or {}
        """The tokens its attempts spent (the run counts them, and a budget charges ``cost``,
        as a call that succeeded)."""
        self.cost = cost


def structured_reply(error: str) -> str | None:
    """The model's last reply that a :class:`StructuredOutputError`'s text ``error`` (an
    entry of a failed report's ``errors``) quotes, or ``None``."""
    head, marker, reply = error.rpartition(_REPLY_MARKER)
    return reply if marker and head.startswith(_STRUCTURED_FAILED) else None


class ModelResponse(DeskworkModel):
    """One model reply."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    content: str | None = None
    reasoning_content: str | None = None
    thinking_blocks: list[dict[str, Any]] | None = None
    tool_calls: list[ToolCall] = Field(default_factory=list)
    usage: dict[str, int] = Field(default_factory=dict)
    """prompt_tokens / completion_tokens / total_tokens when known."""
    cost: float | None = None
    """Estimated USD cost when the provider's price is known."""
    model: str | None = None
    finish_reason: str | None = None
    parsed: Any = None
    """Validated structured output (set by ``astructured_complete``)."""
    raw: Any = Field(default=None, exclude=True, repr=False)


@dataclass(slots=True)
class ToolCallDelta:
    """A piece of a streamed tool call. The first piece of a call carries ``id`` and ``name``."""

    index: int
    id: str | None = None
    name: str | None = None
    arguments: str = ""


@dataclass(slots=True)
class StreamChunk:
    """A piece of a streamed reply."""

    content: str | None = None
    reasoning: str | None = None
    tool_calls: list[ToolCallDelta] = field(default_factory=list)
    usage: dict[str, int] | None = None
    finish_reason: str | None = None
    thinking_blocks: list[dict[str, Any]] | None = None
    cost: float | None = None
    """USD cost of the whole call, when the adapter can price it (usually on the last chunk)."""


ModelResult = ModelResponse | AsyncIterator[StreamChunk]


def parse_tool_call(
    call_id: str, name: str, raw_arguments: str | dict[str, Any] | None
) -> ToolCall:
    """Build a ToolCall; malformed argument JSON is kept in ``raw_arguments`` with ``error`` set.

    Arguments a run store cannot keep (nested deeper than ``MAX_STORED_DEPTH``, 100 levels)
    are an error too, with ``arguments`` empty: the tool does not run, the model is told, and
    the run's state (which holds the call) can still be saved.
    """
    if isinstance(raw_arguments, dict):
        if any(isinstance(value, _NESTING) for value in raw_arguments.values()):
            problem = _unstorable(raw_arguments)
            if problem is not None:
                return ToolCall(id=call_id, name=name, error=problem, raw_arguments="{}")
        return _tool_call(call_id, name, raw_arguments)
    text = (raw_arguments or "").strip() or "{}"
    try:
        arguments = json.loads(text)
    except json.JSONDecodeError as exc:
        return ToolCall(
            id=call_id,
            name=name,
            error=f"malformed tool arguments: {exc.msg}",
            raw_arguments=raw_arguments,
        )
    except RecursionError:  # thousands of levels of [ or {
        arguments = None
    if len(text) > 2 * _MAX_DEPTH and text.count("[") + text.count("{") > _MAX_DEPTH:
        problem = _unstorable(arguments)
        if problem is not None:
            return ToolCall(id=call_id, name=name, error=problem, raw_arguments=raw_arguments)
    if not isinstance(arguments, dict):
        return ToolCall(
            id=call_id,
            name=name,
            error="tool arguments must be a JSON object",
            raw_arguments=raw_arguments,
        )
    return _tool_call(call_id, name, arguments)


_NESTING = (dict, list, tuple)
_MAX_DEPTH = 100
"""``deskwork.store._blobs.MAX_STORED_DEPTH`` (the stores are not imported with adapters)."""


def _unstorable(arguments: Any) -> str | None:
    """Why a run store cannot keep a call's ``arguments`` (``None``: JSON too deep to read),
    or ``None`` if it can."""
    from deskwork.store._blobs import DataTooDeep, check_sizes
    from deskwork.store._errors import StoreError

    try:
        if arguments is None:
            raise RecursionError
        check_sizes(arguments)
    except (RecursionError, DataTooDeep):
        return f"tool arguments nest more than {_MAX_DEPTH} levels deep; send flatter ones"
    except StoreError as exc:
        return f"tool arguments a run store cannot keep: {exc}"
    return None


_CALL_DEFAULTS = {name: None for name in ToolCall.model_fields}
_CALL_NAMED = frozenset({"id", "name", "arguments"})


def _tool_call(call_id: str, name: str, arguments: dict[str, Any]) -> ToolCall:
    """``ToolCall(id=call_id, name=name, arguments=arguments)``, built without validation when
    its parts have their fields' types already (text id, name and keys: every provider's
    reply), which would only copy them (~9k instructions a call); ``arguments`` is copied,
    as validation does."""
    if type(call_id) is str and type(name) is str and all(type(key) is str for key in arguments):
        values = {**_CALL_DEFAULTS, "id": call_id, "name": name, "arguments": dict(arguments)}
        return trusted(ToolCall, values, set(_CALL_NAMED))
    return ToolCall(id=call_id, name=name, arguments=arguments)


def fallback_call_id(index: int) -> str:
    """The id of the ``index``-th tool call of a reply whose provider sent it none:
    ``call_<index>_<8 random hex digits>``. A session's history pairs calls with results by
    id, and ``call_<index>`` alone came back every reply: a call of one turn was taken as
    answered by another turn's result."""
    return f"call_{index}_{os.urandom(4).hex()}"


def unique_call_ids(calls: list[ToolCall]) -> list[ToolCall]:
    """``calls``, a call whose id repeats an earlier one's renamed ``<id>_2`` (``_3``, ...).

    Results, approvals and resumes find a call by its id: two calls of one reply sharing
    one (a provider's bug) ran the first one's approval for the second, whose result then
    answered both. The model gets each call back under the id the desk gave it.
    """
    seen: set[str] = set()
    out: list[ToolCall] = []
    for call in calls:
        new_id, n = call.id, 2
        while new_id in seen:
            new_id, n = f"{call.id}_{n}", n + 1
        seen.add(new_id)
        out.append(call if new_id == call.id else call.model_copy(update={"id": new_id}))
    return out


def assemble_stream(chunks: list[StreamChunk], *, model: str | None = None) -> ModelResponse:
    """Merge stream chunks into one ModelResponse."""
    content: list[str] = []
    reasoning: list[str] = []
    calls: dict[int, dict[str, Any]] = {}  # the call each index is at
    slots: list[dict[str, Any]] = []  # every call, in the order it began
    usage: dict[str, int] = {}
    finish: str | None = None
    cost: float | None = None
    blocks: list[dict[str, Any]] = []
    for chunk in chunks:
        if chunk.content:
            content.append(chunk.content)
        if chunk.reasoning:
            reasoning.append(chunk.reasoning)
        if chunk.thinking_blocks:
            blocks.extend(chunk.thinking_blocks)
        for delta in chunk.tool_calls:
            slot = calls.get(delta.index)
            if slot is None or (delta.id and slot["id"] and delta.id != slot["id"]):
                # a new call; another id at a used index: a server that sends no index
                slot = {"index": delta.index, "id": None, "name": "", "arguments": []}
                calls[delta.index] = slot
                slots.append(slot)
            slot["id"] = slot["id"] or delta.id
            slot["name"] = _joined_name(slot["name"], delta.name)
            slot["arguments"].append(delta.arguments)
        usage = chunk.usage or usage
        finish = chunk.finish_reason or finish
        cost = chunk.cost if chunk.cost is not None else cost
    tool_calls = unique_call_ids(
        [
            parse_tool_call(
                slot["id"] or fallback_call_id(slot["index"]),
                slot["name"],
                "".join(slot["arguments"]),
            )
            for slot in sorted(slots, key=lambda slot: slot["index"])
        ]
    )
    return ModelResponse(
        content="".join(content) or None,
        reasoning_content="".join(reasoning) or None,
        thinking_blocks=blocks or None,
        tool_calls=tool_calls,
        usage=usage,
        cost=cost,
        model=model,
        finish_reason=finish,
    )


def _joined_name(name: str, piece: str | None) -> str:
    """A streamed call's name so far with the next delta's ``piece``: most providers send the
    whole name once; some repeat it on every delta (kept once), or send it growing (the
    longer one kept), or in pieces (joined, as OpenAI's SDK does)."""
    if not piece or piece == name:
        return name
    return piece if piece.startswith(name) else name + piece


def schema_adapter(schema: Any) -> TypeAdapter[Any]:
    """A TypeAdapter for a Pydantic model class or an existing TypeAdapter."""
    from pydantic import TypeAdapter

    if isinstance(schema, TypeAdapter):
        return schema
    return TypeAdapter(schema)


def _schema_name(schema: Any) -> str:
    return as_tool_name(getattr(schema, "__name__", None) or "", "response")


_FENCE = "```"


def _unfenced(text: str) -> str:
    """``text`` without a markdown code fence around it (```json ... ```)."""
    body = text.strip()
    if body.startswith(_FENCE):
        body = _no_json_tag(body[3:])
    if body.endswith(_FENCE):
        body = body[:-3]
    return body.strip()


def _fenced_blocks(text: str) -> list[str]:
    """What each fenced block of ``text`` holds, in order. Split, not a regular expression:
    the patterns this replaced backtracked on a run of whitespace with no closing fence (a
    JSON-mode reply of newlines until max_tokens) and took minutes on the event loop."""
    return [_no_json_tag(block).strip() for block in text.split(_FENCE)[1:-1:2]]


def _no_json_tag(block: str) -> str:
    return block[4:] if block[:4].lower() == "json" else block


def parse_structured(text: str | None, schema: Any) -> Any:
    """Parse JSON text and validate it against ``schema``. A reply in a markdown code fence
    is tolerated, with words around it too ("Here is the JSON: ```json {...}```"): when the
    whole reply does not validate, the first fenced block that does is the answer.

    Raises:
        ValueError: no content.
        ValidationError: neither the reply nor a fenced block in it validates (the first
            block's error when there is one).
    """
    if text is None:
        raise ValueError("the model returned no content")
    adapter = schema_adapter(schema)
    errors: list[ValidationError] = []
    for candidate in (_unfenced(text), *_fenced_blocks(text)):
        try:
            return adapter.validate_json(candidate)
        except ValidationError as exc:
            errors.append(exc)
    raise errors[min(1, len(errors) - 1)]  # the first block's error, if there is one


class BaseModelAdapter(ABC):
    """The interface every model backend implements.

    Implement :meth:`acomplete`. Override :meth:`astructured_complete` to route
    structured output through a provider's own pipeline.
    """

    @abstractmethod
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
        """One model call. With ``stream=True`` an adapter may return an async iterator."""

    def complete(self, **kwargs: Any) -> ModelResponse:
        """Synchronous :meth:`acomplete` (never streams)."""
        kwargs["stream"] = False

        async def _call() -> ModelResponse:
            result = await self.acomplete(**kwargs)
            if isinstance(result, ModelResponse):
                return result
            return assemble_stream([chunk async for chunk in result], model=kwargs.get("model"))

        return run_sync(_call(), api="complete")

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
        """Ask for JSON matching ``response_schema``; validate; retry with the error.

        Retries are clamped to at least ``MIN_STRUCTURED_RETRIES``.

        Raises:
            StructuredOutputError: no valid output after all attempts.
        """
        adapter = schema_adapter(response_schema)
        json_schema = adapter.json_schema()
        history = list(messages)
        extra: dict[str, Any] = {}
        if _accepts_kwarg(type(self), "response_format"):
            extra["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": _schema_name(response_schema), "schema": json_schema},
            }
        else:
            history.append({"role": "system", "content": _schema_instruction(json_schema)})
        usage: dict[str, int] = {}
        cost: float | None = None
        last_error = "no attempt made"
        last_reply: str | None = None
        for _ in range(1 + max(retries, MIN_STRUCTURED_RETRIES)):
            result = await self.acomplete(
                model=model, messages=history, tools=None, tool_choice=None,
                temperature=temperature, max_tokens=max_tokens, stream=False,
                stream_options=None, thinking=thinking, drop_params=drop_params,
                extra_body=extra_body, num_retries=num_retries, **extra,
            )  # fmt: skip
            response = (
                result
                if isinstance(result, ModelResponse)
                else assemble_stream([c async for c in result])
            )
            usage = _add_usage(usage, response.usage)
            if response.cost is not None:
                cost = (cost or 0.0) + response.cost
            try:
                parsed = parse_structured(response.content, response_schema)
            except (ValidationError, ValueError) as exc:
                last_error, last_reply = str(exc), response.content
                history.append({"role": "assistant", "content": response.content or ""})
                history.append({"role": "user", "content": _retry_instruction(last_error)})
                continue
            return response.model_copy(update={"parsed": parsed, "usage": usage, "cost": cost})
        raise StructuredOutputError(
            f"{_STRUCTURED_FAILED} validation: {last_error}", last_reply, usage=usage, cost=cost
        )

    def structured_complete(self, **kwargs: Any) -> ModelResponse:
        """Synchronous :meth:`astructured_complete`."""
        return run_sync(self.astructured_complete(**kwargs), api="structured_complete")


def _schema_instruction(json_schema: dict[str, Any]) -> str:
    return "Reply with a single JSON value matching this JSON schema, and nothing else:\n" + (
        json.dumps(json_schema)
    )


def _retry_instruction(error: str) -> str:
    return (
        f"Your previous reply did not match the required JSON schema: {error[:800]}\n"
        "Reply again with only valid JSON matching the schema."
    )


def _add_usage(total: dict[str, int], more: dict[str, int]) -> dict[str, int]:
    out = dict(total)
    for key, value in more.items():
        out[key] = out.get(key, 0) + int(value or 0)
    return out


@cache
def _accepts_kwarg(cls: type, name: str) -> bool:
    params = inspect.signature(getattr(cls, "acomplete")).parameters  # noqa: B009
    return name in params or any(p.kind is p.VAR_KEYWORD for p in params.values())
