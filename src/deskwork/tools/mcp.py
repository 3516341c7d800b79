"""MCP tools: use the tools of Model Context Protocol servers as deskwork tools.

::

    async with MCPToolProvider() as provider:
        await provider.connect_stdio("uv", ["run", "my-mcp-server"])
        await provider.connect_streamable_http(
            "https://api.example.com/mcp",
            http_client=httpx.AsyncClient(headers={"Authorization": "Bearer ..."}),
        )
        worker = Worker(name="Researcher", tools=provider.list_tools())
        report = await desk.arun(worker, Job(input="..."))

How it runs
    Each connection is owned by a background task on the event loop that connected it; the
    transport (a subprocess or HTTP session) lives inside that task. A failure of the server
    — it cannot start, exits or drops the connection mid-call, hangs — ends that task or the
    call, never the worker: a tool call always comes back as a ``ToolResult``, with ``error``
    set when it failed. Each tool gets the provider's ``timeout`` as its
    :attr:`Tool.timeout`, enforced by the normal execution path; a timed-out call is
    cancelled on the server too.

    Run the worker on the loop that connected (``await desk.arun(...)`` inside ``async with
    MCPToolProvider()``). A tool called from another loop is forwarded to the connection's
    loop while that loop runs in another thread, and otherwise fails with a clear error.
    HTTP clients you pass in are used on the connecting loop only.

Tool names
    A tool keeps the server's name, with the connection's ``prefix`` in front, and every
    character that model APIs reject (anything but ``A-Z a-z 0-9 _ -``) replaced by ``_``,
    cut to 64 characters (an empty name becomes ``tool``). Two tools of one server that end
    with the same name (``a.b`` and ``a_b``): the one whose name was valid already keeps it
    (``a_b``), the other is ``a_b_2`` (``_3``, ... in the order of their names), whatever
    order the server lists them in. Names are unique across a provider: connecting a server
    whose tool name is already taken by another server's raises
    :class:`~deskwork.exceptions.ConfigurationError` naming the clash, and that new
    connection is closed. Connect it again with a ``prefix``.

Input schemas
    A tool's ``inputSchema`` becomes its :attr:`Tool.schema`, the parameters the model sees.
    The server's tools are checked one by one, not as a whole listing (the MCP SDK refuses a
    whole listing for one tool it does not accept): a schema that is missing, ``null`` or has
    no ``type`` at its root is taken as an object schema (``"properties": {}`` when it
    declares none); a tool whose schema root is anything but an object (``{"type":
    "string"}``, an array) is left out, since model APIs take only object parameters and
    ``tools/call`` sends only an object, and so is a tool the SDK refuses (no name, ...).
    Each tool left out is logged as a warning on the ``deskwork.tools.mcp`` logger naming
    the server, the tool and why; the server's other tools are usable.

Credentials
    Headers and HTTP clients are used for requests only. Tool results, error messages, tool
    metadata and reprs name a server by its command or its URL without user info, query or
    fragment, and error texts pass through :func:`~deskwork.core.redact.redact_text`. A
    credential the connection was given (a stdio server's ``env`` named like a key, a header
    named like one, of ``headers`` or of the HTTP client) is masked in them whatever its
    shape, should the server echo it.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Coroutine, Mapping, Sequence
from contextlib import AsyncExitStack
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import urlsplit, urlunsplit

from pydantic import BaseModel, ConfigDict, Field, model_validator

from deskwork._extras import require
from deskwork._logs import get_stdlib_logger
from deskwork.core._tool_names import MAX_TOOL_NAME, as_tool_name
from deskwork.core.redact import hide_values, known_credentials, redact_text
from deskwork.core.tool_call import ToolCall, ToolResult
from deskwork.exceptions import ConfigurationError, DeskworkError
from deskwork.tools.base import Tool
from deskwork.tools.execution import aexecute_tool
from deskwork.utils import new_id

if TYPE_CHECKING:
    from mcp import ClientSession
    from mcp_types import CallToolResult
    from mcp_types import Tool as RemoteTool

__all__ = ["MCPConnectionError", "MCPToolProvider"]

T = TypeVar("T")
Streams = tuple[Any, Any]
Opener = Callable[[AsyncExitStack, "_Connection"], Awaitable[Streams]]

DEFAULT_TOOL_TIMEOUT = 60.0
DEFAULT_CONNECT_TIMEOUT = 30.0
_MAX_TOOL_PAGES = 100
_CONNECTION_CLOSED = -32000
"""The code of the error the MCP SDK makes up for a request the connection lost. Servers send
it too (JSON-RPC's generic server error), so :func:`_connection_lost` also reads the text."""
_LOST_MESSAGES = ("Connection closed", "SSE stream ")
_log = get_stdlib_logger(__name__)


class MCPConnectionError(DeskworkError, ConnectionError):
    """An MCP server could not be reached: it did not start, refused, or did not answer."""


class MCPToolProvider:
    """Connects to MCP servers and offers their tools as deskwork :class:`Tool` objects.

    Use it as an async context manager (or call :meth:`aclose`): closing stops the server
    subprocesses and HTTP sessions.

    Args:
        timeout: seconds each tool call may take (set as every tool's ``Tool.timeout``;
            ``None`` waits forever). Change ``tool.timeout`` for a single tool.
        connect_timeout: seconds to start, initialize and list the tools of one server.
    """

    def __init__(
        self,
        *,
        timeout: float | None = DEFAULT_TOOL_TIMEOUT,
        connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
    ) -> None:
        self.timeout = timeout
        self.connect_timeout = connect_timeout
        self._connections: list[_Connection] = []
        self._tools: dict[str, Tool] = {}

    def __repr__(self) -> str:
        servers = [conn.label for conn in self._connections]
        return f"MCPToolProvider(servers={servers!r}, tools={len(self._tools)})"

    async def __aenter__(self) -> MCPToolProvider:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    # -- connecting ----------------------------------------------------------------------

    async def connect_stdio(
        self,
        command: str,
        args: Sequence[str] | None = None,
        env: Mapping[str, str] | None = None,
        *,
        cwd: str | Path | None = None,
        prefix: str = "",
    ) -> list[Tool]:
        """Start a server subprocess and talk to it over stdin/stdout.

        Args:
            command: the executable (for example ``"uv"`` or ``sys.executable``).
            args: its arguments.
            env: extra environment variables. The server gets only these plus a safe
                minimum from this process (``HOME``, ``PATH``, ``USER``, ...), as the MCP
                SDK does, so pass what it needs (an API key, ``PYTHONPATH``) here.
            cwd: working directory of the server.
            prefix: put in front of every tool name of this server.

        Returns:
            The tools of this server (all tools: :meth:`list_tools`).

        Raises:
            MCPConnectionError: the server did not start or did not answer in time.
            ConfigurationError: a tool name is already taken (see the module docs).
        """
        require("mcp", "mcp")
        from mcp.client.stdio import StdioServerParameters, stdio_client

        params = StdioServerParameters(
            command=command, args=list(args or ()), env=dict(env) if env else None, cwd=cwd
        )

        async def open_streams(stack: AsyncExitStack, conn: _Connection) -> Streams:
            streams: Streams = await stack.enter_async_context(stdio_client(params))
            return streams

        secrets = known_credentials(env=env)
        return await self._connect(f"stdio:{Path(command).name}", open_streams, prefix, secrets)

    async def connect_streamable_http(
        self,
        url: str,
        http_client: Any | None = None,
        headers: Mapping[str, str] | None = None,
        *,
        prefix: str = "",
    ) -> list[Tool]:
        """Connect to a server over Streamable HTTP.

        Args:
            url: the server's MCP endpoint, e.g. ``https://api.example.com/mcp``.
            http_client: an ``httpx.AsyncClient`` (or ``httpx2.AsyncClient``) configured for
                the server, e.g. with an ``Authorization`` header; every request goes through
                it. You keep ownership: the provider never closes it.
            headers: extra headers for every request.
            prefix: put in front of every tool name of this server.

        Returns:
            The tools of this server.

        Raises:
            MCPConnectionError: the server refused (e.g. HTTP 401) or did not answer in time.
            ConfigurationError: a tool name is already taken.
        """
        require("mcp", "mcp")
        from mcp.client.streamable_http import streamable_http_client

        from deskwork.tools._mcp_http import mcp_http_client

        async def open_streams(stack: AsyncExitStack, conn: _Connection) -> Streams:
            client = mcp_http_client(http_client, headers, on_status=conn.note_http_status)
            await stack.enter_async_context(client)
            streams = await stack.enter_async_context(
                streamable_http_client(url, http_client=client)
            )
            return streams[0], streams[1]

        return await self._connect(
            _safe_url(url), open_streams, prefix, _http_credentials(http_client, headers)
        )

    async def connect_sse(
        self,
        url: str,
        http_client: Any | None = None,
        headers: Mapping[str, str] | None = None,
        *,
        prefix: str = "",
    ) -> list[Tool]:
        """Connect to a server over the (older) HTTP + Server-Sent Events transport.

        Args:
            url: the server's SSE endpoint, e.g. ``https://api.example.com/mcp/sse``.
            http_client: as for :meth:`connect_streamable_http`.
            headers: extra headers for every request.
            prefix: put in front of every tool name of this server.

        Returns:
            The tools of this server.

        Raises:
            MCPConnectionError: the server refused or did not answer in time.
            ConfigurationError: a tool name is already taken.
        """
        require("mcp", "mcp")
        import httpx2
        from mcp.client.sse import sse_client

        from deskwork.tools._mcp_http import mcp_http_client

        async def open_streams(stack: AsyncExitStack, conn: _Connection) -> Streams:
            def factory(
                headers: dict[str, str] | None = None,
                timeout: httpx2.Timeout | None = None,
                auth: httpx2.Auth | None = None,
            ) -> httpx2.AsyncClient:
                return mcp_http_client(http_client, headers, on_status=conn.note_http_status)

            transport: Any = sse_client(
                url, headers=dict(headers or {}), httpx_client_factory=factory
            )
            streams = await stack.enter_async_context(transport)
            return streams[0], streams[1]

        return await self._connect(
            _safe_url(url), open_streams, prefix, _http_credentials(http_client, headers)
        )

    async def _connect(
        self, label: str, opener: Opener, prefix: str, secrets: list[str]
    ) -> list[Tool]:
        conn = _Connection(label, opener, secrets)
        await conn.start(self.connect_timeout)
        try:
            tools = self._make_tools(conn, prefix)
        except BaseException:
            await conn.close()
            raise
        self._connections.append(conn)
        self._tools.update((tool.name, tool) for tool in tools)
        return tools

    # -- tools -----------------------------------------------------------------------------

    def list_tools(self) -> list[Tool]:
        """The tools of every connected server, as deskwork tools (in connection order)."""
        return list(self._tools.values())

    async def acall_tool(self, name: str, arguments: Mapping[str, Any] | None = None) -> ToolResult:
        """Call a tool by its deskwork name, through the normal execution path.

        Arguments are validated against the tool's schema and the tool's timeout applies.
        Never raises: an unknown tool, arguments that are not a JSON object, a server error,
        a lost connection or a timeout is a ``ToolResult`` with ``error`` set.
        """
        tool = self._tools.get(name) if isinstance(name, str) else None
        if tool is None:
            known = ", ".join(sorted(self._tools)) or "none"
            return ToolResult(error=f"unknown MCP tool {name!r} (connected tools: {known})")
        if not _json_object(arguments):
            return ToolResult(
                error=f"arguments for MCP tool {name!r} must be a mapping of parameter names"
                f" to values (a JSON object), not {redact_text(repr(arguments)[:200])}",
                exception_type="ToolValidationError",
            )
        call = ToolCall(id=f"mcp_{new_id()}", name=name, arguments=dict(arguments or {}))
        return await aexecute_tool(tool, call)

    def _make_tools(self, conn: _Connection, prefix: str) -> list[Tool]:
        tools: list[Tool] = []
        names = _tool_names([prefix + remote.name for remote in conn.remote_tools])
        for remote, name in zip(conn.remote_tools, names, strict=True):
            if name in self._tools:
                raise ConfigurationError(
                    f"MCP tool name {name!r} of {conn.label} is already taken (by"
                    f" {self._tools[name].metadata['mcp_server']});"
                    " connect the server again with prefix='...'"
                )
            tools.append(self._make_tool(conn, remote, name))
        return tools

    def _make_tool(self, conn: _Connection, remote: RemoteTool, name: str) -> Tool:
        remote_name = remote.name

        async def call_remote(arguments: dict[str, Any]) -> ToolResult:
            return await self._invoke(conn, remote_name, arguments)

        schema = dict(remote.input_schema or {"type": "object", "properties": {}})
        return Tool(
            name=name,
            description=remote.description or remote.title or f"MCP tool {remote_name}",
            callable=call_remote,
            input_model=_arguments_model(name, schema),
            schema=schema,
            timeout=self.timeout,
            metadata={"mcp_server": conn.label, "mcp_tool": remote_name},
        )

    async def _invoke(
        self, conn: _Connection, remote_name: str, arguments: dict[str, Any]
    ) -> ToolResult:
        if conn not in self._connections:
            return _failure(f"MCP server {conn.label} is not connected (the provider was closed)")
        try:
            return await _on_loop(conn.loop, conn.call(remote_name, arguments))
        except _LoopUnavailable:
            return _failure(
                f"MCP server {conn.label} was connected on an event loop that is not running;"
                " run the worker on the loop that connected (await desk.arun(...) inside"
                " `async with MCPToolProvider()`)"
            )

    # -- closing ---------------------------------------------------------------------------

    async def aclose(self) -> None:
        """Disconnect every server (stops subprocesses, ends HTTP sessions). Safe to call twice.

        Tools handed out earlier stay usable objects; calling them gives an error result.
        """
        connections, self._connections = self._connections, []
        self._tools = {}
        for conn in connections:
            with contextlib.suppress(_LoopUnavailable):  # its loop is gone, and the task with it
                await _on_loop(conn.loop, conn.close())


def _json_object(arguments: object) -> bool:
    """Whether ``arguments`` can be a call's arguments: ``None`` or a mapping with text keys."""
    if arguments is None:
        return True
    return isinstance(arguments, Mapping) and all(isinstance(key, str) for key in arguments)


def _tool_names(wanted: list[str]) -> list[str]:
    """Each of ``wanted`` (one server's tool names) as a model API accepts it, in order; a
    name another of them has already gets ``_2`` (``_3``, ...) at the end (a prefix cannot
    tell those two apart). Who gets which depends on the names alone, never on the order
    the server lists them in (a paused call must find the same tool after a restart): a
    name that is valid as it is keeps it, the others are served in the order of their names.
    """
    valid = [as_tool_name(name, "tool") for name in wanted]
    order = sorted(range(len(wanted)), key=lambda i: (valid[i] != wanted[i], wanted[i]))
    names: dict[int, str] = {}
    for i in order:
        name, n = valid[i], 2
        while name in names.values():
            suffix = f"_{n}"
            name, n = valid[i][: MAX_TOOL_NAME - len(suffix)] + suffix, n + 1
        names[i] = name
    return [names[i] for i in range(len(wanted))]


class _LoopUnavailable(Exception):
    """The loop that owns a connection is closed or not running."""


async def _on_loop(loop: asyncio.AbstractEventLoop, coro: Coroutine[Any, Any, T]) -> T:
    """Await ``coro`` on ``loop``: here, or forwarded to ``loop`` running in another thread.

    Cancelling the caller cancels ``coro`` too.

    Raises:
        _LoopUnavailable: ``loop`` is closed or not running.
    """
    if asyncio.get_running_loop() is loop:
        return await coro
    if loop.is_closed() or not loop.is_running():
        coro.close()
        raise _LoopUnavailable
    return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(coro, loop))


class _Connection:
    """One MCP session, owned by a task on the loop that connected it."""

    def __init__(self, label: str, opener: Opener, secrets: list[str]) -> None:
        self.label = label
        self.secrets = secrets
        """The credentials this connection was given (env, headers): masked in its errors."""
        self.loop = asyncio.get_running_loop()
        self._opener = opener
        self.session: ClientSession | None = None
        self.remote_tools: list[RemoteTool] = []
        self.error: str | None = None
        self.http_status: int | None = None
        """The last HTTP error status a server answered (HTTP transports)."""
        self._stop: asyncio.Event | None = None
        self._task: asyncio.Task[None] | None = None

    async def start(self, timeout: float) -> None:
        """Open the transport, initialize, list the tools; the session then stays open."""
        self._stop = asyncio.Event()
        ready: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._task = asyncio.create_task(self._serve(ready, timeout))
        try:
            await asyncio.shield(ready)
        except asyncio.CancelledError:
            self._task.cancel()
            raise

    async def _serve(self, ready: asyncio.Future[None], timeout: float) -> None:
        from mcp import ClientSession

        from deskwork.tools._mcp_listing import ListingDispatcher

        assert self._stop is not None
        try:
            async with AsyncExitStack() as stack:
                async with asyncio.timeout(timeout):
                    read, write = await self._opener(stack, self)
                    listing = ListingDispatcher(read, write)
                    session = await stack.enter_async_context(ClientSession(dispatcher=listing))
                    await session.initialize()
                    listing.protocol_version = session.protocol_version
                    self.remote_tools = await _list_remote_tools(session)
                self._warn_left_out(listing.left_out)
                self.session = session
                ready.set_result(None)
                await self._stop.wait()
        except BaseException as exc:  # contain server failures: this task is ours
            reason = hide_values(_describe(exc, timeout), self.secrets)
            if self.http_status is not None:
                reason = f"HTTP {self.http_status} {_status_phrase(self.http_status)} ({reason})"
            if not ready.done():
                message = f"could not connect to MCP server {self.label}: {reason}"
                ready.set_exception(MCPConnectionError(message))
            self.error = self.error or reason
            if isinstance(exc, KeyboardInterrupt | SystemExit):
                raise
        finally:
            self.session = None
            self.error = self.error or "the connection was closed"

    def _warn_left_out(self, left_out: list[tuple[str, str]]) -> None:
        for name, reason in left_out:
            message = f"MCP server {self.label}: tool {name!r} left out: {reason}"
            _log.warning("%s", hide_values(message, self.secrets))

    def note_http_status(self, status: int) -> None:
        """Remember an HTTP error status (the MCP SDK reports only a generic error)."""
        self.http_status = status

    async def call(self, name: str, arguments: dict[str, Any]) -> ToolResult:
        """Call a tool of this server; every failure becomes an error result."""
        session = self.session
        if session is None:
            return _failure(f"MCP server {self.label} is not connected: {self.error}")
        try:
            result = await session.call_tool(name, arguments)
        except Exception as exc:
            if _connection_lost(exc) or self.session is None:
                message = (
                    f"MCP server {self.label} went away during the call to {name!r}"
                    f" (it exited or the connection dropped): {_describe(exc)}"
                )
            else:
                message = f"MCP tool {name!r} on {self.label} failed: {_describe(exc)}"
            return _failure(hide_values(message, self.secrets), exc)
        return _tool_result(name, result, self.secrets)

    async def close(self) -> None:
        """End the session and wait for the transport to shut down."""
        if self._stop is not None:
            self._stop.set()
        if self._task is not None:
            await self._task


def _connection_lost(exc: Exception) -> bool:
    """Whether ``exc`` is the SDK's error for a request whose connection closed or dropped,
    not an error the server answered with (which may have the same code)."""
    if getattr(exc, "code", None) != _CONNECTION_CLOSED or getattr(exc, "data", None) is not None:
        return False
    return str(getattr(exc, "message", "")).startswith(_LOST_MESSAGES)


async def _list_remote_tools(session: ClientSession) -> list[RemoteTool]:
    from mcp_types import PaginatedRequestParams

    tools: list[RemoteTool] = []
    cursor: str | None = None
    for _ in range(_MAX_TOOL_PAGES):
        params = PaginatedRequestParams(cursor=cursor) if cursor else None
        page = await session.list_tools(params=params)
        tools.extend(page.tools)
        cursor = page.next_cursor
        if not cursor:
            break
    return tools


def _arguments_model(name: str, schema: dict[str, Any]) -> type[BaseModel]:
    """An input model that checks arguments against ``schema`` and keeps them all."""
    check = _schema_checker(schema)

    class Arguments(BaseModel):
        model_config = ConfigDict(extra="forbid")

        arguments: dict[str, Any] = Field(default_factory=dict)

        @model_validator(mode="before")
        @classmethod
        def _collect(cls, data: Any) -> Any:
            if not isinstance(data, dict):
                raise ValueError("arguments must be a JSON object")
            problems = check(data)
            if problems:
                raise ValueError("; ".join(problems))
            return {"arguments": data}

    Arguments.__name__ = Arguments.__qualname__ = f"MCP_{name}_Input"
    return Arguments


def _schema_checker(schema: dict[str, Any]) -> Callable[[dict[str, Any]], list[str]]:
    """A JSON Schema check (at most 5 messages); a no-op when the schema itself is invalid.

    The schema is the server's, so the check trusts nothing in it: it runs none of its regular
    expressions (one taking exponential time would block the event loop, where no timeout can
    stop it), fetches nothing a ``$ref`` names, and leaves what it cannot follow (a ``$ref``
    to itself, an unknown one) to the server, which checks its own arguments anyway.
    """
    jsonschema = require("jsonschema", "mcp")
    from referencing import Registry  # jsonschema's own dependency

    try:
        validator_class = _without_regex(jsonschema.validators.validator_for(schema), schema)
        validator_class.check_schema(schema)
        validator = validator_class(schema, registry=Registry())  # an empty one: no fetching
    except Exception:
        return lambda data: []

    def check(data: dict[str, Any]) -> list[str]:
        try:
            errors = sorted(validator.iter_errors(data), key=lambda e: list(e.absolute_path))
        except Exception:  # RecursionError, an unresolvable $ref: the server decides
            return []
        return [
            f"{'.'.join(str(p) for p in error.absolute_path) or '<root>'}: {error.message}"
            for error in errors[:5]
        ]

    return check


def _without_regex(validator_class: Any, schema: dict[str, Any]) -> Any:
    """``validator_class`` without the keywords that match regular expressions of the schema
    against the arguments (``additionalProperties`` and ``unevaluatedProperties`` do when the
    schema has ``patternProperties``)."""
    import json

    from jsonschema.validators import extend

    skipped = ["pattern", "patternProperties"]
    if "patternProperties" in json.dumps(schema, default=str):
        skipped += ["additionalProperties", "unevaluatedProperties"]
    return extend(validator_class, dict.fromkeys(skipped, _no_errors))


def _no_errors(*_: Any) -> None:
    """A keyword that is not checked."""


def _tool_result(name: str, result: CallToolResult, secrets: list[str]) -> ToolResult:
    texts: list[str] = []
    extra: list[dict[str, Any]] = []
    for block in result.content:
        text, is_text = _block_text(block)
        texts.append(text)
        if not is_text:
            extra.append(block.model_dump(mode="json", by_alias=True, exclude_none=True))
    content = "\n".join(texts)
    if result.is_error:
        error = hide_values(content, secrets) or f"MCP tool {name!r} reported an error"
        return ToolResult(error=redact_text(error))
    data: Any = result.structured_content
    if data is None and extra:
        data = {"content": extra}
    return ToolResult(content=content, data=data)


def _block_text(block: Any) -> tuple[str, bool]:
    """The text of a content block, or a short placeholder; and whether it was text."""
    kind = getattr(block, "type", "")
    if kind == "text":
        return str(block.text), True
    if kind in ("image", "audio"):
        size = len(block.data) * 3 // 4
        return f"[{kind} {block.mime_type}, about {size} bytes]", False
    if kind == "resource_link":
        return f"[resource {block.uri}]", False
    if kind == "resource":
        text = getattr(block.resource, "text", None)
        if text is not None:
            return str(text), True
        return f"[resource {block.resource.uri}]", False
    return f"[{kind or 'unknown'} content]", False


def _failure(message: str, exc: BaseException | None = None) -> ToolResult:
    return ToolResult(
        error=redact_text(message),
        exception_type=type(exc).__name__ if exc is not None else "MCPConnectionError",
        original_exception=exc,
    )


def _describe(exc: BaseException, timeout: float | None = None) -> str:
    """A one-line reason for ``exc`` (exception groups unwrapped, secrets redacted)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        inner = [e for e in exc.exceptions if not isinstance(e, asyncio.CancelledError)]
        exc = (inner or list(exc.exceptions))[0]
    if isinstance(exc, TimeoutError) and timeout is not None:
        return f"no answer within {timeout}s"
    detail = getattr(exc, "message", None) if hasattr(exc, "error") else None
    text = str(detail or exc).strip().splitlines()
    first = text[0] if text else ""
    return redact_text(f"{type(exc).__name__}: {first}" if first else type(exc).__name__)


def _status_phrase(status: int) -> str:
    from http import HTTPStatus

    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return ""


def _http_credentials(http_client: Any, headers: Mapping[str, str] | None) -> list[str]:
    """The credentials of an HTTP connection: its secret-named headers, the user client's too."""
    own = getattr(http_client, "headers", None)
    given = {**(dict(own) if isinstance(own, Mapping) else {}), **dict(headers or {})}
    return known_credentials(headers=given)


def _safe_url(url: str) -> str:
    """``url`` without user info, query or fragment (they may hold credentials)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.port is not None:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path, "", ""))
