"""Which agents a trigger reaches (pure checks, no I/O).

Skip reasons reported to callbacks and events: ``keyword_mismatch``,
``silence_below_threshold``, ``interval_not_elapsed``, ``cooldown``, ``conditions_not_met``.
``trigger_type_mismatch`` and ``not_allowed`` filter silently.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final

from deskwork.realtime.core._records import TriggerType
from deskwork.realtime.core.agent import BaseAgent
from deskwork.utils import is_number

__all__ = ["QUIET_REASONS", "match_keyword", "trigger_skip_reason"]

QUIET_REASONS: Final = frozenset({"trigger_type_mismatch", "not_allowed"})
"""Reasons that are not reported as skips (the agent was never a candidate)."""


def match_keyword(keywords: Iterable[str], text: str) -> str | None:
    """Return the first of ``keywords`` found in ``text`` (case-insensitive, by Unicode case
    folding: "Straße" is found in "STRASSE"), or ``None``."""
    folded = text.casefold()
    for keyword in keywords:
        if keyword and keyword.casefold() in folded:
            return keyword
    return None


def trigger_skip_reason(
    agent: BaseAgent, trigger_type: TriggerType, metadata: Mapping[str, Any], session_id: str
) -> str | None:
    """Return why ``agent`` does not answer this trigger, or ``None`` if it does.

    Args:
        agent: The candidate agent.
        trigger_type: The turn's trigger (not ``FORCE``, which bypasses these checks).
        metadata: The turn's trigger metadata (``keyword``, ``text``, ``silence_duration``).
        session_id: The session, for interval tracking.
    """
    config = agent.config
    if trigger_type not in config.trigger_types:
        return "trigger_type_mismatch"
    if trigger_type == TriggerType.KEYWORD and not _keyword_hit(config.trigger_keywords, metadata):
        return "keyword_mismatch"
    if trigger_type == TriggerType.SILENCE and not _silence_reached(
        config.silence_threshold, metadata
    ):
        return "silence_below_threshold"
    if trigger_type == TriggerType.INTERVAL and not _interval_elapsed(agent, session_id):
        return "interval_not_elapsed"
    return None


def _keyword_hit(keywords: list[str], metadata: Mapping[str, Any]) -> bool:
    """True when the agent lists no keywords, the host gave none, or one matches."""
    given = [metadata.get(name) for name in ("keyword", "text")]
    text = " ".join(value for value in given if isinstance(value, str))
    if not keywords or not text:
        return True
    return match_keyword(keywords, text) is not None


def _silence_reached(threshold: float | None, metadata: Mapping[str, Any]) -> bool:
    """True when the agent has no threshold, the host gave no duration, or it is reached."""
    duration = _seconds(metadata.get("silence_duration"))
    if threshold is None or duration is None:
        return True
    return duration >= threshold


def _seconds(value: Any) -> float | None:
    """A duration the host gave: a number, or a numeric string (``"5"`` from a JSON or form
    field, which used to count as no duration and ran the agent at any silence)."""
    if is_number(value):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value.strip())
        except ValueError:
            return None
    return None


def _interval_elapsed(agent: BaseAgent, session_id: str) -> bool:
    interval = agent.config.trigger_interval
    last = agent.last_run_at(session_id)
    if interval is None or last is None:
        return True
    return agent.clock() - last >= interval
