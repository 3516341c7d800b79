"""A stream cut midway and asked for again (``llm.stream_restarted``) shows in an AG-UI
client as the reply only: the translator kept the cut stream's text message open, so the
client rendered the partial text and the whole reply as one assistant message. The partial
message now ends at the restart, a ``CUSTOM`` event names it for the client to drop, and the
restarted reply is a message of its own."""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("ag_ui")

from ag_ui.core import BaseEvent, EventType, RunAgentInput

from deskwork.core.event import new_event
from deskwork.serve._agui import AguiRun


def _run() -> AguiRun:
    body = RunAgentInput(thread_id="t", run_id="r", state=None, messages=[], tools=[],
                         context=[], forwarded_props=None)  # fmt: skip
    return AguiRun(body)


def _client(events: list[BaseEvent]) -> dict[str, str]:
    """The assistant texts an AG-UI client shows, by message id (it drops the one a
    ``CUSTOM`` llm.stream_restarted names)."""
    texts: dict[str, str] = {}
    for event in events:
        data: dict[str, Any] = event.model_dump()
        if event.type == EventType.TEXT_MESSAGE_START:
            texts[data["message_id"]] = ""
        elif event.type == EventType.TEXT_MESSAGE_CONTENT:
            texts[data["message_id"]] += data["delta"]
        elif event.type == EventType.CUSTOM and data["name"] == "llm.stream_restarted":
            texts.pop(data["value"]["discard_message_id"], None)
    return texts


def _translate(run: AguiRun, *steps: tuple[str, dict[str, Any]]) -> list[BaseEvent]:
    events = [new_event("r", kind, "w", payload) for kind, payload in steps]
    return [out for event in events for out in run.translate(event)]


def test_a_restarted_stream_is_a_new_message_and_the_cut_one_is_dropped() -> None:
    events = _translate(
        _run(),
        ("stream.token", {"token": "an answer cut", "type": "content"}),
        ("llm.retry", {"retry": 1}),
        ("llm.stream_restarted", {"model": "m", "error_type": "ProviderReplyError"}),
        ("stream.token", {"token": "the whole answer", "type": "content"}),
        ("assistant.message", {"content": "the whole answer"}),
    )
    kinds = [e.type for e in events]
    assert kinds.count(EventType.TEXT_MESSAGE_START) == 2
    assert kinds.count(EventType.TEXT_MESSAGE_END) == 2  # each message is closed
    assert list(_client(events).values()) == ["the whole answer"]
    custom = [e.model_dump() for e in events if e.type == EventType.CUSTOM]
    restarted = next(c for c in custom if c["name"] == "llm.stream_restarted")
    assert restarted["value"]["error_type"] == "ProviderReplyError"


def test_a_restart_before_any_text_drops_nothing() -> None:
    events = _translate(
        _run(),
        ("stream.token", {"token": "thinking", "type": "reasoning"}),
        ("llm.stream_restarted", {"model": "m", "error_type": "ProviderReplyError"}),
        ("stream.token", {"token": "the answer", "type": "content"}),
        ("assistant.message", {"content": "the answer"}),
    )
    assert events[0].type == EventType.CUSTOM
    assert events[0].model_dump()["value"]["discard_message_id"] is None
    assert list(_client(events).values()) == ["the answer"]
