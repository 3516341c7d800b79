"""Cost utilities backed by LiteLLM's price table (loaded locally, never fetched)."""

from __future__ import annotations

import sys
from typing import Any

__all__ = ["calculate_cost", "cost_from_usage", "get_model_pricing"]


def calculate_cost(response: Any) -> float | None:
    """USD cost of a LiteLLM response, or ``None`` when the model's price is unknown."""
    litellm: Any = sys.modules.get("litellm")
    if litellm is None or response is None:
        return None
    hidden = getattr(response, "_hidden_params", None) or {}
    cost = hidden.get("response_cost") if isinstance(hidden, dict) else None
    if cost is not None:
        return float(cost)
    try:
        return float(litellm.completion_cost(completion_response=response))
    except Exception:
        return None


def cost_from_usage(model: str, usage: dict[str, int]) -> float | None:
    """USD cost of ``usage`` (prompt/completion tokens) on ``model``; ``None`` if unpriced.

    Used for streamed replies, which carry token counts but no priced response object.
    """
    litellm: Any = sys.modules.get("litellm")
    if litellm is None or not usage:
        return None
    try:
        prompt, completion = litellm.cost_per_token(
            model=model,
            prompt_tokens=int(usage.get("prompt_tokens", 0)),
            completion_tokens=int(usage.get("completion_tokens", 0)),
        )
    except Exception:
        return None
    return float(prompt) + float(completion)


def get_model_pricing(model: str) -> dict[str, Any] | None:
    """Price and context metadata for ``model`` (full name or unprefixed), or ``None``."""
    from deskwork.adapters.litellm import import_litellm

    litellm = import_litellm()
    table: dict[str, Any] = litellm.model_cost
    for name in (model, model.split("/", 1)[-1]):
        info = table.get(name)
        if info:
            keys = (
                "input_cost_per_token",
                "output_cost_per_token",
                "max_tokens",
                "max_input_tokens",
                "max_output_tokens",
                "litellm_provider",
                "mode",
            )
            return {key: info[key] for key in keys if key in info}
    return None
