"""What an agent's ``process()`` returns."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from deskwork.graph.context.slots import SlotTier

__all__ = ["AgentResponse"]


@dataclass(frozen=True, slots=True)
class AgentResponse:
    """One agent's answer for a turn, and where the graph goes next."""

    agent_name: str
    """The agent that answered."""
    content: str
    """The text added to the conversation as an AI message."""
    next_agent: str | None = None
    """The agent to hand off to; ``None`` ends the turn."""
    slots_update: dict[str, Any] = field(default_factory=dict)
    """Context slots to set (merged into ``state["context_slots"]``)."""
    slots_tier: dict[str, SlotTier] = field(default_factory=dict)
    """Tier of each updated slot; slots not listed stay ``SlotTier.TURN``."""
    token_usage: dict[str, int] | None = None
    """Tokens the agent's LLM calls used, e.g. ``{"input_tokens": 10, "output_tokens": 5}``."""
