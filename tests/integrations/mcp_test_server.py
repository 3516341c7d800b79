"""A small real MCP server for the integration tests (built on ``mcp.server.mcpserver``).

Run it as a script:

- ``python mcp_test_server.py stdio`` serves over stdin/stdout.
- ``python mcp_test_server.py http PORT [TOKEN]`` serves streamable HTTP at ``/mcp`` and
  SSE at ``/sse`` on 127.0.0.1 with uvicorn; with ``TOKEN`` every request needs
  ``Authorization: Bearer TOKEN``.
- ``python mcp_test_server.py crash`` exits at once (a server that cannot start).
- ``python mcp_test_server.py raw`` serves over stdio without the SDK (whose server refuses
  to announce them) the tools of ``RAW_TOOLS``: some with input schemas the SDK's client
  refuses (``null``, a root that is not an object); a call answers with its name and arguments.

Set ``MCP_TEST_PREFIX`` to prefix every tool name (two servers with distinct tools). Set
``MCP_TEST_HOSTILE`` to a URL to add tools whose input schemas a client must not trust: a
regular expression that takes exponential time, a ``$ref`` to that URL, a ``$ref`` to itself.
Set ``SERVICE_API_KEY`` to add a ``use_service`` tool whose error names that key (a server
echoing a credential it was given). Set ``MCP_TEST_TWINS`` to add tools whose names a model
API cannot tell apart (``twin.name`` and ``twin_name``; two names that differ after their 64th
character).
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections.abc import AsyncIterator
from typing import Any

import anyio
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

PREFIX = os.environ.get("MCP_TEST_PREFIX", "")
HOSTILE_REF = os.environ.get("MCP_TEST_HOSTILE")
TWINS = ("twin.name", "twin_name", "x" * 64 + "1", "x" * 64 + "2")
OBJECT_A = {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]}
RAW_TOOLS: list[dict[str, Any]] = [
    {"name": "echo", "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}}},
    {"name": "text_root", "inputSchema": {"type": "string"}},
    {"name": "list_root", "inputSchema": {"type": "array", "items": {"type": "string"}}},
    {"name": "null_schema", "inputSchema": None},
    {"name": "untyped_schema", "inputSchema": {"properties": {"n": {"type": "integer"}}}},
    {"inputSchema": {"type": "object"}},
    {"name": "text_union", "inputSchema": {"anyOf": [{"type": "string"}, {"type": "integer"}]}},
    {"name": "text_ref", "inputSchema": {"$ref": "#/$defs/T", "$defs": {"T": {"type": "string"}}}},
    {"name": "object_union", "inputSchema": {"oneOf": [OBJECT_A, {"type": "null"}]}},
]


class StaticTokenVerifier:
    """Accepts exactly one bearer token."""

    def __init__(self, token: str) -> None:
        self._token = token

    async def verify_token(self, token: str) -> AccessToken | None:
        if token != self._token:
            return None
        return AccessToken(token=token, client_id="tests", scopes=[])


def build_server(token: str | None = None) -> MCPServer[Any]:
    """The test server: echo, add, fail, hang, die and whoami tools."""
    auth: dict[str, Any] = {}
    if token is not None:
        auth = {
            "token_verifier": StaticTokenVerifier(token),
            "auth": AuthSettings(issuer_url="http://127.0.0.1/", resource_server_url=None),
        }
    server: MCPServer[Any] = MCPServer("deskwork-test", log_level="CRITICAL", **auth)

    @server.tool(name=f"{PREFIX}echo")
    def echo(text: str) -> str:
        """Return the text unchanged."""
        return text

    @server.tool(name=f"{PREFIX}add")
    def add(a: int, b: int = 2) -> int:
        """Add two integers."""
        return a + b

    @server.tool(name=f"{PREFIX}fail")
    def fail(reason: str = "bad input") -> str:
        """Always report a tool error."""
        raise ToolError(f"refused: {reason}")

    @server.tool(name=f"{PREFIX}hang")
    async def hang(seconds: float = 60.0) -> str:
        """Sleep, then answer (a slow or hung server)."""
        await anyio.sleep(seconds)
        return "woke up"

    @server.tool(name=f"{PREFIX}die")
    def die() -> str:
        """Kill the server process in the middle of the call."""
        os._exit(3)

    @server.tool(name=f"{PREFIX}dotted.name")
    def dotted() -> str:
        """A tool whose name is not a valid model function name."""
        return "dotted ok"

    if HOSTILE_REF:
        _add_hostile_tools(server, HOSTILE_REF)
    service_key = os.environ.get("SERVICE_API_KEY")
    if service_key:

        @server.tool(name="use_service")
        def use_service() -> str:
            """Call a service with the key; it refuses, and the error echoes the key."""
            raise ToolError(f"the service refused key {service_key}")

    if os.environ.get("MCP_TEST_TWINS"):
        for name in TWINS:

            def twin(name: str = name) -> str:
                return f"I am {name[:10]}"

            server.add_tool(twin, name=name, description="one of two similar names")
    return server


def _add_hostile_tools(server: MCPServer[Any], url: str) -> None:
    """Tools that accept anything, announced with hostile input schemas."""
    schemas = {
        "regex": {"type": "object", "properties": {"s": {"type": "string", "pattern": "^(a+)+$"}}},
        "remote_ref": {"type": "object", "properties": {"x": {"$ref": url}}},
        "loop_ref": {
            "type": "object",
            "properties": {"x": {"$ref": "#/$defs/a"}},
            "$defs": {"a": {"$ref": "#/$defs/a"}},
        },
    }
    for name, schema in schemas.items():

        def accept(s: str = "", x: Any = None) -> str:
            return "accepted"

        server.add_tool(accept, name=name, description=f"a tool with a hostile schema ({name})")
        server._tool_manager._tools[name].parameters = schema  # what list_tools announces


def http_app(token: str | None) -> Any:
    """One Starlette app with streamable HTTP at /mcp and SSE at /sse + /messages/."""
    from starlette.applications import Starlette

    server = build_server(token)
    streamable = server.streamable_http_app(streamable_http_path="/mcp")
    sse = server.sse_app(sse_path="/sse", message_path="/messages/")

    @contextlib.asynccontextmanager
    async def lifespan(_app: Any) -> AsyncIterator[None]:
        async with server.session_manager.run():
            yield

    return Starlette(
        routes=[*streamable.routes, *sse.routes],
        middleware=list(streamable.user_middleware),
        lifespan=lifespan,
    )


def _raw_answer(method: str, params: dict[str, Any]) -> dict[str, Any] | None:
    if method == "initialize":
        return {
            "protocolVersion": params["protocolVersion"],
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "deskwork-raw-test", "version": "0"},
        }
    if method == "tools/list":
        return {"tools": RAW_TOOLS}
    if method == "tools/call":
        text = f"{params['name']} {json.dumps(params.get('arguments'), sort_keys=True)}"
        return {"content": [{"type": "text", "text": text}], "isError": False}
    return None


def serve_raw() -> None:
    """JSON-RPC over stdin/stdout, one message a line, written by hand."""
    for line in sys.stdin:
        message = json.loads(line)
        if "id" not in message:  # a notification
            continue
        result = _raw_answer(message["method"], message.get("params") or {})
        reply: dict[str, Any] = {"jsonrpc": "2.0", "id": message["id"]}
        if result is None:
            reply["error"] = {"code": -32601, "message": "Method not found"}
        else:
            reply["result"] = result
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


def main(argv: list[str]) -> None:
    mode = argv[1] if len(argv) > 1 else "stdio"
    if mode == "crash":
        print("mcp_test_server: refusing to start", file=sys.stderr)
        sys.exit(2)
    if mode == "raw":
        serve_raw()
        return
    if mode == "stdio":
        build_server().run()
        return
    import uvicorn

    port = int(argv[2])
    token = argv[3] if len(argv) > 3 else None
    uvicorn.run(http_app(token), host="127.0.0.1", port=port, log_level="critical")


if __name__ == "__main__":
    main(sys.argv)
