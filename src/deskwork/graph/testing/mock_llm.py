"""A scripted LangChain chat model for offline tests of graph agents."""

from __future__ import annotations

import json
import threading
from collections import deque
from collections.abc import AsyncIterator, Iterator, Sequence
from typing import Any

from langchain_core.callbacks import (
    AsyncCallbackManagerForLLMRun,
    CallbackManagerForLLMRun,
)
from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.messages.ai import UsageMetadata
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from langchain_core.runnables import Runnable, RunnableLambda
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError

__all__ = ["MockLLM"]

Scripted = str | BaseMessage | BaseException
"""One scripted reply: text, a ready message, or an exception to raise for that call."""


class MockLLM(BaseChatModel):
    """A chat model that answers from a script, for tests without a provider.

    Each call (``invoke``/``ainvoke``/``stream``/``astream``) takes the next scripted reply,
    first in first out; an exception in the script is raised for that call, and a call after
    the script is used up raises ``IndexError``::

        llm = MockLLM(responses=["first", TimeoutError("flaky"), "third"])

    Args:
        responses: replies for ``invoke``/``ainvoke`` (and ``astream`` without ``stream_chunks``).
        raise_on_call: an exception class or instance raised by every call instead.
        stream_chunks: per-call chunk lists for ``stream``/``astream``.
        structured_responses: replies of ``with_structured_output(...)`` runnables, FIFO; a dict
            is validated into the requested Pydantic schema. When ``None`` (the default),
            ``with_structured_output`` raises ``NotImplementedError``, like a model without
            structured output support.
        usage_tokens: ``{"input_tokens": ..., "output_tokens": ...}`` set as the
            ``usage_metadata`` of every reply.

    ``calls`` records the messages of every call, ``call_count`` how many calls were made.
    """

    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)

    responses: Sequence[Scripted] = Field(default_factory=list)
    raise_on_call: type[BaseException] | BaseException | None = None
    stream_chunks: Sequence[Sequence[str]] | None = None
    structured_responses: Sequence[Any] | None = None
    usage_tokens: dict[str, int] | None = None

    _lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)
    _replies: deque[Scripted] = PrivateAttr(default_factory=deque)
    _chunks: deque[Sequence[str]] = PrivateAttr(default_factory=deque)
    _structured: deque[Any] = PrivateAttr(default_factory=deque)
    _calls: list[list[BaseMessage]] = PrivateAttr(default_factory=list)

    def model_post_init(self, context: Any, /) -> None:
        """Queue the scripts (the public fields keep the original lists)."""
        super().model_post_init(context)
        self._replies = deque(self.responses)
        self._chunks = deque(self.stream_chunks or [])
        self._structured = deque(self.structured_responses or [])

    @property
    def _llm_type(self) -> str:
        return "deskwork-mock"

    @property
    def calls(self) -> list[list[BaseMessage]]:
        """The messages passed to each call so far, oldest first."""
        return list(self._calls)

    @property
    def call_count(self) -> int:
        """How many calls were made (structured-output calls included)."""
        return len(self._calls)

    def _record(self, messages: Sequence[BaseMessage]) -> None:
        with self._lock:
            self._calls.append(list(messages))
        if self.raise_on_call is not None:
            raise self.raise_on_call

    @staticmethod
    def _next(queue: deque[Any], what: str) -> Any:
        try:
            item = queue.popleft()
        except IndexError:
            raise IndexError(f"MockLLM has no more scripted {what}") from None
        if isinstance(item, BaseException):
            raise item
        return item

    def _usage(self) -> UsageMetadata | None:
        if self.usage_tokens is None:
            return None
        inputs = self.usage_tokens.get("input_tokens", 0)
        outputs = self.usage_tokens.get("output_tokens", 0)
        total = self.usage_tokens.get("total_tokens", inputs + outputs)
        return UsageMetadata(input_tokens=inputs, output_tokens=outputs, total_tokens=total)

    def _reply(self, messages: list[BaseMessage]) -> ChatResult:
        self._record(messages)
        with self._lock:
            item = self._next(self._replies, "responses")
        message = item if isinstance(item, AIMessage) else AIMessage(content=_text(item))
        usage = self._usage()
        if usage is not None:
            message = message.model_copy(update={"usage_metadata": usage})
        return ChatResult(generations=[ChatGeneration(message=message)])

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        return self._reply(messages)

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        return self._reply(messages)

    def _stream_pieces(self, messages: list[BaseMessage]) -> list[ChatGenerationChunk]:
        self._record(messages)
        with self._lock:
            if self.stream_chunks is not None:
                pieces: list[str] = list(self._next(self._chunks, "stream_chunks"))
            else:
                pieces = [_text(self._next(self._replies, "responses"))]
        usage = self._usage()
        last = len(pieces) - 1
        return [
            ChatGenerationChunk(
                message=AIMessageChunk(content=piece, usage_metadata=usage if i == last else None)
            )
            for i, piece in enumerate(pieces)
        ]

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        yield from self._stream_pieces(messages)

    async def _astream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> AsyncIterator[ChatGenerationChunk]:
        for chunk in self._stream_pieces(messages):
            yield chunk

    def with_structured_output(
        self, schema: dict[str, Any] | type, *, include_raw: bool = False, **kwargs: Any
    ) -> Runnable[LanguageModelInput, dict[str, Any] | BaseModel]:
        """A runnable answering from ``structured_responses``.

        With ``include_raw=True`` it returns ``{"raw": AIMessage, "parsed": ...,
        "parsing_error": ...}`` like LangChain models do: the raw message carries
        ``usage_tokens``, and a dict that fails schema validation becomes ``parsing_error``.

        Raises:
            NotImplementedError: no ``structured_responses`` were scripted.
        """
        if self.structured_responses is None:
            raise NotImplementedError("MockLLM was given no structured_responses")

        def answer(value: LanguageModelInput) -> Any:
            self._record(self._convert_input(value).to_messages())
            with self._lock:
                item = self._next(self._structured, "structured_responses")
            if not include_raw:
                return _parse(schema, item)
            raw = AIMessage(content=_json_text(item), usage_metadata=self._usage())
            try:
                return {"raw": raw, "parsed": _parse(schema, item), "parsing_error": None}
            except ValidationError as exc:
                return {"raw": raw, "parsed": None, "parsing_error": exc}

        async def aanswer(value: LanguageModelInput) -> Any:
            return answer(value)

        return RunnableLambda(answer, afunc=aanswer, name="MockLLMStructured")


def _parse(schema: dict[str, Any] | type, item: Any) -> Any:
    """A dict scripted for a Pydantic schema is validated into it; anything else is returned."""
    if isinstance(item, dict) and isinstance(schema, type) and issubclass(schema, BaseModel):
        return schema.model_validate(item)
    return item


def _json_text(item: Any) -> str:
    if isinstance(item, BaseModel):
        return item.model_dump_json()
    try:
        return json.dumps(item)
    except TypeError:
        return str(item)


def _text(item: Scripted) -> str:
    if isinstance(item, BaseMessage):
        return item.content if isinstance(item.content, str) else str(item.content)
    return str(item)
