"""The ``generate_image`` tool: text to image through LiteLLM.

::

    from deskwork import Desk, Job, Worker, generate_image

    worker = Worker(name="Assistant", tools=[generate_image])

The tool first calls the image endpoint (``litellm.aimage_generation``). When that returns no
image, or fails, it asks the chat endpoint instead (``litellm.acompletion(...,
modalities=["image", "text"])``), which is how OpenRouter and Gemini image models answer.

Its result is a dict ``{"url", "b64_json", "revised_prompt"}``, in ``ToolResult.data``. What
the *model* reads is the same dict as JSON with very long strings (base64 images run to
megabytes) replaced by a short note, so an image never floods the context window.

``generate_image`` uses the provider settings of the environment (``OPENROUTER_API_KEY``,
``OPENAI_API_KEY``, ...); :func:`make_generate_image_tool` builds one with its own endpoint,
key or default model.
"""

from __future__ import annotations

import json
import os
from typing import Any

from deskwork.adapters.litellm import DEFAULT_REQUEST_TIMEOUT
from deskwork.core.redact import describe_exception, hide_values, known_credentials, redact_text
from deskwork.core.tool_call import ToolResult
from deskwork.exceptions import ConfigurationError
from deskwork.tools.base import Tool, tool
from deskwork.utils import check_seconds

__all__ = ["DEFAULT_IMAGE_MODEL", "generate_image", "make_generate_image_tool"]

DEFAULT_IMAGE_MODEL = "openrouter/google/gemini-3-pro-image-preview"
_INLINE_LIMIT = 2000
_DESCRIPTION = (
    "Generate an image from a text description. Returns url, b64_json (base64 image data"
    " when the provider returns it) and revised_prompt."
)


def make_generate_image_tool(
    *,
    api_base: str | None = None,
    api_key: str | None = None,
    default_model: str = DEFAULT_IMAGE_MODEL,
    timeout: float | None = DEFAULT_REQUEST_TIMEOUT,
    name: str = "generate_image",
) -> Tool:
    """Build a ``generate_image`` tool.

    Args:
        api_base: endpoint for both calls (a proxy or an OpenAI-compatible server).
        api_key: key for both calls; otherwise LiteLLM reads the provider's variable. Neither
            is ever part of results, errors or events.
        default_model: the model used when the model does not choose one.
        timeout: request timeout in seconds for each call (also the tool's timeout, doubled,
            since the tool may make two calls): :data:`DEFAULT_REQUEST_TIMEOUT`, 600, as a
            ``LiteLLMAdapter``'s, unless given; ``None``: LiteLLM's own, and no tool timeout.
        name: the tool's name.

    Returns:
        A tool with parameters ``prompt`` (required), ``model``, ``size`` and ``quality``.

    Raises:
        ConfigurationError: ``timeout`` is not a number of seconds above 0, ``default_model``
            is not a model name, or ``api_base``/``api_key`` is not text.
    """
    check_seconds(timeout, "timeout")  # before it is doubled: the error shows the value given
    if not isinstance(default_model, str) or not default_model:
        raise ConfigurationError(f"default_model must be a model name, not {default_model!r}")
    for label, value in (("api_base", api_base), ("api_key", api_key)):
        if value is not None and not isinstance(value, str):
            raise ConfigurationError(f"{label} must be text, not {type(value).__name__}")
    connection = {"api_base": api_base, "api_key": api_key, "timeout": timeout}

    async def generate(
        prompt: str,
        model: str = default_model,
        size: str = "1024x1024",
        quality: str = "standard",
    ) -> ToolResult:
        image = await _generate(prompt, model, size, quality, connection)
        return ToolResult(content=_for_model(image), data=image)

    return tool(
        name=name,
        description=_DESCRIPTION,
        timeout=None if timeout is None else 2 * timeout,
    )(generate)


async def _generate(
    prompt: str, model: str, size: str, quality: str, connection: dict[str, Any]
) -> dict[str, str | None]:
    from deskwork.adapters.litellm import _adopt_logging_task, import_litellm

    litellm = import_litellm()
    _adopt_logging_task()  # LiteLLM is called here directly, as the adapter calls it
    options = {key: value for key, value in connection.items() if value is not None}
    endpoint_error: str | None = None
    try:
        response = await litellm.aimage_generation(
            prompt=prompt, model=model, size=size, quality=quality, drop_params=True, **options
        )
    except Exception as exc:
        endpoint_error = describe_exception(exc)
    else:
        image = _from_image_response(response)
        if image is not None:
            return image
    try:
        reply = await litellm.acompletion(
            model=model,
            messages=[{"role": "user", "content": prompt}],
            modalities=["image", "text"],
            **options,
        )
    except Exception as exc:
        error = describe_exception(exc)
        raise _failure(error, endpoint_error, connection.get("api_key")) from None
    image = _from_chat_response(reply)
    if image is None:
        raise _failure(
            "the model answered without an image", endpoint_error, connection.get("api_key")
        )
    return image


def _from_image_response(response: Any) -> dict[str, str | None] | None:
    """The first image of an image-endpoint response, or ``None`` when it has no image."""
    for item in _items(_get(response, "data")):
        url, b64 = _text(_get(item, "url")), _text(_get(item, "b64_json"))
        if url or b64:
            revised = _text(_get(item, "revised_prompt"))
            return {"url": url, "b64_json": b64, "revised_prompt": revised}
    return None


def _from_chat_response(response: Any) -> dict[str, str | None] | None:
    """The first image of a chat reply (``message.images``), or ``None``."""
    choices = _items(_get(response, "choices"))
    message = _get(choices[0], "message") if choices else None
    for item in _items(_get(message, "images")):
        url = _text(_get(_get(item, "image_url"), "url"))
        if url:
            b64 = url.split(",", 1)[1] if url.startswith("data:") and "," in url else None
            return {"url": url, "b64_json": b64, "revised_prompt": None}
    return None


def _for_model(image: dict[str, str | None]) -> str:
    """The result as the model reads it: long values replaced by a note."""
    shown: dict[str, str | None] = {}
    for key, value in image.items():
        if isinstance(value, str) and len(value) > _INLINE_LIMIT:
            value = f"<{len(value)} characters, omitted here; the full value is in the tool data>"
        shown[key] = value
    return json.dumps(shown)


def _failure(error: str, endpoint_error: str | None, api_key: str | None) -> RuntimeError:
    """The tool's error, without ``api_key`` or a provider key LiteLLM read from the
    environment (``OPENAI_API_KEY``, ...) even where a provider's message echoes it (and
    without the provider's exception as its cause: its text may hold the key too)."""
    message = f"image generation failed: {error}"
    if endpoint_error is not None:
        message += f" (the image endpoint failed first: {endpoint_error})"
    secrets = known_credentials((api_key,), env=os.environ)
    return RuntimeError(redact_text(hide_values(message, secrets)))


def _items(value: Any) -> list[Any]:
    """``value`` if a provider sent the list the format says, else no items."""
    return list(value) if isinstance(value, list | tuple) else []


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _get(obj: Any, key: str) -> Any:
    if obj is None:
        return None
    if isinstance(obj, dict):
        return obj.get(key)
    return getattr(obj, key, None)


generate_image: Tool = make_generate_image_tool()
"""The default tool: provider settings from the environment, model ``DEFAULT_IMAGE_MODEL``."""
