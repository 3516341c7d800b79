"""The dispatcher that lists an MCP server's tools one by one hands every request on to the
SDK's own dispatcher as the SDK takes it: an SDK release that adds, renames or drops one of
its (private) keywords must not break every MCP connection with a TypeError."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest
from mcp.shared.jsonrpc_dispatcher import JSONRPCDispatcher

from deskwork.tools._mcp_listing import ListingDispatcher

LISTING = {"tools": [{"name": "t", "inputSchema": {"type": "string"}}]}


async def test_a_request_reaches_an_sdk_without_the_private_keyword(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    async def send(
        self: Any, method: str, params: Mapping[str, Any] | None, opts: Any = None
    ) -> Any:
        return dict(LISTING)

    monkeypatch.setattr(JSONRPCDispatcher, "send_raw_request", send)
    listing = ListingDispatcher(None, None)
    assert await listing.send_raw_request("tools/list", None) == {"tools": []}
    assert listing.left_out[0][0] == "t"  # the answer is still checked tool by tool


async def test_an_sdk_keyword_is_handed_on(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[dict[str, Any]] = []

    async def send(self: Any, method: str, params: Any, opts: Any = None, **keywords: Any) -> Any:
        seen.append(keywords)
        return {"ok": True}

    monkeypatch.setattr(JSONRPCDispatcher, "send_raw_request", send)
    listing = ListingDispatcher(None, None)
    answer = await listing.send_raw_request("ping", None, None, _request_context="ctx")
    assert (answer, seen) == ({"ok": True}, [{"_request_context": "ctx"}])
