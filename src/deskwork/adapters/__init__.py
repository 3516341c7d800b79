"""Model adapters. ``LiteLLMAdapter`` (and LiteLLM itself) load on first use."""

from __future__ import annotations

from typing import TYPE_CHECKING

from deskwork._lazy import lazy_exports as _lazy_exports

if TYPE_CHECKING:
    from deskwork.adapters._retry import RetryPolicy
    from deskwork.adapters.base import (
        BaseModelAdapter,
        ModelResponse,
        StreamChunk,
        StructuredOutputError,
        ToolCallDelta,
    )
    from deskwork.adapters.litellm import LiteLLMAdapter

__all__ = [
    "BaseModelAdapter",
    "LiteLLMAdapter",
    "ModelResponse",
    "RetryPolicy",
    "StreamChunk",
    "StructuredOutputError",
    "ToolCallDelta",
]

_LAZY = {
    "BaseModelAdapter": "deskwork.adapters.base",
    "LiteLLMAdapter": "deskwork.adapters.litellm",
    "ModelResponse": "deskwork.adapters.base",
    "RetryPolicy": "deskwork.adapters._retry",
    "StreamChunk": "deskwork.adapters.base",
    "StructuredOutputError": "deskwork.adapters.base",
    "ToolCallDelta": "deskwork.adapters.base",
}

__getattr__, __dir__ = _lazy_exports(__name__, _LAZY)
