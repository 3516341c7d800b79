"""MCP calls that fail: a server that answers with JSON-RPC's generic server error (-32000, the
code the SDK also uses for a lost connection) fails the call and is not reported as gone;
arguments that are not a JSON object are an error result, as ``acall_tool`` promises."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from deskwork.tools import MCPToolProvider

pytest.importorskip("mcp")

SERVER = textwrap.dedent(
    """
    from mcp.server.mcpserver import MCPServer
    from mcp.shared.exceptions import MCPError

    server = MCPServer("sweep", log_level="CRITICAL")

    @server.tool()
    def lookup(key: str) -> str:
        \"\"\"Fail with JSON-RPC's generic server error.\"\"\"
        raise MCPError(-32000, f"upstream database unavailable for {key}")

    @server.tool()
    def echo(text: str) -> str:
        \"\"\"Return the text.\"\"\"
        return text

    server.run()
    """
)


def _server(tmp_path: Path) -> list[str]:
    script = tmp_path / "server_error_mcp.py"
    script.write_text(SERVER)
    return [str(script)]


async def test_a_server_error_answer_is_the_tools_failure_not_a_lost_server(
    tmp_path: Path,
) -> None:
    async with MCPToolProvider(timeout=30) as provider:
        await provider.connect_stdio(sys.executable, _server(tmp_path))
        failed = await provider.acall_tool("lookup", {"key": "sk-proj-ABCDEF1234567890abcdefgh"})
        after = await provider.acall_tool("echo", {"text": "still here"})

    assert failed.error is not None
    assert "went away" not in failed.error
    assert "MCP tool 'lookup'" in failed.error and "failed" in failed.error
    assert "upstream database unavailable for <redacted>" in failed.error
    assert after.content == "still here"


async def test_arguments_that_are_not_a_json_object_are_an_error_result(tmp_path: Path) -> None:
    wrong: list[Any] = [["text", "hi"], "text=hi", 5, {1: "hi"}]
    async with MCPToolProvider(timeout=30) as provider:
        await provider.connect_stdio(sys.executable, _server(tmp_path))
        results = [await provider.acall_tool("echo", arguments) for arguments in wrong]
        unhashable = await provider.acall_tool(["echo"], {"text": "hi"})  # type: ignore[arg-type]
        right = await provider.acall_tool("echo", {"text": "hi"})

    for result in results:
        assert result.content is None and result.error is not None
        assert "must be a mapping of parameter names to values" in result.error
    assert unhashable.error is not None and "unknown MCP tool" in unhashable.error
    assert right.content == "hi"
