"""How a supervisor turns a model's answer into a routing decision.

Pure functions, no I/O: the prompt that lists the legal targets (and the injected memories, in
the one rendering both modes use), the structured decision model, and the text fallback that
finds an agent name at word boundaries (``greeter`` matches in "send it to the greeter." but not
inside ``greeter_v2``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from pydantic import BaseModel, Field

__all__ = [
    "FINISH",
    "RouteChoice",
    "RouteDecision",
    "build_routing_prompt",
    "choose_route",
    "find_agent_mention",
    "render_memories",
]

FINISH = "FINISH"
"""What the model answers to end the turn instead of routing."""

_FINISH_WORDS = frozenset({"finish", "end", "done", "none", "null", "__end__"})


class RouteDecision(BaseModel):
    """The supervisor's structured routing decision (``with_structured_output``)."""

    next_agent: str | None = Field(
        default=None, description="The agent to route to, or null to finish the turn."
    )
    content: str = Field(default="", description="Your message: reasoning or the final answer.")


@dataclass(frozen=True, slots=True)
class RouteChoice:
    """The outcome of parsing: where to go and what to say."""

    requested: str | None
    """What the model asked for (``None``: it finished or named nothing usable)."""
    next_agent: str | None
    """The validated target; ``None`` ends the turn."""
    content: str
    """The supervisor's message for the conversation."""
    fell_back: bool
    """True when the model's answer was not a legal route and a fallback was used."""


def build_routing_prompt(
    name: str,
    description: str,
    targets: Sequence[str],
    descriptions: Mapping[str, str],
    memories: Sequence[Mapping[str, object]] = (),
) -> str:
    """The system prompt of a simple-mode supervisor."""
    lines = [
        f"You are {name}, the supervisor of a team of agents. {description}".strip(),
        "Decide which agent should act next on the conversation, or finish the turn when the "
        "request has been fully handled.",
        "",
        "Agents you may route to:",
    ]
    lines += [f"- {t}: {descriptions.get(t, '')}".rstrip(": ") for t in targets]
    if memories:
        lines += ["", "Relevant memories about this user and session:", render_memories(memories)]
    lines += [
        "",
        "Answer with exactly one agent name from the list to route to it, or with "
        f"{FINISH} followed by your final answer to the user to end the turn.",
    ]
    return "\n".join(lines)


def render_memories(memories: Sequence[Mapping[str, object]]) -> str:
    """Injected memories as prompt text: one ``- key: value`` line each ("" for none).

    Both supervisor modes show memories this way (simple mode in its routing prompt, ReAct mode
    as the core prompt's ``{injected_memories}``); ids, timestamps and scores stay out.
    """
    return "\n".join(f"- {m.get('key')}: {m.get('value')}" for m in memories)


def find_agent_mention(text: str, candidates: Sequence[str]) -> str | None:
    """The candidate named earliest in ``text`` at word boundaries (case-insensitive)."""
    best: tuple[int, int, str] | None = None
    for name in candidates:
        match = re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", text, re.IGNORECASE)
        if match:
            key = (match.start(), -len(name), name)
            best = key if best is None or key < best else best
    return None if best is None else best[2]


def _is_finish(text: str) -> bool:
    first = re.split(r"[\s:.,!;-]+", text.strip(), maxsplit=1)[0] if text.strip() else ""
    return first.lower() in _FINISH_WORDS


def _strip_finish(text: str) -> str:
    return re.sub(r"^\s*\w+\s*[:.,!;-]?\s*", "", text, count=1).strip() or text.strip()


def choose_route(
    self_name: str,
    targets: Sequence[str],
    *,
    requested: str | None,
    content: str,
    fallback: str | None,
) -> RouteChoice:
    """Validate ``requested`` against ``targets``; fall back to a mention in the text.

    ``requested`` is the structured ``next_agent`` or the raw text answer. Returns the finish
    decision for an explicit finish word or ``None``; otherwise the exact target, else the
    earliest word-boundary mention in ``requested`` then ``content``, else ``fallback``
    (``None`` = finish). The caller rejects routes to ``self_name`` before calling this.
    """
    raw = (requested or "").strip()
    if requested is None or _is_finish(raw):
        # text mode passes the reply as both: drop the leading finish word from the answer
        message = _strip_finish(content) if requested == content else content.strip()
        return RouteChoice(requested=None, next_agent=None, content=message, fell_back=False)
    by_lower = {t.lower(): t for t in targets}
    exact = by_lower.get(raw.lower())
    if exact is not None:
        return RouteChoice(requested=raw, next_agent=exact, content=content, fell_back=False)
    mentioned = find_agent_mention(raw, targets) or find_agent_mention(content, targets)
    if mentioned is not None:
        return RouteChoice(requested=raw, next_agent=mentioned, content=content, fell_back=False)
    chosen = None if fallback == self_name else fallback
    return RouteChoice(requested=raw, next_agent=chosen, content=content, fell_back=True)
