"""A tool call that came without an id gets one no other reply's call has; an id the
provider sent is kept as it is."""

from __future__ import annotations

from typing import Any

from deskwork.adapters import StreamChunk, ToolCallDelta
from deskwork.adapters.base import assemble_stream
from deskwork.adapters.litellm import _to_response


def _reply(*ids: str | None) -> dict[str, Any]:
    calls = [
        {"id": call_id, "type": "function", "function": {"name": "f", "arguments": "{}"}}
        for call_id in ids
    ]
    message = {"role": "assistant", "content": None, "tool_calls": calls}
    return {"model": "m", "choices": [{"message": message, "finish_reason": "tool_calls"}]}


def _streamed(*ids: str | None) -> list[str]:
    chunks = [
        StreamChunk(tool_calls=[ToolCallDelta(index, call_id, "f", "{}")])
        for index, call_id in enumerate(ids)
    ]
    return [call.id for call in assemble_stream(chunks).tool_calls]


def _plain(*ids: str | None) -> list[str]:
    return [call.id for call in _to_response(_reply(*ids), "m").tool_calls]


def test_calls_without_ids_get_ids_no_other_reply_repeats() -> None:
    for ids_of in (_streamed, _plain):
        first, second = ids_of(None, None), ids_of(None, None)
        assert len({*first, *second}) == 4, ids_of
        assert all(i.startswith("call_") for i in first + second)


def test_ids_the_provider_sent_are_kept() -> None:
    for ids_of in (_streamed, _plain):
        kept, added = ids_of("toolu_1", None)
        assert kept == "toolu_1"
        assert added.startswith("call_1_")
