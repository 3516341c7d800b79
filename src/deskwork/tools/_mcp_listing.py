"""Listing an MCP server's tools one at a time (private to :mod:`deskwork.tools.mcp`).

The MCP SDK 2.x validates a ``tools/list`` answer as a whole: one tool it does not accept
(an ``inputSchema`` that is ``null``, or whose root is not an object schema) and it refuses
the listing, so none of that server's tools could be used. :class:`ListingDispatcher` is
the session's JSON-RPC dispatcher; it sees each raw ``tools/list`` answer before the SDK
validates it, and passes on a listing where each tool was checked on its own:

- an input schema that is missing, ``null`` or has no ``type`` at its root is taken as an
  object schema (``{"type": "object", "properties": {}}`` plus what it declares): tool
  arguments are a JSON object anyway;
- a tool whose input schema has another root (``{"type": "string"}``, an array, ...) is left
  out: model APIs take only object parameters, and ``tools/call`` sends only an object;
- so is a tool the SDK's model of the negotiated protocol version refuses (no name, ...).

Each tool left out is noted with the reason in :attr:`ListingDispatcher.left_out`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from typing import Any

from mcp.shared.dispatcher import CallOptions
from mcp.shared.jsonrpc_dispatcher import JSONRPCDispatcher
from mcp_types import ListToolsResult, RequestId
from mcp_types.methods import validate_server_result
from pydantic import ValidationError

__all__ = ["ListingDispatcher"]

_EMPTY_OBJECT: dict[str, Any] = {"type": "object", "properties": {}}


class ListingDispatcher(JSONRPCDispatcher[Any]):
    """A JSON-RPC dispatcher that checks a ``tools/list`` answer tool by tool."""

    protocol_version: str | None = None
    """The negotiated protocol version (set after ``initialize``): the tools are checked
    against its model."""

    def __init__(self, read_stream: Any, write_stream: Any) -> None:
        super().__init__(read_stream, write_stream)
        self.left_out: list[tuple[str, str]] = []
        """``(tool name, reason)`` of each listed tool that was left out."""

    async def send_raw_request(
        self,
        method: str,
        params: Mapping[str, Any] | None,
        opts: CallOptions | None = None,
        *,
        _related_request_id: RequestId | None = None,
    ) -> dict[str, Any]:
        raw = await super().send_raw_request(
            method, params, opts, _related_request_id=_related_request_id
        )
        if method == "tools/list" and isinstance(raw.get("tools"), list):
            raw = {**raw, "tools": self._usable(raw["tools"])}
        return raw

    def _usable(self, listed: list[Any]) -> list[dict[str, Any]]:
        kept: list[dict[str, Any]] = []
        for tool in listed:
            fixed = with_object_schema(tool) if isinstance(tool, dict) else tool
            problem = self._problem(fixed)
            if problem is None:
                kept.append(fixed)
            else:
                name = tool.get("name") if isinstance(tool, dict) else None
                self.left_out.append((str(name) if name is not None else "<no name>", problem))
        return kept

    def _problem(self, tool: Any) -> str | None:
        """Why ``tool`` cannot be used, or ``None``."""
        if not isinstance(tool, dict):
            return f"it is not a JSON object but {type(tool).__name__}"
        schema = tool.get("inputSchema")
        if not isinstance(schema, dict) or schema.get("type") != "object":
            root = schema.get("type") if isinstance(schema, dict) else type(schema).__name__
            return (
                f"its input schema's root is {root!r}, not an object"
                " (model APIs take only object parameters)"
            )
        try:
            _validate(tool, self.protocol_version)
        except ValidationError as exc:
            return _first_error(exc)
        return None


def with_object_schema(tool: dict[str, Any]) -> dict[str, Any]:
    """``tool`` with an object input schema when it has none, ``null``, or one without a
    ``type`` at its root; other tools unchanged."""
    schema = tool.get("inputSchema")
    if schema is None:
        return {**tool, "inputSchema": dict(_EMPTY_OBJECT)}
    if isinstance(schema, dict) and "type" not in schema:
        return {**tool, "inputSchema": {**_EMPTY_OBJECT, **schema}}
    return tool


def _validate(tool: dict[str, Any], version: str | None) -> None:
    """Validate a listing of ``tool`` alone as the SDK validates a listing.

    Raises:
        ValidationError: the SDK would refuse it.
    """
    listing = {"tools": [tool]}
    if version is not None:
        with contextlib.suppress(KeyError):  # no model of this version: the SDK checks none
            validate_server_result("tools/list", version, listing)
    ListToolsResult.model_validate(listing, by_name=False)


def _first_error(exc: ValidationError) -> str:
    errors = exc.errors()
    if not errors:
        return str(exc)
    where = ".".join(str(part) for part in errors[0]["loc"][2:]) or "the tool"
    return f"{where}: {errors[0]['msg']}"
