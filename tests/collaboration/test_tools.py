"""Collaboration tools: channel and blackboard access through tool calls."""

from __future__ import annotations

import json

from deskwork import Desk, Job, Worker
from deskwork.collaboration import (
    Blackboard,
    Channel,
    blackboard_read_tool,
    blackboard_write_tool,
    channel_broadcast_tool,
    channel_receive_tool,
    channel_send_tool,
)
from deskwork.core.tool_call import ToolCall
from deskwork.store.memory import InMemoryRunStore
from deskwork.testing import ScriptedAdapter, call_tool, call_tools, reply
from deskwork.tools import aexecute_tool


def _props(tool: object) -> list[str]:
    return list(tool.schema["properties"])  # type: ignore[attr-defined]


def test_names_and_parameters_match_the_documentation() -> None:
    channel, board = Channel(), Blackboard()
    tools = {
        "channel_send": channel_send_tool(channel, "a"),
        "channel_broadcast": channel_broadcast_tool(channel, "a"),
        "channel_receive": channel_receive_tool(channel, "a"),
        "blackboard_write": blackboard_write_tool(board, "a"),
        "blackboard_read": blackboard_read_tool(board),
    }
    assert {name: t.name for name, t in tools.items()} == {name: name for name in tools}
    assert _props(tools["channel_send"]) == ["recipient", "content", "metadata"]
    assert tools["channel_send"].schema["required"] == ["recipient", "content"]
    assert _props(tools["channel_broadcast"]) == ["content", "metadata"]
    receive = tools["channel_receive"].schema["properties"]
    assert list(receive) == ["broadcast_mode", "clear"]
    assert receive["broadcast_mode"]["enum"] == ["one_shot", "all"]
    assert _props(tools["blackboard_write"]) == ["key", "value"]
    assert _props(tools["blackboard_read"]) == ["key"]
    assert all(t.description for t in tools.values())


async def _call(tool: object, **arguments: object) -> str:
    result = await aexecute_tool(tool, ToolCall(id="c", name="t", arguments=arguments))  # type: ignore[arg-type]
    assert result.error is None, result.error
    return result.model_text()


async def test_channel_tools_send_broadcast_and_receive() -> None:
    channel = Channel()
    message_id = await _call(
        channel_send_tool(channel, "a"), recipient="b", content={"task": "x"}, metadata={"p": 1}
    )
    broadcast_id = await _call(channel_broadcast_tool(channel, "boss"), content="hello all")
    receive = channel_receive_tool(channel, "b")

    peeked = json.loads(await _call(receive, clear=False))
    assert [m["id"] for m in peeked] == [message_id, broadcast_id]
    assert peeked[0]["sender"] == "a" and peeked[0]["content"] == {"task": "x"}
    assert peeked[0]["metadata"] == {"p": 1} and peeked[1]["recipient"] is None

    assert len(json.loads(await _call(receive))) == 2
    assert json.loads(await _call(receive)) == []
    again = json.loads(await _call(receive, broadcast_mode="all"))
    assert [m["content"] for m in again] == ["hello all"]


async def test_blackboard_tools_write_and_read() -> None:
    board = Blackboard()
    assert await _call(blackboard_write_tool(board, "analyst"), key="score", value={"v": 95}) == (
        "score"
    )
    entry = board.read_entry("score")
    assert entry is not None and entry.author == "analyst" and entry.value == {"v": 95}
    read = blackboard_read_tool(board)
    assert json.loads(await _call(read, key="score")) == {"v": 95}
    assert await _call(read, key="missing") == "null"
    assert read.callable(key="missing") is None  # the stored value, or None


async def test_workers_collaborate_through_the_tools_in_a_run() -> None:
    channel, board = Channel(), Blackboard()
    analyst = Worker(
        name="analyst",
        tools=[blackboard_write_tool(board, "analyst"), channel_send_tool(channel, "analyst")],
    )
    adapter = ScriptedAdapter(
        [
            call_tools(
                ("blackboard_write", {"key": "result", "value": [1, 2]}),
                ("channel_send", {"recipient": "reviewer", "content": "please review"}),
            ),
            reply("done"),
            call_tool("channel_receive"),
            call_tool("blackboard_read", key="result"),
            reply("reviewed"),
        ]
    )
    desk = Desk(model="scripted/m", adapter=adapter, run_store=InMemoryRunStore())
    assert (await desk.arun(analyst, Job(input="analyze"))).content == "done"
    reviewer = Worker(
        name="reviewer",
        tools=[channel_receive_tool(channel, "reviewer"), blackboard_read_tool(board)],
    )
    report = await desk.arun(reviewer, Job(input="review"))
    assert report.content == "reviewed"
    results = [call.result.model_text() for call in report.tool_calls if call.result]
    assert json.loads(results[0])[0]["content"] == "please review"
    assert results[1] == "[1, 2]"
