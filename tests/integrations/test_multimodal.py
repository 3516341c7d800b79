"""Multimodal input (``encode_file``, content lists) and the ``generate_image`` tool.

The HTTP tests run the real LiteLLM path against the local OpenAI-compatible server.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import deskwork
from deskwork import Desk, Job, Worker, encode_file
from deskwork.adapters.litellm import LiteLLMAdapter
from deskwork.core.tool_call import ToolCall
from deskwork.store import InMemoryRunStore
from deskwork.testing import OpenAICompatServer, ServerReply
from deskwork.tools import Tool, execute_tool
from deskwork.tools.images import DEFAULT_IMAGE_MODEL, make_generate_image_tool

MODEL = "openai/test-model"
KEY = "sk-test-multimodal-0123456789"
TINY_PNG = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA"
    "60e6kgAAAABJRU5ErkJggg=="
)


@pytest.fixture
def server() -> Iterator[OpenAICompatServer]:
    with OpenAICompatServer() as running:
        yield running


def _desk(server: OpenAICompatServer) -> Desk:
    adapter = LiteLLMAdapter(api_base=server.base_url, api_key=KEY)
    return Desk(model=MODEL, adapter=adapter, run_store=InMemoryRunStore())


# --------------------------------------------------------------------------- encode_file


@pytest.mark.parametrize(
    ("name", "mime"),
    [
        ("notes.md", "text/markdown"),
        ("table.csv", "text/csv"),
        ("report.docx", "application/vnd.openxmlformats-officedocument.wordprocessingml.document"),
        ("sheet.xlsx", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"),
        ("voice.mp3", "audio/mpeg"),
        ("photo.JPG", "image/jpeg"),
        ("image.png", "image/png"),
        ("paper.pdf", "application/pdf"),
        ("clip.mp4", "video/mp4"),
        ("page.html", "text/html"),
        ("blob.unknownext", "application/octet-stream"),
    ],
)
def test_encode_file_detects_mime_types(tmp_path: Path, name: str, mime: str) -> None:
    path = tmp_path / name
    path.write_bytes(b"\x00\x01payload\xff")
    url = encode_file(path)
    header, data = url.split(",", 1)
    assert header == f"data:{mime};base64"
    assert base64.b64decode(data) == b"\x00\x01payload\xff"
    assert encode_file(str(path)) == url  # str paths too


def test_encode_file_explicit_mime_and_missing_files(tmp_path: Path) -> None:
    path = tmp_path / "file.bin"
    path.write_bytes(b"abc")
    assert encode_file(path, mime_type="image/webp") == "data:image/webp;base64,YWJj"
    with pytest.raises(FileNotFoundError, match=r"missing\.png"):
        encode_file(tmp_path / "missing.png")
    with pytest.raises(FileNotFoundError):
        encode_file(tmp_path)  # a directory is not a file


# --------------------------------------------------------------------------- content lists


def test_multimodal_content_reaches_the_provider_unchanged(
    server: OpenAICompatServer, tmp_path: Path
) -> None:
    image = tmp_path / "photo.png"
    image.write_bytes(base64.b64decode(TINY_PNG))
    pdf = tmp_path / "contract.pdf"
    pdf.write_bytes(b"%PDF-1.4 tiny")
    parts: list[dict[str, Any]] = [
        {"type": "text", "text": "Compare the image and the contract"},
        {"type": "image_url", "image_url": {"url": encode_file(image)}},
        {"type": "image_url", "image_url": {"url": "https://example.com/after.jpg"}},
        {"type": "file", "file": {"file_data": encode_file(pdf), "filename": "contract.pdf"}},
    ]
    sent = json.loads(json.dumps(parts))
    server.enqueue(ServerReply.text("Both show a blue pixel."))
    report = _desk(server).run(Worker(name="VisionAnalyst"), Job(input=parts))
    assert report.status == "completed", report.errors
    assert report.content == "Both show a blue pixel."
    messages = server.requests[0].body["messages"]
    assert messages[-1] == {"role": "user", "content": sent}
    assert parts == sent  # the job's own list was not modified either


# --------------------------------------------------------------------------- generate_image


def test_default_generate_image_tool_is_exported_lazily() -> None:
    tool = deskwork.generate_image
    assert isinstance(tool, Tool) and tool.name == "generate_image"
    properties = tool.schema["properties"]
    assert tool.schema["required"] == ["prompt"]
    assert properties["model"]["default"] == DEFAULT_IMAGE_MODEL
    assert properties["size"]["default"] == "1024x1024"
    assert properties["quality"]["default"] == "standard"


def _generate(tool: Tool, **arguments: Any) -> Any:
    # sync, so LiteLLM runs on deskwork's own loop, like desk.run (LiteLLM's logging worker
    # is bound to one event loop per process)
    return execute_tool(tool, ToolCall(id="c1", name=tool.name, arguments=arguments))


def test_generate_image_through_the_image_endpoint(server: OpenAICompatServer) -> None:
    tool = make_generate_image_tool(api_base=server.base_url, api_key=KEY)
    result = _generate(
        tool, prompt="a sunset over mountains", model="openai/dall-e-3", quality="hd"
    )
    assert result.error is None, result.error
    assert result.data == {
        "url": None,
        "b64_json": TINY_PNG,
        "revised_prompt": "a sunset over mountains",
    }
    assert json.loads(result.content) == result.data  # small: the model sees it all
    (request,) = server.requests
    assert request.path == "/v1/images/generations"
    body = request.body
    assert (body["prompt"], body["model"], body["size"], body["quality"]) == (
        "a sunset over mountains",
        "dall-e-3",
        "1024x1024",
        "hd",
    )


def test_generate_image_falls_back_to_chat_completions() -> None:
    big_image = base64.b64encode(bytes(range(256)) * 40).decode()
    data_url = f"data:image/png;base64,{big_image}"
    with OpenAICompatServer(generate_images=False) as server:
        server.enqueue(ServerReply.image(data_url, content="Here is your sunset."))
        tool = make_generate_image_tool(
            api_base=server.base_url, api_key=KEY, default_model="openai/image-chat"
        )
        result = _generate(tool, prompt="a sunset", size="512x512")
        paths = [r.path for r in server.requests]
        chat = server.requests[1].body
    assert result.error is None, result.error
    assert result.data == {"url": data_url, "b64_json": big_image, "revised_prompt": None}
    assert paths == ["/v1/images/generations", "/v1/chat/completions"]
    assert chat["modalities"] == ["image", "text"]
    assert chat["messages"] == [{"role": "user", "content": "a sunset"}]
    assert chat["model"] == "image-chat"
    shown = json.loads(result.content)  # what the model reads: no megabytes of base64
    assert big_image not in result.content and "omitted" in shown["b64_json"]


def test_generate_image_without_any_image_is_a_tool_error() -> None:
    with OpenAICompatServer(generate_images=False) as server:
        server.enqueue(ServerReply.text("I cannot draw."))
        tool = make_generate_image_tool(api_base=server.base_url, api_key=KEY)
        result = _generate(tool, prompt="a sunset", model="openai/image-chat")
    assert result.data is None
    assert result.error is not None
    assert "image generation failed: the model answered without an image" in result.error
    assert KEY not in result.error


def test_worker_generates_an_image_end_to_end(server: OpenAICompatServer) -> None:
    server.enqueue(
        ServerReply.tool_calls([("generate_image", {"prompt": "a red cube"})]),
        ServerReply.text("Here is your red cube."),
    )
    tool = make_generate_image_tool(
        api_base=server.base_url, api_key=KEY, default_model="openai/gpt-image-1"
    )
    report = _desk(server).run(Worker(name="Artist", tools=[tool]), Job(input="draw a cube"))
    assert report.status == "completed", report.errors
    assert report.content == "Here is your red cube."
    (call,) = report.tool_calls
    assert call.result is not None and call.result.data["b64_json"] == TINY_PNG
    paths = [r.path for r in server.requests]
    assert paths == ["/v1/chat/completions", "/v1/images/generations", "/v1/chat/completions"]
    tool_message = server.requests[2].body["messages"][-1]
    assert tool_message["role"] == "tool" and TINY_PNG in tool_message["content"]
