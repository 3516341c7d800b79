"""Prompt rendering for ``DynamicAgent``: a sandboxed Jinja2 environment and the messages.

Prompt text comes from a database, so templates are untrusted:

- they render in an ``ImmutableSandboxedEnvironment`` (a ``SandboxedEnvironment`` that also
  forbids mutating lists and dicts); any access to an unsafe attribute (``__class__``,
  ``__globals__``, ``mro`` ...) raises ``SecurityError`` at once instead of rendering empty;
- they only ever see plain JSON data (dicts, lists, strings, numbers), never live objects;
- nothing a template does can allocate gigabytes or spin for minutes: ``*`` and ``**``
  are capped, so are padding widths (``ljust``/``center``/``format``/``%`` and the
  ``center``/``indent``/``format`` filters), ``range()``, the iterations of all its
  ``{% for %}`` loops together (nested loops multiply) and the rendered prompt's size,
  which is counted while it renders.

Undefined names and missing keys render as empty (``ChainableUndefined``), so
``{{ blackboard.memory[agent_id].counter }}`` works before the agent wrote its memory.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from typing import Any, Final

from jinja2 import ChainableUndefined, Template, TemplateSyntaxError, nodes
from jinja2.compiler import CodeGenerator, Frame
from jinja2.exceptions import SecurityError
from jinja2.runtime import Context, LoopContext, Undefined
from jinja2.sandbox import ImmutableSandboxedEnvironment

from deskwork.realtime.core._problems import AgentConfigurationError
from deskwork.realtime.core.blackboard import CONTAINERS
from deskwork.realtime.core.models import AgentContext
from deskwork.utils import is_integer

__all__ = [
    "PromptEnvironment",
    "compile_template",
    "render_prompt",
    "template_variables",
    "transcript",
]

MAX_REPEAT: Final = 100_000
"""Largest string or list a template may build with ``*``."""
MAX_EXPONENT: Final = 128
"""Largest exponent a template may use with ``**``."""
MAX_WIDTH: Final = 10_000
"""Largest padding width or precision a template may ask for."""
MAX_RANGE: Final = 1_000
"""Most items ``range()`` may produce (nested loops multiply)."""
MAX_PROMPT_CHARS: Final = 200_000
"""Longest prompt a template may render."""
MAX_LOOP_ITEMS: Final = 100_000
"""Most iterations all ``{% for %}`` loops of one rendering may make together."""
MAX_LOOP_DEPTH: Final = 10
"""Most levels a recursive ``{% for ... recursive %}`` loop may descend."""

_LOOP_BUDGET: ContextVar[list[int] | None] = ContextVar("deskwork_prompt_loops", default=None)
"""The iterations the rendering in progress has left (one list, counted down)."""

_PAD_METHODS: Final = frozenset({"ljust", "rjust", "center", "zfill", "expandtabs"})
_FORMAT_METHODS: Final = frozenset({"format", "format_map"})
_WIDTHS = re.compile(r"(\d+)")
_PERCENT_SPEC = re.compile(r"%[-+ #0]*(\d*)(?:\.(\d+))?[a-zA-Z%]")
_BRACE_SPEC = re.compile(r"\{[^{}]*:([^{}]*)\}")
_NESTED_SPEC = re.compile(r"\{[^{}]*:[^{}]*\{")


def _check_width(value: Any) -> None:
    if is_integer(value) and value > MAX_WIDTH:
        raise SecurityError(f"width {value} is too large for a prompt template")


def _check_format_string(text: str) -> None:
    """Refuse ``%``- or ``{}``-format specs whose width or precision is too large (or that
    take their width from an argument, ``{:>{w}}``, which cannot be checked here)."""
    if _NESTED_SPEC.search(text):
        raise SecurityError("nested format specs are not allowed in prompt templates")
    specs = [g for m in _PERCENT_SPEC.finditer(text) for g in m.groups() if g]
    specs += [w for m in _BRACE_SPEC.finditer(text) for w in _WIDTHS.findall(m.group(1))]
    for spec in specs:
        _check_width(int(spec))


def _capped_range(*args: int) -> range:
    result = range(*args)
    if len(result) > MAX_RANGE:
        raise SecurityError(f"range() of {len(result)} items is too large for a prompt template")
    return result


class _BudgetedLoops(CodeGenerator):
    """Compiles each ``{% for %}`` to iterate through ``environment.loop_budget``, which a
    template cannot rebind (an environment attribute, not a template variable)."""

    def visit_For(self, node: nodes.For, frame: Frame) -> None:
        """Visit the loop with its iterable wrapped in the budget."""
        budgeted = copy.copy(node)
        budgeted.iter = nodes.Call(
            nodes.EnvironmentAttribute("loop_budget"), [node.iter], [], None, None
        ).set_environment(self.environment)
        budgeted.iter.set_lineno(node.lineno)
        super().visit_For(budgeted, frame)


class PromptEnvironment(ImmutableSandboxedEnvironment):
    """The sandbox prompts render in (see the module docstring)."""

    intercepted_binops = frozenset({"*", "**", "%"})
    code_generator_class = _BudgetedLoops

    def __init__(self) -> None:
        """Create the environment (no autoescaping: prompts are not HTML)."""
        super().__init__(undefined=ChainableUndefined, autoescape=False)
        self.globals["range"] = _capped_range
        for name in ("center", "indent", "format"):
            self.filters[name] = _capped_filter(name, self.filters[name])

    def loop_budget(self, iterable: Any) -> Iterator[Any]:
        """``iterable``'s items, each counted against the rendering's ``MAX_LOOP_ITEMS``."""
        budget = _LOOP_BUDGET.get()
        for item in iterable:
            if budget is not None:
                budget[0] -= 1
                if budget[0] < 0:
                    raise SecurityError(
                        f"loops of more than {MAX_LOOP_ITEMS} iterations in all are too large"
                        " for a prompt template"
                    )
            yield item

    def _budgeted_recursion(
        self, loop: LoopContext, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> tuple[tuple[Any, ...], dict[str, Any]]:
        """The arguments of a recursive loop's ``loop(items)`` with ``items`` (positional or
        ``iterable=``) iterated through the budget; a level past ``MAX_LOOP_DEPTH`` refused
        (each item of a deep level climbs every level's generator)."""
        if loop.depth >= MAX_LOOP_DEPTH:
            raise SecurityError(
                f"recursive loops deeper than {MAX_LOOP_DEPTH} levels are too deep for a"
                " prompt template"
            )
        if args:
            return (self.loop_budget(args[0]), *args[1:]), kwargs
        if "iterable" in kwargs:
            return args, {**kwargs, "iterable": self.loop_budget(kwargs["iterable"])}
        return args, kwargs

    def call(__self, __context: Context, __obj: Any, *args: Any, **kwargs: Any) -> Any:
        """Call ``__obj`` in the sandbox, refusing huge padding and format widths; a
        recursive loop's ``loop(items)`` iterates ``items`` through the loop budget too (its
        levels bypassed it, and a two-item tree 20 deep spun for minutes)."""
        if isinstance(__obj, LoopContext):
            args, kwargs = __self._budgeted_recursion(__obj, args, kwargs)
        owner = getattr(__obj, "__self__", None)
        if isinstance(owner, str) and getattr(__obj, "__name__", "") in _PAD_METHODS:
            for value in (*args, *kwargs.values()):
                _check_width(value)
        return super().call(__context, __obj, *args, **kwargs)

    def wrap_str_format(self, value: Any) -> Callable[..., str] | None:
        """Check ``str.format``/``format_map`` format strings when they are looked up."""
        owner = getattr(value, "__self__", None)
        if isinstance(owner, str) and getattr(value, "__name__", "") in _FORMAT_METHODS:
            _check_format_string(owner)
        return super().wrap_str_format(value)

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
        if operator == "%" and isinstance(left, str):
            _check_format_string(left)
        if operator == "*":
            for seq, count in ((left, right), (right, left)):
                sized = isinstance(seq, str | list | tuple) and isinstance(count, int)
                if sized and len(seq) * count > MAX_REPEAT:
                    raise SecurityError("repetition result is too large for a prompt template")
        return super().call_binop(context, operator, left, right)


def _capped_filter(name: str, original: Any) -> Any:
    def capped(value: Any, *args: Any, **kwargs: Any) -> Any:
        if name == "format" and isinstance(value, str):
            _check_format_string(value)
        else:
            for width in (*args, *kwargs.values()):
                _check_width(width)
        return original(value, *args, **kwargs)

    return capped


def render_prompt(template: Template, variables: dict[str, Any]) -> str:
    """Render ``template`` within ``MAX_LOOP_ITEMS`` loop iterations; refuse a prompt longer
    than ``MAX_PROMPT_CHARS`` as soon as it gets there (not after building all of it)."""
    token = _LOOP_BUDGET.set([MAX_LOOP_ITEMS])
    try:
        parts, size = [], 0
        for part in template.generate(variables):
            size += len(part)
            if size > MAX_PROMPT_CHARS:
                raise SecurityError(
                    f"rendered prompt of more than {MAX_PROMPT_CHARS} characters is too long"
                )
            parts.append(part)
        return "".join(parts)
    finally:
        _LOOP_BUDGET.reset(token)


_ENVIRONMENT: Final = PromptEnvironment()


def compile_template(text: str, *, label: str = "text") -> Template:
    """Compile a prompt template.

    Raises:
        AgentConfigurationError: the template has a syntax error (the message gives the line).
    """
    try:
        return _ENVIRONMENT.from_string(text)
    except TemplateSyntaxError as exc:
        raise AgentConfigurationError(
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
