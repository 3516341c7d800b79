"""Size limits of prompt templates: nothing a template builds may outgrow a prompt.

A template can build strings and lists without printing them (``{% set a = a ~ a %}``,
``a + a``, ``a|replace("x", "xxxx")``, a macro or a ``{% set %}`` block around a loop),
so checking only the rendered output let a few doublings exhaust memory before anything
was output. Here every such intermediate is refused, before it is built where its size can
be known ahead (``+``, ``~``, ``join``, ``replace``, ``indent``, ``wordwrap``, format
strings, output buffers), after it is built otherwise (any filter's or call's result), with
the same error as a too-long prompt.
"""

from __future__ import annotations

import functools
import inspect
import operator
import re
import textwrap
from collections.abc import Callable, Collection, Iterable, Mapping
from contextvars import ContextVar
from typing import Any, Final

from jinja2.exceptions import SecurityError
from jinja2.filters import make_attrgetter, make_multi_attrgetter
from jinja2.utils import Namespace, generate_lorem_ipsum

from deskwork.utils import is_integer

MAX_WIDTH: Final = 10_000
"""Largest padding width or precision a template may ask for."""
MAX_PROMPT_CHARS: Final = 200_000
"""Longest prompt a template may render, and longest string or list it may build."""
MAX_BUILT_CHARS: Final = 10_000_000
"""Most characters one rendering may build in all, printed or not (a list item counts as
``_ITEM_CHARS``): ``items|map("upper")|list`` made a new string per item."""
_ITEM_CHARS: Final = 8
"""What one list item costs against ``MAX_BUILT_CHARS`` (a reference)."""
MAX_INT_BITS: Final = 10_000
"""Largest integer (in bits) a template may compute with ``*`` or ``**``."""
_WORD_CHARS: Final = 16
"""The most characters ``lipsum()`` spends on one word (word, punctuation, space)."""

BUILT_BUDGET: ContextVar[list[int] | None] = ContextVar("deskwork_prompt_built", default=None)
"""What the rendering in progress may still build (one list, counted down)."""

_WIDTHS = re.compile(r"(\d+)")
_PERCENT_SPEC = re.compile(r"%[-+ #0]*(\d*)(?:\.(\d+))?[a-zA-Z%]")
_BRACE_SPEC = re.compile(r"\{[^{}]*:([^{}]*)\}")
_NESTED_SPEC = re.compile(r"\{[^{}]*:[^{}]*\{")

_TEXT: Final = (str, bytes, bytearray)
_SCALARS: Final = (str, int, float, type(None))
"""Values whose text is short or already counted (an int's is under 4300 digits)."""
_PICKING: Final = frozenset({"attr", "d", "default", "first", "last", "max", "min", "random"})
"""Filters that return one of their inputs (nothing new to count)."""
_STRINGIFYING: Final = frozenset(
    {
        "capitalize", "center", "e", "escape", "forceescape", "format", "indent", "lower",
        "pprint", "replace", "safe", "string", "striptags", "title", "tojson", "trim",
        "truncate", "upper", "urlencode", "urlize", "wordcount", "wordwrap", "xmlattr",
    }
)  # fmt: skip
"""Filters that turn their value into text (a list of shared lists can print huge)."""


def too_large(what: str) -> SecurityError:
    """The error for a string or list past ``MAX_PROMPT_CHARS`` (the prompt limit's)."""
    return SecurityError(
        f"{what} of more than {MAX_PROMPT_CHARS} characters is too long for a prompt template"
    )


def check_width(value: Any) -> None:
    """Refuse a padding width or precision past ``MAX_WIDTH``."""
    if is_integer(value) and value > MAX_WIDTH:
        raise SecurityError(f"width {value} is too large for a prompt template")


def _format_widths(text: str) -> int:
    """The widths and precisions of ``text``'s format specs, summed (each at most
    ``MAX_WIDTH``; a spec taking its width from an argument, ``{:>{w}}``, is refused)."""
    if _NESTED_SPEC.search(text):
        raise SecurityError("nested format specs are not allowed in prompt templates")
    specs = [g for m in _PERCENT_SPEC.finditer(text) for g in m.groups() if g]
    specs += [w for m in _BRACE_SPEC.finditer(text) for w in _WIDTHS.findall(m.group(1))]
    for spec in specs:
        check_width(int(spec))
    return sum(int(spec) for spec in specs)


def check_format(text: Any, marker: str, arguments: Any = ()) -> None:
    """Refuse formatting ``text`` (``%`` when ``marker`` is ``"%"``, ``str.format`` when it
    is ``"{"``) with ``arguments`` when the result could pass ``MAX_PROMPT_CHARS``: each
    spec may insert any argument (``"%(x)s" * 20000 % {"x": long}``) padded to its width."""
    if not isinstance(text, str):
        return
    widths = _format_widths(text)
    if text.count(marker) * text_size(arguments) + widths + len(text) > MAX_PROMPT_CHARS:
        raise too_large("formatted string")


def text_size(value: Any, limit: int = MAX_PROMPT_CHARS) -> int:
    """About ``len(str(value))``, counted without building it and no further than past
    ``limit`` (a list of ten references to a list of ten ... is small but prints huge)."""
    total, stack = 0, [value]
    while stack and total <= limit:
        item = stack.pop()
        if isinstance(item, _TEXT):
            total += len(item) + 2
        elif isinstance(item, Mapping):
            total += 2 + 4 * len(item)
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, Namespace):
            stack.append(object.__getattribute__(item, "_Namespace__attrs"))
        elif isinstance(item, Collection):
            total += 2 + 2 * len(item)
            stack.extend(item)
        elif is_integer(item):
            total += 2 + item.bit_length() // 3
        else:
            total += len(str(item))
    return total - 2 if isinstance(value, _TEXT) else total


def checked_text(value: Any, what: str = "string") -> str:
    """``value`` as text, refused first when it would pass ``MAX_PROMPT_CHARS``."""
    if isinstance(value, str):
        return value
    if text_size(value) > MAX_PROMPT_CHARS:
        raise too_large(what)
    return str(value)


def count_built(size: int) -> None:
    """Count ``size`` new characters (or list items) against the rendering's
    ``MAX_BUILT_CHARS``."""
    budget = BUILT_BUDGET.get()
    if budget is not None:
        budget[0] -= size
        if budget[0] < 0:
            raise SecurityError(
                f"building more than {MAX_BUILT_CHARS} characters in all is too much for a"
                " prompt template"
            )


def checked_result(value: Any, what: str = "string") -> Any:
    """``value``, a string or list just built: refused past ``MAX_PROMPT_CHARS``, counted
    against ``MAX_BUILT_CHARS``."""
    if isinstance(value, str | bytes | bytearray | list | tuple):
        if len(value) > MAX_PROMPT_CHARS:
            raise too_large(what)
        count_built(len(value) * (_ITEM_CHARS if isinstance(value, list | tuple) else 1))
    return value


def checked_parts(parts: tuple[Any, ...]) -> tuple[Any, ...]:
    """The parts of a ``~`` concatenation, refused when together they pass the limit."""
    budget = MAX_PROMPT_CHARS
    for part in parts:
        budget -= len(part) if isinstance(part, str) else text_size(part, budget)
        if budget < 0:
            raise too_large("concatenated string")
    count_built(MAX_PROMPT_CHARS - budget)
    return parts


def checked_output(value: Any) -> Any:
    """An output expression's value (``{{ x }}``), refused when it would print too long."""
    if not isinstance(value, _SCALARS) and text_size(value) > MAX_PROMPT_CHARS:
        raise too_large("printed value")
    return value


def capped_join(parts: Iterable[str]) -> str:
    """``"".join(parts)`` of a macro's, block's or ``{% set %}`` block's output, refused
    while collecting once past the limit."""
    collected = TextBuffer()
    collected.extend(parts)
    count_built(collected.size)
    return "".join(collected)


class TextBuffer(list[str]):
    """The output buffer of a macro, a ``{% set %}``/``{% filter %}``/``{% call %}`` block
    or a recursive loop: refuses to hold more than ``MAX_PROMPT_CHARS`` characters."""

    __slots__ = ("size",)

    def __init__(self) -> None:
        """Start empty."""
        super().__init__()
        self.size = 0

    def append(self, part: str) -> None:
        """Add ``part``, refused past the limit."""
        self.size += len(part)
        if self.size > MAX_PROMPT_CHARS:
            raise too_large("rendered block")
        super().append(part)

    def extend(self, parts: Iterable[str]) -> None:
        """Add each of ``parts``."""
        for part in parts:
            self.append(part)


def checked_concat(left: Any, right: Any) -> None:
    """Refuse ``left + right`` of strings or lists past ``MAX_PROMPT_CHARS``."""
    sized = (str, bytes, bytearray, list, tuple)
    both = isinstance(left, sized) and isinstance(right, sized)
    if both and len(left) + len(right) > MAX_PROMPT_CHARS:
        raise too_large("concatenated string or list")


_COMPARISONS: Final[dict[str, Callable[[Any, Any], Any]]] = {
    "eq": operator.eq,
    "ne": operator.ne,
    "gt": operator.gt,
    "gteq": operator.ge,
    "lt": operator.lt,
    "lteq": operator.le,
    "in": lambda item, seq: item in seq,
    "notin": lambda item, seq: item not in seq,
}
COMPARING_TESTS: Final = frozenset(
    {"==", "!=", "<", "<=", ">", ">=", "eq", "ne", "lt", "le", "gt", "ge", "equalto",
     "lessthan", "greaterthan", "in"}
)  # fmt: skip
"""Tests that compare their value with their argument."""


def check_comparable(left: Any, right: Any) -> None:
    """Refuse comparing two containers too large to compare quickly: two lists built of
    shared lists a few dozen levels deep took hours to compare (``p == q``)."""
    if isinstance(left, _TEXT) or isinstance(right, _TEXT):
        return
    both = isinstance(left, Collection) and isinstance(right, Collection)
    if both and text_size(left) + text_size(right) > MAX_PROMPT_CHARS:
        raise SecurityError(
            f"comparing values of more than {MAX_PROMPT_CHARS} characters is too slow for"
            " a prompt template"
        )


def checked_compare(left: Any, operands: tuple[tuple[str, Any], ...]) -> Any:
    """``left op1 right1 op2 right2 ...`` (a Jinja comparison), each pair checked first."""
    result: Any = True
    for name, right in operands:
        check_comparable(left, right)
        result = _COMPARISONS[name](left, right)
        if not result:
            return result
        left = right
    return result


def checked_test(original: Any) -> Callable[..., Any]:
    """A comparing test (``is eq``, ``is in`` ...) with its operands checked first."""

    @functools.wraps(original)
    def checked(value: Any, other: Any) -> Any:
        check_comparable(value, other)
        return original(value, other)

    return checked


def check_numbers(operator: str, left: Any, right: Any) -> None:
    """Refuse ``*``/``**`` of integers whose result would pass ``MAX_INT_BITS``."""
    if not (is_integer(left) and is_integer(right)):
        return
    bits = left.bit_length() * right if operator == "**" else left.bit_length() + right.bit_length()
    if bits > MAX_INT_BITS:
        raise SecurityError(f"a number of more than {MAX_INT_BITS} bits is too large")


def _items(value: Any) -> list[Any]:
    """``value``'s items, refused past ``MAX_PROMPT_CHARS`` of them (a generator too)."""
    items = []
    for item in value:
        items.append(item)
        if len(items) > MAX_PROMPT_CHARS:
            raise too_large("list")
    return items


def _joined_size(items: list[Any], separator: Any) -> int:
    budget = MAX_PROMPT_CHARS - text_size(separator) * max(len(items) - 1, 0)
    for item in items:
        if budget < 0:
            break
        budget -= text_size(item, budget)
    return MAX_PROMPT_CHARS - budget


def _replaced_size(text: Any, old: Any, new: Any, count: Any = -1) -> int:
    text, old, new = (v if isinstance(v, _TEXT) else checked_text(v) for v in (text, old, new))
    times: int = text.count(old)
    if is_integer(count) and count >= 0:
        times = min(times, int(count))
    return len(text) + times * (len(new) - len(old))


def _check_join(args: dict[str, Any]) -> None:
    args["value"] = _items(args["value"])
    if _joined_size(args["value"], args["d"]) > MAX_PROMPT_CHARS:
        raise too_large("joined string")


def _check_replace(args: dict[str, Any]) -> None:
    size = _replaced_size(args["s"], args["old"], args["new"], args.get("count"))
    if size > MAX_PROMPT_CHARS:
        raise too_large("replaced string")


def _check_indent(args: dict[str, Any]) -> None:
    text, width = checked_text(args["s"]), args.get("width", 4)
    check_width(width)
    indent = len(width) if isinstance(width, str) else width if is_integer(width) else 0
    if len(text) + (text.count("\n") + 2) * indent > MAX_PROMPT_CHARS:
        raise too_large("indented string")


def _check_wordwrap(args: dict[str, Any]) -> None:
    check_width(args.get("width"))
    wrap, text = args.get("wrapstring"), checked_text(args["s"])
    if wrap is None or (len(text) + 1) * (len(wrap) + 1) <= MAX_PROMPT_CHARS:
        return
    options = {k: args[k] for k in ("width", "break_long_words", "break_on_hyphens") if k in args}
    lines = [
        textwrap.wrap(line, expand_tabs=False, replace_whitespace=False, **options)
        for line in text.splitlines()
    ]
    breaks = sum(max(len(wrapped), 1) for wrapped in lines) - 1
    if len(text) + breaks * len(checked_text(wrap)) > MAX_PROMPT_CHARS:
        raise too_large("wrapped string")


def _check_sum(args: dict[str, Any]) -> None:
    start = args.get("start", 0)
    if not isinstance(start, str | list | tuple):
        return
    args["iterable"] = items = _items(args["iterable"])
    attribute = args.get("attribute")
    if attribute is not None:
        items = list(map(make_attrgetter(args["environment"], attribute), items))
    if len(start) + sum(len(i) for i in items if isinstance(i, Collection)) > MAX_PROMPT_CHARS:
        raise too_large("summed list")


def _check_format_filter(args: dict[str, Any]) -> None:
    check_format(checked_text(args["value"]), "%", (args.get("args"), args.get("kwargs")))


def _check_ordering(args: dict[str, Any]) -> None:
    """Refuse sorting (or ``max``, ``groupby`` ...) items whose compared keys are containers
    too large to compare quickly (see ``check_comparable``)."""
    args["value"] = items = _items(args["value"])
    attribute = args.get("attribute")
    if attribute is not None:
        pick = make_multi_attrgetter if "," in str(attribute) else make_attrgetter
        items = list(map(pick(args["environment"], attribute), items))
    nested = any(isinstance(i, Collection) and not isinstance(i, _TEXT) for i in items)
    if nested and text_size(items) > MAX_PROMPT_CHARS:
        raise SecurityError(
            f"comparing values of more than {MAX_PROMPT_CHARS} characters is too slow for"
            " a prompt template"
        )


def _check_padding(args: dict[str, Any]) -> None:
    for name in ("width", "linecount", "slices"):
        check_width(args.get(name))


_FILTER_CHECKS: Final[dict[str, Callable[[dict[str, Any]], None]]] = {
    "batch": _check_padding,
    "center": _check_padding,
    "format": _check_format_filter,
    "groupby": _check_ordering,
    "max": _check_ordering,
    "min": _check_ordering,
    "sort": _check_ordering,
    "unique": _check_ordering,
    "indent": _check_indent,
    "join": _check_join,
    "replace": _check_replace,
    "slice": _check_padding,
    "sum": _check_sum,
    "wordwrap": _check_wordwrap,
}


def capped_filter(name: str, original: Callable[..., Any]) -> Callable[..., Any]:
    """``original`` (the filter ``name``) with its result refused past the limit, and for
    filters that can grow a string many times over, their arguments checked first."""
    check = _FILTER_CHECKS.get(name)
    stringifies, picks = name in _STRINGIFYING, name in _PICKING
    signature = inspect.signature(original)
    value_at = 0 if getattr(original, "jinja_pass_arg", None) is None else 1

    @functools.wraps(original)
    def capped(*args: Any, **kwargs: Any) -> Any:
        if stringifies and len(args) > value_at:
            checked_text(args[value_at])
        if check is not None:
            bound = signature.bind(*args, **kwargs)
            bound.apply_defaults()
            check(bound.arguments)
            args, kwargs = bound.args, bound.kwargs
        result = original(*args, **kwargs)
        if picks or (len(args) > value_at and result is args[value_at]):
            return result
        return checked_result(result)

    return capped


def check_text_method(owner: Any, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    """Refuse a call of a string's method ``name`` that could build a string past the limit
    (``s.replace``, ``sep.join``, ``s.translate``, ``s.expandtabs``, padding)."""
    values = (*args, *kwargs.values())
    if name in ("ljust", "rjust", "center", "zfill", "expandtabs"):
        for value in values:
            check_width(value)
    size = 0
    if name == "replace" and len(values) >= 2:
        size = _replaced_size(owner, *values[:3])
    elif name == "join" and values:
        size = _joined_size(_items(values[0]), owner)
    elif name == "expandtabs":
        tab = values[0] if values and is_integer(values[0]) else 8
        size = len(owner) + owner.count("\t" if isinstance(owner, str) else b"\t") * tab
    elif name == "translate" and values and isinstance(values[0], Mapping):
        size = len(owner) * max((text_size(v) for v in values[0].values()), default=1)
    if size > MAX_PROMPT_CHARS:
        raise too_large("string")


def capped_lipsum(n: int = 5, html: bool = True, min: int = 20, max: int = 100) -> str:
    """``lipsum()``, refused when asked for more text than a prompt holds."""
    if is_integer(n) and is_integer(max) and n * max * _WORD_CHARS > MAX_PROMPT_CHARS:
        raise too_large("lipsum() text")
    return generate_lorem_ipsum(n, html, min, max)
