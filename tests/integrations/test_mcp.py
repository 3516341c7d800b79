"""MCPToolProvider against real MCP servers: a stdio subprocess and HTTP (streamable + SSE)."""

from __future__ import annotations

import asyncio
import inspect
import logging
import re
import sys
import threading
import time
from typing import Any

import httpx
import httpx2
import pytest
from mcp_test_server import OBJECT_A
from mcpkit import STDIO_LABEL, TOKEN, HTTPServer, stdio_args

from deskwork import ConfigurationError, Desk, Job, Worker
from deskwork.store import InMemoryRunStore
from deskwork.testing import ScriptedAdapter, call_tool, call_tools, reply
from deskwork.tools import MCPToolProvider, Tool
from deskwork.tools.mcp import MCPConnectionError

MODEL = "scripted/model"


def _desk(*turns: Any) -> tuple[Desk, InMemoryRunStore]:
    store = InMemoryRunStore()
    return Desk(model=MODEL, adapter=ScriptedAdapter(turns), run_store=store), store


# --------------------------------------------------------------------------- stdio


async def test_stdio_tools_carry_the_server_schema_and_an_async_callable() -> None:
    command, args = stdio_args()
    async with MCPToolProvider(timeout=12.5) as provider:
        returned = await provider.connect_stdio(command, args)
        tools = provider.list_tools()
    assert returned == tools
    names = [t.name for t in tools]
    assert names == ["echo", "add", "fail", "hang", "die", "dotted_name"]
    echo = tools[0]
    assert isinstance(echo, Tool)
    assert echo.description == "Return the text unchanged."
    assert echo.schema["properties"]["text"]["type"] == "string"
    assert echo.schema["required"] == ["text"]
    assert echo.schema["title"] == "echoArguments"  # the server's inputSchema, verbatim
    assert echo.to_provider()["function"]["parameters"] == echo.schema
    assert inspect.iscoroutinefunction(echo.callable)
    assert echo.timeout == 12.5
    assert echo.metadata == {"mcp_server": STDIO_LABEL, "mcp_tool": "echo"}
    dotted = tools[-1]
    assert dotted.metadata["mcp_tool"] == "dotted.name"  # renamed for model APIs


async def test_stdio_calls_return_text_and_structured_content() -> None:
    command, args = stdio_args()
    async with MCPToolProvider() as provider:
        await provider.connect_stdio(command, args)
        echo = await provider.acall_tool("echo", {"text": "hi"})
        added = await provider.acall_tool("add", {"a": 40})
        dotted = await provider.acall_tool("dotted_name")
    assert (echo.error, echo.content, echo.data) == (None, "hi", {"result": "hi"})
    assert (added.content, added.data) == ("42", {"result": 42})
    assert dotted.content == "dotted ok"


async def test_errors_become_tool_results() -> None:
    command, args = stdio_args()
    async with MCPToolProvider() as provider:
        await provider.connect_stdio(command, args)
        failed = await provider.acall_tool("fail", {"reason": "no quota"})
        wrong_type = await provider.acall_tool("add", {"a": "forty"})
        missing = await provider.acall_tool("add", {})
        unknown = await provider.acall_tool("nope", {})
        still_fine = await provider.acall_tool("echo", {"text": "ok"})
    assert failed.error is not None and "refused: no quota" in failed.error
    assert failed.model_text().startswith("Error: ")
    assert wrong_type.error is not None and "'forty' is not of type 'integer'" in wrong_type.error
    assert missing.error is not None and "'a' is a required property" in missing.error
    assert unknown.error is not None and "unknown MCP tool 'nope'" in unknown.error
    assert still_fine.content == "ok"


async def test_hanging_server_times_out_and_the_session_survives() -> None:
    command, args = stdio_args()
    async with MCPToolProvider(timeout=0.5) as provider:
        await provider.connect_stdio(command, args)
        started = time.monotonic()
        hung = await provider.acall_tool("hang", {"seconds": 30})
        elapsed = time.monotonic() - started
        after = await provider.acall_tool("echo", {"text": "still here"})
        tools = {t.name: t for t in provider.list_tools()}
        tools["hang"].timeout = 5.0  # a per-tool override
        slow = await provider.acall_tool("hang", {"seconds": 0.8})
    assert hung.timed_out and hung.error == "tool 'hang' timed out after 0.5s"
    assert elapsed < 15  # not the call's 30 s
    assert after.content == "still here"
    assert slow.content == "woke up"


async def test_server_that_exits_mid_call_gives_clear_errors() -> None:
    command, args = stdio_args()
    async with MCPToolProvider() as provider:
        await provider.connect_stdio(command, args)
        died = await provider.acall_tool("die")
        later = await provider.acall_tool("echo", {"text": "anyone?"})
    assert died.error is not None
    assert f"MCP server {STDIO_LABEL} went away during the call to 'die'" in died.error
    assert later.error is not None and STDIO_LABEL in later.error
    assert later.content is None


async def test_server_that_cannot_start_raises_a_connection_error() -> None:
    command, args = stdio_args("crash")
    async with MCPToolProvider() as provider:
        with pytest.raises(
            MCPConnectionError, match=re.escape(f"connect to MCP server {STDIO_LABEL}")
        ):
            await provider.connect_stdio(command, args)
        with pytest.raises(MCPConnectionError, match="No such file or directory"):
            await provider.connect_stdio("/no/such/mcp-server")
        assert provider.list_tools() == []


async def test_unresponsive_server_hits_the_connect_timeout() -> None:
    silent = [sys.executable, "-c", "import time; time.sleep(30)"]
    started = time.monotonic()
    async with MCPToolProvider(connect_timeout=0.5) as provider:
        with pytest.raises(MCPConnectionError, match=r"no answer within 0\.5s"):
            await provider.connect_stdio(silent[0], silent[1:])
    assert time.monotonic() - started < 10


async def test_tool_name_clash_is_refused_and_prefix_resolves_it() -> None:
    command, args = stdio_args()
    async with MCPToolProvider() as provider:
        await provider.connect_stdio(command, args)
        with pytest.raises(
            ConfigurationError, match=re.escape(f"'echo' of {STDIO_LABEL} is already taken")
        ):
            await provider.connect_stdio(command, args)
        assert len(provider.list_tools()) == 6  # the refused server added nothing
        second = await provider.connect_stdio(command, args, prefix="b_")
        env_named = await provider.connect_stdio(command, args, env={"MCP_TEST_PREFIX": "env_"})
        first = await provider.acall_tool("echo", {"text": "one"})
        other = await provider.acall_tool("b_echo", {"text": "two"})
        third = await provider.acall_tool("env_echo", {"text": "three"})
    assert [t.name for t in second][:2] == ["b_echo", "b_add"]
    assert second[0].metadata["mcp_tool"] == "echo"
    assert env_named[0].name == "env_echo"  # env reached the server process
    assert (first.content, other.content, third.content) == ("one", "two", "three")


async def test_closed_provider_answers_with_errors() -> None:
    command, args = stdio_args()
    provider = MCPToolProvider()
    tools = await provider.connect_stdio(command, args)
    await provider.aclose()
    await provider.aclose()  # twice is fine
    echo = await tools[0].callable(arguments={"text": "late"})
    assert echo.error is not None and "not connected" in echo.error
    assert (await provider.acall_tool("echo", {"text": "x"})).error is not None
    assert provider.list_tools() == []


# --------------------------------------------------------------------------- HTTP


async def test_streamable_http_and_sse(http_server: HTTPServer) -> None:
    async with MCPToolProvider() as provider:
        http_tools = await provider.connect_streamable_http(http_server.mcp_url)
        sse_tools = await provider.connect_sse(http_server.sse_url, prefix="sse_")
        over_http = await provider.acall_tool("add", {"a": 1, "b": 2})
        over_sse = await provider.acall_tool("sse_echo", {"text": "streamed"})
        failed = await provider.acall_tool("sse_fail", {})
    assert http_tools[0].metadata["mcp_server"] == http_server.mcp_url
    assert sse_tools[0].name == "sse_echo"
    assert over_http.data == {"result": 3}
    assert over_sse.content == "streamed"
    assert failed.error is not None and "refused: bad input" in failed.error


async def test_http_timeout_cancels_the_call(http_server: HTTPServer) -> None:
    async with MCPToolProvider(timeout=0.5) as provider:
        await provider.connect_streamable_http(http_server.mcp_url)
        hung = await provider.acall_tool("hang", {"seconds": 30})
        after = await provider.acall_tool("echo", {"text": "alive"})
    assert hung.timed_out
    assert after.content == "alive"


async def test_secured_server_refuses_without_a_token(secured_server: HTTPServer) -> None:
    async with MCPToolProvider() as provider:
        with pytest.raises(MCPConnectionError, match="HTTP 401 Unauthorized"):
            await provider.connect_streamable_http(secured_server.mcp_url)
        with pytest.raises(MCPConnectionError, match="401"):
            await provider.connect_sse(secured_server.sse_url)
        wrong = httpx.AsyncClient(headers={"Authorization": "Bearer wrong-token-123"})
        with pytest.raises(MCPConnectionError) as info:
            await provider.connect_streamable_http(secured_server.mcp_url, http_client=wrong)
        await wrong.aclose()
    assert "wrong-token-123" not in str(info.value)


@pytest.mark.parametrize("transport", ["streamable_http", "sse"])
async def test_custom_httpx_client_authenticates(
    secured_server: HTTPServer, transport: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    client = httpx.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"})
    url = secured_server.mcp_url if transport == "streamable_http" else secured_server.sse_url
    async with MCPToolProvider() as provider:
        connect = getattr(provider, f"connect_{transport}")
        tools = await connect(url, http_client=client)
        desk, store = _desk(
            call_tools(("echo", {"text": "authorized"}), ("fail", {})), reply("done")
        )
        report = await desk.arun(Worker(name="w", tools=tools), Job(input="go"))
        text = repr(provider) + repr(tools) + str([t.metadata for t in tools])
    assert not client.is_closed  # the user's client stays theirs
    await client.aclose()
    assert report.status == "completed", report.errors
    results = {c.name: c.result for c in report.tool_calls}
    assert results["echo"] is not None and results["echo"].content == "authorized"
    dumped = report.model_dump_json() + str(store.get_events(report.run_id)) + text
    assert TOKEN not in dumped
    assert TOKEN not in caplog.text


async def test_headers_argument_and_httpx2_client(secured_server: HTTPServer) -> None:
    auth = {"Authorization": f"Bearer {TOKEN}"}
    client2 = httpx2.AsyncClient(headers=auth)
    async with MCPToolProvider() as provider:
        await provider.connect_streamable_http(secured_server.mcp_url, headers=auth)
        await provider.connect_sse(secured_server.sse_url, http_client=client2, prefix="s_")
        first = await provider.acall_tool("echo", {"text": "headers"})
        second = await provider.acall_tool("s_echo", {"text": "httpx2"})
    await client2.aclose()
    assert (first.content, second.content) == ("headers", "httpx2")


async def test_http_server_that_dies_mid_call(own_http_server: HTTPServer) -> None:
    async with MCPToolProvider(timeout=10) as provider:
        await provider.connect_streamable_http(own_http_server.mcp_url)
        died = await provider.acall_tool("die")
        later = await provider.acall_tool("echo", {"text": "gone"})
    assert died.error is not None and "went away during the call to 'die'" in died.error
    assert later.error is not None
    assert own_http_server.process.wait(timeout=5) == 3


# --------------------------------------------------------------------------- end to end


async def test_worker_calls_an_mcp_tool_through_the_desk() -> None:
    command, args = stdio_args()
    async with MCPToolProvider() as provider:
        await provider.connect_stdio(command, args)
        desk, store = _desk(call_tool("echo", text="hi"), reply("done"))
        report = await desk.arun(Worker(name="w", tools=provider.list_tools()), Job(input="go"))
    assert report.status == "completed", report.errors
    assert report.content == "done"
    (call,) = report.tool_calls
    assert call.name == "echo" and call.result is not None and call.result.content == "hi"
    types = [e.type for e in store.get_events(report.run_id)]
    assert "tool.started" in types and "tool.completed" in types
    tool_message = [m for m in report.messages if m.role == "tool"]
    assert tool_message[0].content == "hi"


def test_sync_desk_run_forwards_calls_to_the_connecting_loop() -> None:
    """A provider living on a loop in another thread serves ``desk.run`` (deskwork's own loop)."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    provider = MCPToolProvider()
    command, args = stdio_args()
    try:
        asyncio.run_coroutine_threadsafe(provider.connect_stdio(command, args), loop).result(20)
        desk, _ = _desk(call_tool("echo", text="from sync"), reply("done"))
        report = desk.run(Worker(name="w", tools=provider.list_tools()), Job(input="go"))
        asyncio.run_coroutine_threadsafe(provider.aclose(), loop).result(20)
    finally:
        loop.call_soon_threadsafe(loop.stop)
        thread.join(5)
        loop.close()
    assert report.status == "completed", report.errors
    assert report.tool_calls[0].result is not None
    assert report.tool_calls[0].result.content == "from sync"


def test_tools_of_a_finished_loop_fail_clearly() -> None:
    provider = MCPToolProvider()
    command, args = stdio_args()
    asyncio.run(provider.connect_stdio(command, args))  # that loop ends here
    desk, _ = _desk(call_tool("echo", text="x"), reply("done"))
    report = desk.run(Worker(name="w", tools=provider.list_tools()), Job(input="go"))
    asyncio.run(provider.aclose())
    assert report.status == "completed", report.errors
    result = report.tool_calls[0].result
    assert result is not None and result.error is not None
    assert "connected on an event loop that is not running" in result.error


async def test_worker_survives_crash_and_hang_of_mcp_servers(http_server: HTTPServer) -> None:
    command, args = stdio_args()
    async with MCPToolProvider(timeout=0.5) as provider:
        await provider.connect_stdio(command, args)
        await provider.connect_streamable_http(http_server.mcp_url, prefix="web_")
        desk, _ = _desk(
            call_tools(("hang", {"seconds": 30}), ("web_echo", {"text": "parallel"})),
            call_tool("die"),
            call_tool("echo", text="after crash"),
            reply("survived"),
        )
        report = await desk.arun(Worker(name="w", tools=provider.list_tools()), Job(input="go"))
    assert report.status == "completed", report.errors
    assert report.content == "survived"
    results = [c.result for c in report.tool_calls]
    assert all(r is not None for r in results)
    hang, web, die, echo = (r for r in results if r is not None)
    assert hang.timed_out and web.content == "parallel"
    assert die.error is not None and "went away" in die.error
    assert echo.error is not None and STDIO_LABEL in echo.error


async def test_hostile_input_schemas_neither_block_fetch_nor_raise() -> None:
    """A server's schema is checked without running its regular expressions (one that takes
    exponential time would block the event loop, where no timeout can stop it), without
    fetching what a ``$ref`` names, and a schema the check cannot follow is left to the server."""
    from deskwork.testing import OpenAICompatServer

    command, args = stdio_args()
    with OpenAICompatServer() as web:
        ref = f"{web.base_url}/schema.json"
        async with MCPToolProvider(timeout=30) as provider:
            await provider.connect_stdio(command, args, env={"MCP_TEST_HOSTILE": ref})
            started = time.monotonic()
            regex = await provider.acall_tool("regex", {"s": "a" * 27 + "!"})
            elapsed = time.monotonic() - started
            remote = await provider.acall_tool("remote_ref", {"x": 1})
            loop = await provider.acall_tool("loop_ref", {"x": 1})
        assert web.requests == []  # the $ref was not fetched
    assert (regex.error, regex.content) == (None, "accepted")
    assert elapsed < 5  # exponential matching takes seconds at 27 characters, minutes at 32
    assert (remote.error, remote.content) == (None, "accepted")
    assert (loop.error, loop.content) == (None, "accepted")


async def test_tools_of_one_server_whose_names_clash_once_valid_are_all_usable() -> None:
    """A prefix cannot tell two tools of one server apart: the server was refused for good."""
    command, args = stdio_args()
    async with MCPToolProvider() as provider:
        tools = await provider.connect_stdio(command, args, env={"MCP_TEST_TWINS": "1"})
        twins = {t.name: t.metadata["mcp_tool"] for t in tools[6:]}
        dotted = await provider.acall_tool("twin_name_2", {})
        plain = await provider.acall_tool("twin_name", {})
        second_long = await provider.acall_tool("x" * 62 + "_2", {})
    assert twins == {
        "twin_name_2": "twin.name",  # the valid name keeps it, whatever the listing order
        "twin_name": "twin_name",
        "x" * 64: "x" * 64 + "1",
        "x" * 62 + "_2": "x" * 64 + "2",
    }
    assert (dotted.content, plain.content) == ("I am twin.name", "I am twin_name")
    assert second_long.content == "I am xxxxxxxxxx"


async def test_a_key_given_to_a_server_is_masked_in_its_errors() -> None:
    """A stdio server gets its credentials in ``env``; one that echoes a key in an error put
    it, whatever its shape, in the tool result, the model's context, events and stores."""
    key = "0123456789abcdef0123456789abcdef"
    command, args = stdio_args()
    async with MCPToolProvider() as provider:
        await provider.connect_stdio(command, args, env={"SERVICE_API_KEY": key})
        result = await provider.acall_tool("use_service")
    assert result.error is not None
    assert result.error.endswith("the service refused key <redacted>")


async def test_tools_whose_schema_the_sdk_refuses_leave_the_others_usable(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The MCP SDK refuses a whole ``tools/list`` answer for one tool whose ``inputSchema``
    is ``null`` or whose root is not an object, so none of the server's tools could be used;
    and model APIs take only object parameters. A missing or untyped schema is taken as an
    object; a tool with another root, an untyped one whose anyOf/$ref admits no object (as
    an object schema, no arguments could satisfy it) or no name is left out, with a warning
    naming it."""
    command, args = stdio_args("raw")
    with caplog.at_level(logging.WARNING, logger="deskwork.tools.mcp"):
        async with MCPToolProvider() as provider:
            tools = await provider.connect_stdio(command, args)
            echo = await provider.acall_tool("echo", {"text": "hi"})
            untyped = await provider.acall_tool("untyped_schema", {"n": 3})
            refused = await provider.acall_tool("untyped_schema", {"n": "three"})
            null = await provider.acall_tool("null_schema", {"any": 1})
            left_out = await provider.acall_tool("text_root", {})
            union = await provider.acall_tool("object_union", {"a": "x"})
    assert {tool.name: tool.to_provider()["function"]["parameters"] for tool in tools} == {
        "echo": {"type": "object", "properties": {"text": {"type": "string"}}},
        "null_schema": {"type": "object", "properties": {}},
        "untyped_schema": {"type": "object", "properties": {"n": {"type": "integer"}}},
        "object_union": {"type": "object", "properties": {}, "oneOf": [OBJECT_A, {"type": "null"}]},
    }
    assert (echo.content, untyped.content) == ('echo {"text": "hi"}', 'untyped_schema {"n": 3}')
    assert refused.error is not None and "is not of type 'integer'" in refused.error
    assert null.content == 'null_schema {"any": 1}'
    assert left_out.error is not None and "unknown MCP tool 'text_root'" in left_out.error
    assert union.content == 'object_union {"a": "x"}'
    not_an_object = "not an object (model APIs take only object parameters)"
    assert [r.getMessage() for r in caplog.records if r.name == "deskwork.tools.mcp"] == [
        f"MCP server {STDIO_LABEL}: tool 'text_root' left out: its input schema's root is"
        f" 'string', {not_an_object}",
        f"MCP server {STDIO_LABEL}: tool 'list_root' left out: its input schema's root is"
        f" 'array', {not_an_object}",
        f"MCP server {STDIO_LABEL}: tool '<no name>' left out: name: Field required",
        f"MCP server {STDIO_LABEL}: tool 'text_union' left out: its input schema's root is"
        f" anyOf of non-objects, {not_an_object}",
        f"MCP server {STDIO_LABEL}: tool 'text_ref' left out: its input schema's root is"
        f" $ref of non-objects, {not_an_object}",
    ]


@pytest.mark.parametrize(
    "listed", [["a.b", "a_b", "a-b"], ["a_b", "a-b", "a.b"], ["a-b", "a.b", "a_b"]]
)
def test_clashing_names_do_not_depend_on_the_servers_listing_order(listed: list[str]) -> None:
    """A paused call names its tool; after a restart the server may list its tools in
    another order, and the call must still reach the same remote tool."""
    from deskwork.tools.mcp import _tool_names

    assert dict(zip(listed, _tool_names(listed), strict=True)) == {
        "a-b": "a-b",
        "a_b": "a_b",
        "a.b": "a_b_2",
    }
