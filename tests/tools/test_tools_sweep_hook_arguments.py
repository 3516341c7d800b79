"""A pre-hook that adds to a call's arguments (a credential) changes what the tool gets, not
the history the model is sent again."""

from __future__ import annotations

import json
from pathlib import Path

from deskwork import Desk, Job, ToolCall, Worker
from deskwork.testing import ScriptedAdapter, call_tool, reply
from deskwork.tools import tool

CREDENTIAL = "sk-proj-ABCDEF1234567890abcdefghijklmnopqrstuvwx"


def add_credential(call: ToolCall) -> None:
    call.arguments["credential"] = CREDENTIAL


@tool(pre=(add_credential,))
def fetch(url: str, credential: str = "") -> str:
    """Fetch a URL with the credential a hook adds."""
    return f"fetched {url} ({'signed' if credential == CREDENTIAL else 'unsigned'})"


def test_what_a_pre_hook_adds_reaches_the_tool_but_not_the_model(tmp_path: Path) -> None:
    adapter = ScriptedAdapter([call_tool("fetch", url="https://example.com"), reply("done")])
    desk = Desk(model="scripted/m", adapter=adapter, storage_dir=tmp_path)

    report = desk.run(Worker(name="w", tools=[fetch]), Job(input="fetch it"))

    call = report.tool_calls[0]
    assert call.result is not None and call.result.content == "fetched https://example.com (signed)"
    assert call.arguments == {"url": "https://example.com"}  # the call the model made
    assert CREDENTIAL not in json.dumps(adapter.calls[1]["messages"], default=str)
    desk.close()
