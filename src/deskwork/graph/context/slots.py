"""Context slots: tiers, the slot record and the token-budgeted pool."""

from __future__ import annotations

from enum import StrEnum

__all__ = ["TIER_ORDER", "SlotTier"]


class SlotTier(StrEnum):
    """How long a slot lives (a ``str``: ``SlotTier.TURN == "turn"``)."""

    TURN = "turn"
    """Discarded at the end of the turn."""
    SESSION = "session"
    """Persisted for the session."""
    LONG_TERM = "long_term"
    """Persisted across sessions, keyed by user."""


TIER_ORDER: tuple[SlotTier, ...] = (SlotTier.TURN, SlotTier.SESSION, SlotTier.LONG_TERM)
"""Tiers from shortest- to longest-lived."""
