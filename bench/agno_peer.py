"""The core benchmark's scenario on Agno (``pip install agno==3.1.10``), for side-by-side ratios.

An ``agno.models.base.Model`` subclass plays the scripted zero-latency model: its
``invoke``/``ainvoke`` return a tool call to ``add`` when the last message is not a tool
result, then the answer, each with its token usage as a provider reports it. An
``agno.agent.Agent`` with the same two tools runs it.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

__all__ = ["agno_runner"]


def _reply(messages: list[Any]) -> Any:
    from agno.metrics import MessageMetrics
    from agno.models.response import ModelResponse

    if messages and messages[-1].role == "tool":
        usage = MessageMetrics(input_tokens=10, output_tokens=4, total_tokens=14)
        return ModelResponse(role="assistant", content="The sum is 5.", response_usage=usage)
    call = {
        "id": "call_1",
        "type": "function",
        "function": {"name": "add", "arguments": json.dumps({"a": 2, "b": 3})},
    }
    usage = MessageMetrics(input_tokens=10, output_tokens=8, total_tokens=18)
    return ModelResponse(role="assistant", content="", tool_calls=[call], response_usage=usage)


def _scripted_model() -> Any:
    from agno.models.base import Model

    class ScriptedAgnoModel(Model):
        """Zero-latency model: a tool call to ``add``, then the answer."""

        def invoke(self, *args: Any, **kwargs: Any) -> Any:
            return _reply(kwargs["messages"])

        async def ainvoke(self, *args: Any, **kwargs: Any) -> Any:
            return _reply(kwargs["messages"])

        def invoke_stream(self, *args: Any, **kwargs: Any) -> Iterator[Any]:
            yield _reply(kwargs["messages"])

        async def ainvoke_stream(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
            yield _reply(kwargs["messages"])

        def _parse_provider_response(self, response: Any, **kwargs: Any) -> Any:
            return response

        def _parse_provider_response_delta(self, response: Any) -> Any:
            return response

    return ScriptedAgnoModel(id="scripted", name="scripted", provider="bench")


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def shout(text: str) -> str:
    """Upper-case some text."""
    return text.upper()


def agno_runner() -> tuple[Callable[[], None], Callable[[], Any]] | None:
    """``(run_once_sync, run_once_async)`` on an Agno agent, or ``None`` without Agno."""
    try:
        from agno.agent import Agent
    except ImportError:
        return None
    agent = Agent(model=_scripted_model(), tools=[add, shout], telemetry=False)

    def check(output: Any) -> None:
        assert output.content == "The sum is 5.", output.content

    def once() -> None:
        check(agent.run("add 2 and 3"))

    async def aonce() -> None:
        check(await agent.arun("add 2 and 3"))

    return once, aonce
