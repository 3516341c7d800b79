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
  out: model APIs take only object parameters, and ``tools/call`` sends only an object; so
  is one with no ``type`` whose ``anyOf``, ``oneOf``, ``allOf`` or local ``$ref`` admits no
  object (``{"anyOf": [{"type": "string"}, {"type": "integer"}]}``): as an object schema
  no arguments could satisfy it;
- so is a tool the SDK's model of the negotiated protocol version refuses (no name, ...).

Each tool left out is noted with the reason in :attr:`ListingDispatcher.left_out`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from typing import Any

from mcp.shared.jsonrpc_dispatcher import JSONRPCDispatcher
from mcp_types import ListToolsResult
from mcp_types.methods import validate_server_result
from pydantic import ValidationError

__all__ = ["ListingDispatcher"]

_EMPTY_OBJECT: dict[str, Any] = {"type": "object", "properties": {}}
_MAX_DEPTH = 32  # of anyOf/oneOf/allOf and $ref followed (a $ref may point at itself)
_COMBINATIONS = ("anyOf", "oneOf", "allOf", "$ref")


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
        self, method: str, params: Mapping[str, Any] | None, *args: Any, **kwargs: Any
    ) -> dict[str, Any]:
        # the rest as the SDK takes it (its options and private keywords change between
        # releases): only the answer is ours
        raw = await super().send_raw_request(method, params, *args, **kwargs)
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
            return (
                f"its input schema's root is {_root(schema)}, not an object"
                " (model APIs take only object parameters)"
            )
        try:
            _validate(tool, self.protocol_version)
        except ValidationError as exc:
            return _first_error(exc)
        return None


def with_object_schema(tool: dict[str, Any]) -> dict[str, Any]:
    """``tool`` with an object input schema when it has none, ``null``, or one without a
    ``type`` at its root that admits an object; other tools unchanged."""
    schema = tool.get("inputSchema")
    if schema is None:
        return {**tool, "inputSchema": dict(_EMPTY_OBJECT)}
    if isinstance(schema, dict) and "type" not in schema and _admits_object(schema, schema):
        return {**tool, "inputSchema": {**_EMPTY_OBJECT, **schema}}
    return tool


def _admits_object(schema: Any, root: dict[str, Any], depth: int = 0) -> bool:
    """Whether ``schema`` (``root``, an input schema, or a part of it) may accept a JSON
    object, by its ``type``, ``anyOf``/``oneOf`` (one branch), ``allOf`` (every one) and a
    ``$ref`` into ``root``; what cannot be told (a remote ``$ref``) may."""
    if isinstance(schema, bool):
        return schema
    if not isinstance(schema, dict) or depth > _MAX_DEPTH:
        return True
    kind = schema.get("type", "object")
    if kind != "object" and not (isinstance(kind, list) and "object" in kind):
        return False
    admits = [_admits_object(part, root, depth + 1) for part in _parts(schema, "anyOf")]
    if admits and not any(admits):
        return False
    admits = [_admits_object(part, root, depth + 1) for part in _parts(schema, "oneOf")]
    if admits and not any(admits):
        return False
    if not all(_admits_object(part, root, depth + 1) for part in _parts(schema, "allOf")):
        return False
    return _admits_object(_target(schema.get("$ref"), root), root, depth + 1)


def _parts(schema: dict[str, Any], keyword: str) -> list[Any]:
    parts = schema.get(keyword)
    return parts if isinstance(parts, list) else []


def _target(ref: Any, root: dict[str, Any]) -> Any:
    """The part of ``root`` a local ``$ref`` (``#/$defs/Args``) names; ``None`` for any
    other (or none)."""
    if not isinstance(ref, str) or not ref.startswith("#"):
        return None
    part: Any = root
    for step in filter(None, ref[1:].split("/")):
        key = step.replace("~1", "/").replace("~0", "~")
        part = part.get(key) if isinstance(part, dict) else None
    return part


def _root(schema: Any) -> str:
    """How a message names an input schema's root that is not an object."""
    if not isinstance(schema, dict):
        return repr(type(schema).__name__)
    if "type" in schema:
        return repr(schema["type"])
    return "/".join(k for k in _COMBINATIONS if k in schema) + " of non-objects"


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
