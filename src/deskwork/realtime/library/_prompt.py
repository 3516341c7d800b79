"""Prompt rendering for ``DynamicAgent``: a sandboxed Jinja2 environment and the messages.

Prompt text comes from a database, so templates are untrusted:

- they render in an ``ImmutableSandboxedEnvironment`` (a ``SandboxedEnvironment`` that also
  forbids mutating lists and dicts); any access to an unsafe attribute (``__class__``,
  ``__globals__``, ``mro`` ...) raises ``SecurityError`` at once instead of rendering empty;
- they only ever see plain JSON data (dicts, lists, strings, numbers), never live objects;
- ``*`` and ``**`` are capped so a template cannot allocate gigabytes.

Undefined names and missing keys render as empty (``ChainableUndefined``), so
``{{ blackboard.memory[agent_id].counter }}`` works before the agent wrote its memory.
"""

from __future__ import annotations

import json
from typing import Any, Final

from jinja2 import ChainableUndefined, Template, TemplateSyntaxError
from jinja2.exceptions import SecurityError
from jinja2.runtime import Context, Undefined
from jinja2.sandbox import ImmutableSandboxedEnvironment

from deskwork.exceptions import ConfigurationError
from deskwork.realtime.core.blackboard import CONTAINERS
from deskwork.realtime.core.models import AgentContext

__all__ = ["PromptEnvironment", "compile_template", "template_variables", "transcript"]

MAX_REPEAT: Final = 100_000
"""Largest string or list a template may build with ``*``."""
MAX_EXPONENT: Final = 128
"""Largest exponent a template may use with ``**``."""


class PromptEnvironment(ImmutableSandboxedEnvironment):
    """The sandbox prompts render in (see the module docstring)."""

    intercepted_binops = frozenset({"*", "**"})

    def __init__(self) -> None:
        """Create the environment (no autoescaping: prompts are not HTML)."""
        super().__init__(undefined=ChainableUndefined, autoescape=False)

    def unsafe_undefined(self, obj: Any, attribute: str) -> Undefined:
        """Refuse unsafe attribute access with an error (never render it as empty)."""
        raise SecurityError(
            f"access to attribute {attribute!r} of a {type(obj).__name__!r} object is not "
            "allowed in agent prompts"
        )

    def call_binop(self, context: Context, operator: str, left: Any, right: Any) -> Any:
        """Apply ``*`` and ``**`` only when the result stays small."""
        if operator == "**" and isinstance(right, int | float) and abs(right) > MAX_EXPONENT:
            raise SecurityError(f"exponent {right} is too large for a prompt template")
        if operator == "*":
            for seq, count in ((left, right), (right, left)):
                sized = isinstance(seq, str | list | tuple) and isinstance(count, int)
                if sized and len(seq) * count > MAX_REPEAT:
                    raise SecurityError("repetition result is too large for a prompt template")
        return super().call_binop(context, operator, left, right)


_ENVIRONMENT: Final = PromptEnvironment()


def compile_template(text: str, *, label: str = "text") -> Template:
    """Compile a prompt template.

    Raises:
        ConfigurationError: the template has a syntax error (the message gives the line).
    """
    try:
        return _ENVIRONMENT.from_string(text)
    except TemplateSyntaxError as exc:
        raise ConfigurationError(
            f"{label}: template syntax error on line {exc.lineno}: {exc}"
        ) from exc


def transcript(context: AgentContext, turns: int) -> list[dict[str, Any]]:
    """The last ``turns`` transcript segments as plain dicts (``turns=0``: none)."""
    segments = context.recent_segments[-turns:] if turns > 0 else []
    return [segment.model_dump(mode="json") for segment in segments]


def template_variables(
    context: AgentContext,
    *,
    agent_id: str,
    agent_name: str,
    private_state: dict[str, Any],
    context_turns: int,
) -> dict[str, Any]:
    """Everything a prompt template can use, as plain data (JSON values).

    The blackboard containers of a frozen (phase snapshot) board are shared, not copied: the
    immutable sandbox cannot change them and nothing else writes to the result.

    v2: ``blackboard`` (``variables``, ``events``, ``queues``, ``facts``, ``memory``),
    ``agent_id``. v1: ``state`` (the flat variables), ``memory`` (this agent's memory),
    ``context``. Also ``user_context``, ``language_directive``, ``rag_docs``, ``segments``,
    ``transcript``, ``session_id``, ``turn_count``, ``phase``, ``trigger_type``,
    ``trigger_metadata`` and ``agent_name``.
    """
    board = (
        context.blackboard.containers_view()
        if context.blackboard is not None
        else {key: {} if key in ("variables", "queues", "memory") else [] for key in CONTAINERS}
    )
    segments = transcript(context, context_turns)
    metadata = context.trigger_metadata
    info = {
        "session_id": context.session_id,
        "turn_count": context.turn_count,
        "phase": context.phase,
        "trigger_type": context.trigger_type.value,
        "trigger_metadata": json.loads(json.dumps(metadata, default=str)) if metadata else {},
        "user_context": context.user_context,
        "language_directive": context.language_directive,
        "rag_docs": list(context.rag_docs),
        "segments": segments,
    }
    return {
        **info,
        "context": {**info, "recent_segments": segments},
        "blackboard": board,
        "state": {**context.shared_state, **board["variables"]},
        "memory": {**private_state, **board["memory"].get(agent_id, {})},
        "agent_id": agent_id,
        "agent_name": agent_name,
        "transcript": format_transcript(segments),
    }


def format_transcript(segments: list[dict[str, Any]]) -> str:
    """``SPEAKER: text`` lines (a ``(partial)`` mark on non-final segments)."""
    lines = []
    for segment in segments:
        partial = "" if segment.get("is_final", True) else " (partial)"
        lines.append(f"{segment['speaker']}{partial}: {segment['text']}")
    return "\n".join(lines)
