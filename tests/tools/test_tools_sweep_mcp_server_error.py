"""An MCP server that answers a call with JSON-RPC's generic server error (-32000, the code
the SDK also uses for a lost connection) is reported as failing the call, not as gone."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

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


async def test_a_server_error_answer_is_the_tools_failure_not_a_lost_server(
    tmp_path: Path,
) -> None:
    script = tmp_path / "server_error_mcp.py"
    script.write_text(SERVER)
    async with MCPToolProvider(timeout=30) as provider:
        await provider.connect_stdio(sys.executable, [str(script)])
        failed = await provider.acall_tool("lookup", {"key": "sk-proj-ABCDEF1234567890abcdefgh"})
        after = await provider.acall_tool("echo", {"text": "still here"})

    assert failed.error is not None
    assert "went away" not in failed.error
    assert "MCP tool 'lookup'" in failed.error and "failed" in failed.error
    assert "upstream database unavailable for <redacted>" in failed.error
    assert after.content == "still here"
