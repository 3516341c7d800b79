"""``generate_image`` gives each LiteLLM call the adapter's default request timeout (600 s; the
tool's own is twice that), so a stalled image provider no longer holds a run for LiteLLM's
6000 s per call; ``timeout=None`` keeps LiteLLM's."""

from __future__ import annotations

from typing import Any

import pytest

from deskwork.adapters.litellm import DEFAULT_REQUEST_TIMEOUT
from deskwork.core.tool_call import ToolCall
from deskwork.tools.execution import aexecute_tool
from deskwork.tools.images import generate_image, make_generate_image_tool


class _NoImage:
    """LiteLLM whose two endpoints answer without an image: both calls are made."""

    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []

    async def aimage_generation(self, **options: Any) -> Any:
        self.calls.append(options)
        return {"data": []}

    async def acompletion(self, **options: Any) -> Any:
        self.calls.append(options)
        return {"choices": []}


@pytest.mark.parametrize(
    ("given", "sent", "tool_timeout"),
    [
        ({}, DEFAULT_REQUEST_TIMEOUT, 1200),
        ({"timeout": 30}, 30, 60),
        ({"timeout": None}, None, None),
    ],
    ids=["default", "given", "none"],
)
async def test_each_call_carries_the_request_timeout(
    monkeypatch: pytest.MonkeyPatch, given: Any, sent: Any, tool_timeout: Any
) -> None:
    fake = _NoImage()
    monkeypatch.setattr("deskwork.adapters.litellm.import_litellm", lambda: fake)
    tool = make_generate_image_tool(**given)
    result = await aexecute_tool(tool, ToolCall(id="c", name=tool.name, arguments={"prompt": "a"}))
    assert result.error is not None  # no image: the test is what the two calls were given
    assert [call.get("timeout") for call in fake.calls] == [sent, sent]
    assert tool.timeout == tool_timeout


def test_the_shipped_tool_has_the_default_timeout() -> None:
    assert generate_image.timeout == 2 * DEFAULT_REQUEST_TIMEOUT
