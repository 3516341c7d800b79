"""What a worker's model call hands its adapter: every keyword of the model port, the desk's
settings and the job's options, ``num_retries=0`` (the desk retries, the client must not),
the same keywords on a retry, and a plain call's keywords when a stream falls back."""

from __future__ import annotations

from typing import Any

from deskwork import Desk, Job, Worker
from deskwork.adapters import RetryPolicy
from deskwork.store import InMemoryRunStore
from deskwork.testing import ScriptedAdapter, call_tool, fail, reply
from deskwork.tools import tool


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


def _desk(adapter: ScriptedAdapter, **settings: Any) -> Desk:
    return Desk(model="scripted/m", adapter=adapter, run_store=InMemoryRunStore(), **settings)


def test_a_turn_hands_the_adapter_every_keyword_of_the_port() -> None:
    adapter = ScriptedAdapter([call_tool("add", a=2, b=3), reply("5")])
    job = Job(input="add", thinking={"type": "enabled"}, drop_params=True, extra_body={"k": 1})
    desk = _desk(adapter, temperature=0.5, max_tokens=99, num_retries=3)
    report = desk.run(Worker(name="w", tools=[add]), job)
    assert report.status == "completed"
    first, second = adapter.calls
    assert first == {
        "model": "scripted/m",
        "messages": [{"role": "user", "content": "add"}],
        "tools": [add.to_provider()],
        "tool_choice": "auto",
        "temperature": 0.5,
        "max_tokens": 99,
        "stream": False,
        "stream_options": None,
        "thinking": {"type": "enabled"},
        "extra_body": {"k": 1},
        "drop_params": True,
        "num_retries": 0,
    }
    assert [m["role"] for m in second["messages"]] == ["user", "assistant", "tool"]
    assert {k: v for k, v in second.items() if k != "messages"} == {
        k: v for k, v in first.items() if k != "messages"
    }
    started = [e.payload for e in report.events if e.type == "llm.started"]
    assert started == [
        {"model": "scripted/m", "messages_count": 1, "tools_count": 1},
        {"model": "scripted/m", "messages_count": 3, "tools_count": 1},
    ]


class Overloaded(Exception):
    status_code = 503


def test_a_retried_call_hands_the_adapter_the_same_keywords() -> None:
    adapter = ScriptedAdapter([fail(Overloaded("busy")), reply("done")])
    desk = _desk(adapter, num_retries=1, retry_policy=RetryPolicy(initial_interval=0.0))
    report = desk.run(Worker(name="w"), Job(input="q"))
    assert report.status == "completed" and report.content == "done"
    assert len(adapter.calls) == 2 and adapter.calls[0] == adapter.calls[1]
    assert adapter.calls[1]["num_retries"] == 0


def test_a_stream_that_cannot_start_falls_back_to_a_plain_call() -> None:
    adapter = ScriptedAdapter([fail(ValueError("no streaming here")), reply("plain")])
    report = _desk(adapter, stream=True).run(Worker(name="w"), Job(input="q"))
    assert report.status == "completed" and report.content == "plain"
    streamed, plain = adapter.calls
    assert streamed["stream"] is True and plain["stream"] is False
    assert plain == {**streamed, "stream": False, "stream_options": None}
    assert "llm.stream_fallback" in [e.type for e in report.events]
