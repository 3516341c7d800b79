"""``generate_image``: the tool's own api_key never reaches its error, and replies that do not
hold the documented shapes are "no image", not a TypeError from inside the parser."""

from __future__ import annotations

from typing import Any

import pytest

from deskwork.core.tool_call import ToolCall, ToolResult
from deskwork.tools.execution import aexecute_tool
from deskwork.tools.images import make_generate_image_tool

KEY = "team-proxy-key-0042"  # no provider prefix: the generic redaction cannot know it


class _FakeLiteLLM:
    def __init__(self, image: Any, chat: Any) -> None:
        self.image, self.chat = image, chat

    async def aimage_generation(self, **options: Any) -> Any:
        if isinstance(self.image, Exception):
            raise self.image
        return self.image

    async def acompletion(self, **options: Any) -> Any:
        if isinstance(self.chat, Exception):
            raise self.chat
        return self.chat


async def _generate(monkeypatch: pytest.MonkeyPatch, image: Any, chat: Any) -> ToolResult:
    fake = _FakeLiteLLM(image, chat)
    monkeypatch.setattr("deskwork.adapters.litellm.import_litellm", lambda: fake)
    tool = make_generate_image_tool(api_key=KEY)
    return await aexecute_tool(tool, ToolCall(id="c", name=tool.name, arguments={"prompt": "a"}))


@pytest.mark.parametrize(
    ("image", "chat"),
    [
        (RuntimeError(f"401: key {KEY} is not valid"), RuntimeError(f"401 for {KEY}")),
        (RuntimeError(f"401: key {KEY} is not valid"), {"choices": []}),
    ],
)
async def test_a_provider_error_echoing_the_key_is_redacted(
    monkeypatch: pytest.MonkeyPatch, image: Any, chat: Any
) -> None:
    result = await _generate(monkeypatch, image, chat)
    assert result.error is not None and "image generation failed" in result.error
    assert KEY not in result.error and "<redacted>" in result.error
    assert KEY not in result.model_dump_json()


async def test_a_provider_key_from_the_environment_is_redacted_too(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    env_key = "0123456789abcdef0123456789abcdef"  # an Azure key's shape: no pattern knows it
    monkeypatch.setenv("AZURE_API_KEY", env_key)
    fake = _FakeLiteLLM(RuntimeError(f"401: key {env_key}"), RuntimeError(f"401 for {env_key}"))
    monkeypatch.setattr("deskwork.adapters.litellm.import_litellm", lambda: fake)
    tool = make_generate_image_tool()  # no api_key: LiteLLM reads the environment's
    call = ToolCall(id="c", name=tool.name, arguments={"prompt": "a"})
    result = await aexecute_tool(tool, call)
    assert result.error == (
        "RuntimeError: image generation failed: RuntimeError: 401 for <redacted>"
        " (the image endpoint failed first: RuntimeError: 401: key <redacted>)"
    )
    assert env_key not in result.model_dump_json()


@pytest.mark.parametrize(
    ("image", "chat"),
    [
        ({"data": 5}, {"choices": {"first": 1}}),
        ({"data": [{"b64_json": 12345, "url": {"href": "x"}}]}, {"choices": [None]}),
        ({"data": []}, {"choices": [{"message": {"images": "data:image/png;base64,AA"}}]}),
    ],
)
async def test_a_reply_in_another_shape_is_no_image(
    monkeypatch: pytest.MonkeyPatch, image: Any, chat: Any
) -> None:
    result = await _generate(monkeypatch, image, chat)
    assert (
        result.error == "RuntimeError: image generation failed: the model answered without an image"
    )
    assert result.data is None


async def test_a_well_formed_reply_still_gives_its_image(monkeypatch: pytest.MonkeyPatch) -> None:
    result = await _generate(monkeypatch, {"data": [{"url": "https://img/1.png"}]}, None)
    assert result.error is None and result.data == {
        "url": "https://img/1.png",
        "b64_json": None,
        "revised_prompt": None,
    }


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"timeout": "5"}, "got '5'"),  # the error showed the doubled value: '55'
        ({"timeout": -1}, "got -1$"),  # ... and -2
        ({"default_model": 5}, "default_model must be a model name, not 5"),
        ({"api_key": 12345}, "api_key must be text, not int"),
    ],
)
def test_options_no_call_could_use_are_refused_as_given(
    options: dict[str, Any], message: str
) -> None:
    from deskwork.exceptions import ConfigurationError

    with pytest.raises(ConfigurationError, match=message) as caught:
        make_generate_image_tool(**options)
    assert "12345" not in str(caught.value)  # a key is not echoed, even a wrong one
