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
  which is counted while it renders; so is every string or list it builds without printing
  it (``~``, ``+``, filters, string methods, macros, ``{% set %}`` blocks: see
  ``_prompt_budget``), and ints past ``MAX_INT_BITS``.

Undefined names and missing keys render as empty (``ChainableUndefined``), so
``{{ blackboard.memory[agent_id].counter }}`` works before the agent wrote its memory.
"""

from __future__ import annotations

import copy
import json
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
from deskwork.realtime.library._prompt_budget import (
    BUILT_BUDGET,
    COMPARING_TESTS,
    MAX_BUILT_CHARS,
    MAX_PROMPT_CHARS,
    TextBuffer,
    capped_filter,
    capped_join,
    capped_lipsum,
    check_format,
    check_numbers,
    check_text_method,
    checked_compare,
    checked_concat,
    checked_output,
    checked_parts,
    checked_result,
    checked_test,
    too_large,
)

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
MAX_RANGE: Final = 1_000
"""Most items ``range()`` may produce (nested loops multiply)."""
MAX_LOOP_ITEMS: Final = 100_000
"""Most iterations all ``{% for %}`` loops of one rendering may make together."""
MAX_LOOP_DEPTH: Final = 10
"""Most levels a recursive ``{% for ... recursive %}`` loop may descend."""

_LOOP_BUDGET: ContextVar[list[int] | None] = ContextVar("deskwork_prompt_loops", default=None)
"""The iterations the rendering in progress has left (one list, counted down)."""

_FORMAT_METHODS: Final = frozenset({"format", "format_map"})


def _capped_range(*args: int) -> range:
    result = range(*args)
    if len(result) > MAX_RANGE:
        raise SecurityError(f"range() of {len(result)} items is too large for a prompt template")
    return result


class _BudgetedLoops(CodeGenerator):
    """Compiles each ``{% for %}`` to iterate through ``environment.loop_budget``, each
    ``~`` to check its parts' size first, and each output buffer (macros, ``{% set %}``
    blocks ...) to count what it holds; a template cannot rebind these (environment
    attributes, not template variables)."""

    def buffer(self, frame: Frame) -> None:
        """Collect the frame's output in a ``TextBuffer`` (refused past the prompt limit)."""
        frame.buffer = self.temporary_identifier()
        self.writeline(f"{frame.buffer} = environment.text_buffer()")

    def visit_Compare(self, node: nodes.Compare, frame: Frame) -> None:
        """Compare through ``environment.checked_compare`` (refuses huge containers)."""
        self.write("environment.checked_compare(")
        self.visit(node.expr, frame)
        self.write(", (")
        for operand in node.ops:
            self.write(f"({operand.op!r}, ")
            self.visit(operand.expr, frame)
            self.write("), ")
        self.write("))")

    def visit_Concat(self, node: nodes.Concat, frame: Frame) -> None:
        """Join the parts of ``a ~ b`` once ``environment.checked_parts`` let them through."""
        if frame.eval_ctx.volatile:
            join = "(markup_join if context.eval_ctx.volatile else str_join)"
        else:
            join = "markup_join" if frame.eval_ctx.autoescape else "str_join"
        self.write(f"{join}(environment.checked_parts((")
        for part in node.nodes:
            self.visit(part, frame)
            self.write(", ")
        self.write(")))")

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

    intercepted_binops = frozenset({"*", "**", "%", "+"})
    code_generator_class = _BudgetedLoops
    concat = staticmethod(capped_join)
    text_buffer = TextBuffer
    checked_parts = staticmethod(checked_parts)
    checked_compare = staticmethod(checked_compare)

    def __init__(self) -> None:
        """Create the environment (no autoescaping: prompts are not HTML)."""
        super().__init__(undefined=ChainableUndefined, autoescape=False, finalize=checked_output)
        self.globals["range"] = _capped_range
        self.globals["lipsum"] = capped_lipsum
        self.filters = {name: capped_filter(name, f) for name, f in self.filters.items()}
        for name in COMPARING_TESTS & self.tests.keys():
            self.tests[name] = checked_test(self.tests[name])

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
        """Call ``__obj`` in the sandbox, refusing huge padding and format widths and string
        methods that would build a string past the prompt limit (checked again after); a
        recursive loop's ``loop(items)`` iterates ``items`` through the loop budget too (its
        levels bypassed it, and a two-item tree 20 deep spun for minutes)."""
        if isinstance(__obj, LoopContext):
            args, kwargs = __self._budgeted_recursion(__obj, args, kwargs)
        owner = getattr(__obj, "__self__", None)
        if isinstance(owner, str | bytes | bytearray):
            check_text_method(owner, getattr(__obj, "__name__", ""), args, kwargs)
        return checked_result(super().call(__context, __obj, *args, **kwargs))

    def wrap_str_format(self, value: Any) -> Callable[..., str] | None:
        """Check ``str.format``/``format_map`` format strings when they are looked up, and
        the size of what they would build when they are called."""
        owner = getattr(value, "__self__", None)
        if isinstance(owner, str) and getattr(value, "__name__", "") in _FORMAT_METHODS:
            check_format(owner, "{")
        wrapped = super().wrap_str_format(value)
        if wrapped is None:
            return None

        def checked(*args: Any, **kwargs: Any) -> str:
            check_format(owner, "{", (args, kwargs))
            return wrapped(*args, **kwargs)

        return checked

    def unsafe_undefined(self, obj: Any, attribute: str) -> Undefined:
        """Refuse unsafe attribute access with an error (never render it as empty)."""
        raise SecurityError(
            f"access to attribute {attribute!r} of a {type(obj).__name__!r} object is not "
            "allowed in agent prompts"
        )

    def call_binop(self, context: Context, operator: str, left: Any, right: Any) -> Any:
        """Apply ``*``, ``**``, ``%`` and ``+`` only when the result stays small."""
        if operator == "**" and isinstance(right, int | float) and abs(right) > MAX_EXPONENT:
            raise SecurityError(f"exponent {right} is too large for a prompt template")
        if operator == "%":
            check_format(left, "%", right)
        if operator == "+":
            checked_concat(left, right)
        if operator in ("*", "**"):
            check_numbers(operator, left, right)
        if operator == "*":
            for seq, count in ((left, right), (right, left)):
                sized = isinstance(seq, str | list | tuple) and isinstance(count, int)
                if sized and len(seq) * count > MAX_REPEAT:
                    raise SecurityError("repetition result is too large for a prompt template")
        return checked_result(super().call_binop(context, operator, left, right))


def render_prompt(template: Template, variables: dict[str, Any]) -> str:
    """Render ``template`` within ``MAX_LOOP_ITEMS`` loop iterations; refuse a prompt longer
    than ``MAX_PROMPT_CHARS`` as soon as it gets there (not after building all of it)."""
    token = _LOOP_BUDGET.set([MAX_LOOP_ITEMS])
    built = BUILT_BUDGET.set([MAX_BUILT_CHARS])
    try:
        parts, size = [], 0
        for part in template.generate(variables):
            size += len(part)
            if size > MAX_PROMPT_CHARS:
                raise too_large("rendered prompt")
            parts.append(part)
        return "".join(parts)
    finally:
        _LOOP_BUDGET.reset(token)
        BUILT_BUDGET.reset(built)


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
