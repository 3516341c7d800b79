"""Model adapters. ``LiteLLMAdapter`` (and LiteLLM itself) load on first use."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from deskwork.adapters._retry import RetryPolicy
from deskwork.adapters.base import (
    BaseModelAdapter,
    ModelResponse,
    StreamChunk,
    StructuredOutputError,
    ToolCallDelta,
)

if TYPE_CHECKING:
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


def __getattr__(name: str) -> Any:
    if name == "LiteLLMAdapter":
        from deskwork.adapters.litellm import LiteLLMAdapter

        return LiteLLMAdapter
    raise AttributeError(f"module 'deskwork.adapters' has no attribute {name!r}")
