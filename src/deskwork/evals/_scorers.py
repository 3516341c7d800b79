"""Built-in scorers, and how any scorer's answer becomes a :class:`Score`.

A scorer is any callable ``(case, report) -> Score | bool | float`` (or an async one).
``True``/``False`` are scores 1/0; a number in [0, 1] passes at 0.5 or more. Its name is its
``name`` attribute, else its ``__name__``.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import json
import re
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, TypeAdapter, ValidationError

from deskwork._aio import task_cancelling
from deskwork._extras import require
from deskwork.core.event import EventType
from deskwork.core.redact import describe_exception, redact_text, redacted_preview
from deskwork.core.report import Report
from deskwork.evals._case import EvalCase, Score, as_text, output_of, scorer_name
from deskwork.exceptions import ConfigurationError
from deskwork.tools._pool import ToolThreadPool, default_pool
from deskwork.utils import is_integer, to_jsonable

if TYPE_CHECKING:
    from deskwork.tools.base import Tool

__all__ = [
    "DEFAULT_SCORER_TIMEOUT",
    "Scorer",
    "contains",
    "exact",
    "json_schema",
    "regex",
    "run_scorer",
    "scorer_name",
    "tool_called",
]

Scorer = Callable[[EvalCase, Report], "Score | bool | float | Awaitable[Score | bool | float]"]

_NUMBER_PASS = 0.5


DEFAULT_SCORER_TIMEOUT = 60.0
"""Seconds a scorer may take on one case before that case's score fails (``None``: no limit)."""

_STOP_GRACE = 1.0
"""Seconds a timed-out async scorer has to stop (its ``finally`` blocks) before it is left."""


class _ScorerTimedOut(Exception):
    """The scorer outlasted its timeout (not a ``TimeoutError`` the scorer raised itself)."""


async def run_scorer(
    scorer: Any,
    case: EvalCase,
    report: Report,
    *,
    timeout: float | None = None,
    pool: ToolThreadPool | None = None,
) -> Score:
    """Call ``scorer`` and normalize its answer; a scorer that raises scores 0 with why.

    With ``timeout``, a sync scorer runs on a daemon thread of ``pool`` (default: the
    process-wide one) and an async one in a task of its own; one that outlasts ``timeout``
    seconds scores 0 ("scorer timed out after ...s"): an async scorer is cancelled, a sync
    one is left to finish on its thread (Python cannot stop a thread), its answer dropped.
    """
    name = scorer_name(scorer)
    try:
        if timeout is None:
            result = scorer(case, report)
            if inspect.isawaitable(result):
                result = await result
        else:
            result = await _call_within(scorer, case, report, timeout, pool)
    except _ScorerTimedOut:
        why = f"scorer timed out after {timeout:g}s"
        return Score(name=name, value=0.0, passed=False, reason=why)
    except (Exception, asyncio.CancelledError) as exc:  # a broken scorer fails its case
        if isinstance(exc, asyncio.CancelledError):
            if task_cancelling():
                raise  # the eval is cancelled, not just something the scorer awaited
            why = "CancelledError: something it awaited was cancelled"
        else:
            why = describe_exception(exc)
        return Score(name=name, value=0.0, passed=False, reason=f"scorer raised {why}")
    return _normalize(name, result)


async def _call_within(
    scorer: Any, case: EvalCase, report: Report, timeout: float, pool: ToolThreadPool | None
) -> Any:
    """``scorer(case, report)`` (awaited if it returns an awaitable), or ``_ScorerTimedOut``
    once ``timeout`` seconds have passed: it never runs on the loop's thread, where a sync
    scorer that blocks would hold every case (and the timeout) with it."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    if _is_async(scorer):
        result: Any = scorer(case, report)
    else:
        threads = pool or default_pool()
        threaded = threads.start(functools.partial(scorer, case, report))
        try:
            result = await _within(threaded, timeout)
        finally:
            if threaded.cancelled():
                threads.abandon(threaded)  # it runs on; nobody waits for it
    if inspect.isawaitable(result):
        result = await _within(asyncio.ensure_future(result), deadline - loop.time())
    return result


def _is_async(scorer: Any) -> bool:
    """Whether calling ``scorer`` only makes a coroutine (an ``async def``, or an object
    whose ``__call__`` is one): it is then awaited on the loop, not started on a thread."""
    call = getattr(type(scorer), "__call__", None)  # noqa: B004 - the method, not callable()
    return inspect.iscoroutinefunction(scorer) or inspect.iscoroutinefunction(call)


async def _within(task: asyncio.Future[Any], timeout: float) -> Any:
    """``task``'s result, or ``_ScorerTimedOut`` after ``timeout`` seconds (the task is
    then cancelled, and given :data:`_STOP_GRACE` seconds to stop)."""
    try:
        done, _ = await asyncio.wait({task}, timeout=max(timeout, 0.0))
    except asyncio.CancelledError:  # the eval is cancelled: so is the scorer
        task.cancel()
        raise
    if task in done:
        return task.result()
    task.cancel()
    await asyncio.wait({task}, timeout=_STOP_GRACE)
    task.add_done_callback(_retrieve)
    raise _ScorerTimedOut


def _retrieve(task: asyncio.Future[Any]) -> None:
    """Take what a stopped scorer ended with, so asyncio does not log it as unhandled."""
    if not task.cancelled():
        task.exception()


def _normalize(name: str, result: Any) -> Score:
    result = _plain_scalar(result)
    if isinstance(result, Score):  # its reason is printed (the table, CI logs): no secrets
        reason = None if result.reason is None else redact_text(result.reason)
        return result.model_copy(update={"name": name, "reason": reason})
    if isinstance(result, bool):
        return Score(name=name, value=float(result), passed=result)
    if isinstance(result, int | float) and 0.0 <= float(result) <= 1.0:
        return Score(name=name, value=float(result), passed=float(result) >= _NUMBER_PASS)
    return Score(
        name=name,
        value=0.0,
        passed=False,
        reason=f"scorer returned {_short(result)}; expected a Score, a bool or a number in [0, 1]",
    )


def _plain_scalar(result: Any) -> Any:
    """A NumPy (or PyTorch) scalar as the Python bool or number it holds: ``np.isclose(...)``
    is a ``numpy.bool_``, not a ``bool``, and ``np.float32`` is no ``float``."""
    if isinstance(result, Score | bool | int | float) or getattr(result, "shape", None) != ():
        return result
    item = getattr(result, "item", None)
    try:
        return item() if callable(item) else result
    except Exception:  # not a scalar after all: judged as returned
        return result


def _verdict(name: str, ok: bool, reason: str) -> Score:
    return Score(name=name, value=1.0 if ok else 0.0, passed=ok, reason=None if ok else reason)


class exact:  # lowercase: used like a function, exact()
    """The output equals ``case.expected`` (text compared without surrounding whitespace)."""

    name = "exact"

    def __init__(self, *, ignore_case: bool = False, name: str | None = None) -> None:
        self.ignore_case = ignore_case
        self.name = _own_name(name, self.name)

    def __call__(self, case: EvalCase, report: Report) -> Score:
        if case.expected is None:
            return _verdict(self.name, False, "the case has no expected output")
        expected, actual = to_jsonable(case.expected), output_of(report)
        if isinstance(expected, str):
            left, right = expected.strip(), as_text(actual).strip()
            if self.ignore_case:
                left, right = left.casefold(), right.casefold()
            ok = left == right
        else:
            ok = expected == actual
        return _verdict(self.name, ok, f"expected {_short(expected)}, got {_short(actual)}")


class contains:
    """The output text contains ``text`` (default: ``case.expected``)."""

    name = "contains"

    def __init__(
        self, text: str | None = None, *, ignore_case: bool = True, name: str | None = None
    ) -> None:
        self.name = _own_name(name, self.name)
        if text is not None and (not isinstance(text, str) or not text):
            raise ConfigurationError(f"contains: text must be a non-empty string, not {text!r}")
        self.text = text
        self.ignore_case = ignore_case

    def __call__(self, case: EvalCase, report: Report) -> Score:
        needle = self.text if self.text is not None else case.expected
        if not isinstance(needle, str) or not needle:
            return _verdict(self.name, False, "no text to look for (give text= or expected=)")
        actual = as_text(output_of(report))
        hay, pin = (actual.casefold(), needle.casefold()) if self.ignore_case else (actual, needle)
        return _verdict(self.name, pin in hay, f"{needle!r} not in {_short(actual)}")


class regex:
    """The output text matches ``pattern`` (``re.search``; default: ``case.expected``)."""

    name = "regex"

    def __init__(
        self, pattern: str | None = None, *, flags: int = 0, name: str | None = None
    ) -> None:
        self.name = _own_name(name, self.name)
        self.pattern = pattern
        self.flags = flags
        if pattern is not None:
            re.compile(pattern, flags)  # a bad pattern fails here, not in every case

    def __call__(self, case: EvalCase, report: Report) -> Score:
        pattern = self.pattern if self.pattern is not None else case.expected
        if not isinstance(pattern, str):
            return _verdict(self.name, False, "no pattern (give pattern= or expected=)")
        actual = as_text(output_of(report))
        ok = re.search(pattern, actual, self.flags) is not None
        return _verdict(self.name, ok, f"/{pattern}/ does not match {_short(actual)}")


class json_schema:
    """The output is JSON valid against ``schema``: a JSON Schema dict, a Pydantic model
    class or a ``TypeAdapter``. Structured ``data`` is checked as is; text is parsed first."""

    name = "json_schema"

    def __init__(
        self,
        schema: dict[str, Any] | type[BaseModel] | TypeAdapter[Any],
        *,
        name: str | None = None,
    ) -> None:
        self.name = _own_name(name, self.name)
        self.schema = schema
        self._adapter: TypeAdapter[Any] | None = None
        if isinstance(schema, dict):
            jsonschema = require("jsonschema", "testing")
            jsonschema.validators.validator_for(schema).check_schema(schema)
        elif isinstance(schema, TypeAdapter):
            self._adapter = schema
        else:  # built once, and a type Pydantic cannot validate fails here, not in every case
            try:
                self._adapter = TypeAdapter(schema)
            except Exception as exc:
                raise ConfigurationError(f"json_schema: cannot validate {schema!r}") from exc

    def __call__(self, case: EvalCase, report: Report) -> Score:
        value = output_of(report)
        if isinstance(value, str):
            try:
                value = json.loads(value)
            except json.JSONDecodeError as exc:
                return _verdict(self.name, False, f"output is not JSON ({exc})")
        problem = self._problem(value)
        return _verdict(self.name, problem is None, problem or "")

    def _problem(self, value: Any) -> str | None:
        if self._adapter is not None:
            try:
                self._adapter.validate_python(value)
            except ValidationError as exc:
                return "; ".join(e["msg"] for e in exc.errors()[:3])
            return None
        schema = self.schema  # a JSON Schema dict
        jsonschema = require("jsonschema", "testing")
        errors = sorted(
            jsonschema.validators.validator_for(schema)(schema).iter_errors(value),
            key=lambda e: list(e.path),
        )
        return "; ".join(e.message for e in errors[:3]) or None


class tool_called:
    """The run called tool ``tool`` (a name, or the ``Tool`` itself; at least ``times``
    times; with ``arguments``: calls whose arguments include those items; with
    ``succeeded``: calls that did not fail)."""

    def __init__(
        self,
        tool: str | Tool,
        *,
        arguments: dict[str, Any] | None = None,
        times: int = 1,
        succeeded: bool = False,
        name: str | None = None,
    ) -> None:
        if not is_integer(times) or times < 1:
            raise ConfigurationError(f"tool_called: times must be an int >= 1, not {times!r}")
        if arguments is not None and not isinstance(arguments, Mapping):
            raise ConfigurationError(
                f"tool_called: arguments must be a dict of argument values, not {arguments!r}"
            )
        self.tool = _tool_name(tool)
        self.arguments = arguments
        self.times = times
        self.succeeded = succeeded
        self.name = _own_name(name, f"tool_called:{self.tool}")

    def __call__(self, case: EvalCase, report: Report) -> Score:
        count = max(self._from_calls(report), self._from_events(report))
        ok = count >= self.times
        what = f" with {self.arguments}" if self.arguments else ""
        return _verdict(self.name, ok, f"{self.tool}{what} called {count}x, wanted {self.times}")

    def _from_calls(self, report: Report) -> int:
        count = 0
        for call in report.tool_calls:
            if call.name != self.tool:
                continue
            if self.arguments and any(
                call.arguments.get(k) != v for k, v in self.arguments.items()
            ):
                continue
            if self.succeeded and (call.result is None or call.result.error is not None):
                continue
            count += 1
        return count

    def _from_events(self, report: Report) -> int:
        """Members of workforces and flows report their calls as events of the same run."""
        if self.arguments:
            return 0  # events carry no arguments
        wanted = EventType.TOOL_COMPLETED if self.succeeded else EventType.TOOL_STARTED
        return sum(1 for e in report.events if e.type == wanted and e.source == self.tool)


def _own_name(name: Any, default: str) -> str:
    """The ``name=`` a built-in scorer was given (to tell two of a kind apart), or its own."""
    if name is None:
        return default
    if not isinstance(name, str) or not name.strip():
        raise ConfigurationError(f"a scorer's name must be a non-empty string, not {name!r}")
    return name


def _tool_name(tool: Any) -> str:
    """The name a run's calls of ``tool`` carry (a ``Tool`` is matched by its name)."""
    from deskwork.tools.base import Tool

    name = tool.name if isinstance(tool, Tool) else tool
    if not isinstance(name, str) or not name.strip():
        raise ConfigurationError(f"tool_called: tool must be a tool name or a Tool, not {tool!r}")
    return name


def _short(value: Any, limit: int = 80) -> str:
    """``value`` as a reason shows it: secrets redacted before it is cut (a cut key would
    not be recognized), at most ``limit`` characters."""
    text = repr(value) if not isinstance(value, str) else repr(" ".join(value.split()))
    return redacted_preview(text, limit)
