"""Context-window handling: detect context-limit errors and compact history by summary.

Reactive compaction runs when a model call fails with a context-limit error; proactive
compaction runs before a call when history exceeds ``max_context_messages``. Both keep
the leading system messages, a summary of the rest and the ``SUMMARY_TAIL_MESSAGES`` most
recent messages (fewer when that would leave more than ``max_context_messages``), never
splitting an assistant tool-call message from its tool results. The summary is a system
message, or a user message when the kept messages start with the assistant's: Anthropic
refuses a history whose first message after the system ones is not the user's.
"""

from __future__ import annotations

import sys
from typing import Any

from deskwork.adapters import _seam as seam
from deskwork.adapters.base import BaseModelAdapter
from deskwork.core.message import Message
from deskwork.core.redact import exception_text
from deskwork.exceptions import ContextLimitError

__all__ = [
    "SUMMARY_ATTEMPT_LIMIT",
    "SUMMARY_CHUNK_TOKENS",
    "SUMMARY_MAX_OUTPUT_TOKENS",
    "SUMMARY_TAIL_MESSAGES",
    "compact_messages",
    "is_context_limit_error",
    "model_is_registered",
]

SUMMARY_CHUNK_TOKENS = 2000
SUMMARY_TAIL_MESSAGES = 4
SUMMARY_ATTEMPT_LIMIT = 2
SUMMARY_MAX_OUTPUT_TOKENS = 800

_PATTERNS = (
    "context length",
    "context_length",
    "context window",
    "maximum context",
    "too many tokens",
    "prompt is too long",
    "input is too long",
    "reduce the length",
)
SUMMARY_MARKER = "summary"


def is_context_limit_error(error: BaseException) -> bool:
    """Whether ``error`` means the model's context window was exceeded."""
    if isinstance(error, ContextLimitError):
        return True
    if type(error).__name__ in {"ContextWindowExceededError", "ContextLengthExceededError"}:
        return True
    text = exception_text(error).lower()
    return any(pattern in text for pattern in _PATTERNS)


def model_is_registered(model: str) -> bool:
    """Whether LiteLLM knows the model's context size (full name or unprefixed suffix).

    Returns ``True`` when LiteLLM has not been imported: then nothing can be said.
    """
    litellm: Any = sys.modules.get("litellm")
    if litellm is None:
        return True
    known = getattr(litellm, "model_cost", {}) or {}
    return model in known or model.split("/", 1)[-1] in known


def _split(
    messages: list[Message], limit: int | None
) -> tuple[list[Message], list[Message], list[Message]]:
    head_end = 0
    while head_end < len(messages) and messages[head_end].role == "system":
        head_end += 1
    start = _clean_start(messages, head_end, _tail_size(messages[:head_end], limit))
    if start == head_end:
        return messages[:head_end], [], messages[start:]
    # an earlier summary is summarized again with the new messages (not kept beside the
    # new summary), so history stays bounded however often it is compacted
    head = [m for m in messages[:head_end] if m.metadata.get("deskwork") != SUMMARY_MARKER]
    earlier = [m for m in messages[:head_end] if m.metadata.get("deskwork") == SUMMARY_MARKER]
    return head, [*earlier, *messages[head_end:start]], messages[start:]


def _clean_start(messages: list[Message], head_end: int, size: int) -> int:
    """Where the kept tail (the ``size`` most recent messages) starts: after the tool
    results it would start with, whose call is older and would be summarized away; back at
    that call when nothing but its results would be left (the group kept whole, over
    ``size``)."""
    start = first = max(head_end, len(messages) - size)
    while start < len(messages) and messages[start].role == "tool":
        start += 1
    if start < len(messages):
        return start
    start = first
    while start > head_end and messages[start].role == "tool":
        start -= 1
    return start


def _tail_size(system: list[Message], limit: int | None) -> int:
    """How many recent messages a compaction keeps: ``SUMMARY_TAIL_MESSAGES``, fewer when
    with the leading ``system`` messages it keeps (not an earlier summary: that is
    summarized again) and the new summary they would be more than ``limit``; at least one."""
    if limit is None:
        return SUMMARY_TAIL_MESSAGES
    kept = sum(1 for message in system if message.metadata.get("deskwork") != SUMMARY_MARKER)
    return max(1, min(SUMMARY_TAIL_MESSAGES, limit - kept - 1))


def _render(messages: list[Message]) -> str:
    lines = []
    for message in messages:
        content = message.content if isinstance(message.content, str) else str(message.content)
        if message.tool_calls:
            calls = ", ".join(f"{c.name}({c.arguments})" for c in message.tool_calls)
            content = f"{content or ''} [called: {calls}]"
        lines.append(f"{message.role}: {content}")
    return "\n".join(lines)


def _chunks(text: str) -> list[str]:
    size = SUMMARY_CHUNK_TOKENS * 4  # about four characters a token
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


async def _summarize(adapter: BaseModelAdapter, model: str, text: str) -> str:
    summary = ""
    for chunk in _chunks(text):
        prompt = (
            "Summarize the conversation so far for an assistant that will continue it. "
            "Keep facts, decisions, open tasks and tool results that matter.\n\n"
            + (f"Summary so far:\n{summary}\n\n" if summary else "")
            + f"Conversation:\n{chunk}"
        )
        response = await seam.aresponse(
            adapter,
            model=model,
            messages=[{"role": "user", "content": prompt}],
            tools=None,
            tool_choice=None,
            temperature=None,
            max_tokens=SUMMARY_MAX_OUTPUT_TOKENS,
            stream=False,
            stream_options=None,
        )
        summary = response.content or summary
    return summary


async def compact_messages(
    adapter: BaseModelAdapter, model: str, messages: list[Message], *, limit: int | None = None
) -> tuple[list[Message], int, int] | None:
    """Summarize older messages. Returns ``(new_messages, summarized, kept)`` or ``None``.

    Keeps the leading system messages, a summary and the ``SUMMARY_TAIL_MESSAGES`` most
    recent messages; with ``limit``, fewer recent ones when all of them would be more than
    ``limit`` (at least one, never a tool result first; a tool-call group is kept whole).
    The summary is a user message when the kept messages start with an assistant one.
    ``None`` means there was nothing old enough to summarize.
    """
    head, middle, tail = _split(messages, limit)
    if not middle:
        return None
    summary = await _summarize(adapter, model, _render(middle))
    # Anthropic takes a history whose first message after the system ones is the user's
    opens = next((m.role for m in tail if m.role != "system"), "user")
    note = Message(
        role="system" if opens == "user" else "user",
        content=f"Summary of the earlier conversation:\n{summary}",
        metadata={"deskwork": SUMMARY_MARKER},
    )
    return [*head, note, *tail], len(middle), len(tail)
