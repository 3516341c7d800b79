"""The one place tools run: hooks, validation, timeout, retries, cancellation, output checks.

``aexecute_tool`` never raises into the caller: every failure becomes ``ToolResult.error``,
a tool's ``SystemExit`` (``sys.exit()``, argparse) too. A ``KeyboardInterrupt`` is not a
failure of the tool: it goes on up and stops the run.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import inspect
import json
from collections.abc import Awaitable, Callable, Coroutine
from types import CoroutineType
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ValidationError

from deskwork._aio import task_cancelling
from deskwork._sync import call_off_loop, run_sync, sync_call_alone
from deskwork.core._model import trusted
from deskwork.core.redact import describe_exception, exception_text, redact_text
from deskwork.core.tool_call import ToolCall, ToolResult
from deskwork.exceptions import ToolValidationError
from deskwork.tools._pool import ToolThreadPool, default_pool
from deskwork.tools._step_hook import tool_step_hook
from deskwork.tools.base import Tool, output_adapter
from deskwork.utils import nan_as_null, to_jsonable

if TYPE_CHECKING:  # asyncio is imported by the first tool call, not with deskwork
    import asyncio

__all__ = ["RetryListener", "aexecute_tool", "execute_tool", "tool_result_from_value"]

RetryListener = Callable[[int, float, ToolResult], None]
"""Told of each failed attempt of a call that will be retried: the attempt's number (1 for
the first), the seconds to wait before the next, and the attempt's failed result."""


async def aexecute_tool(
    tool: Tool,
    call: ToolCall,
    *,
    cancel_event: asyncio.Event | None = None,
    pool: ToolThreadPool | None = None,
    on_retry: RetryListener | None = None,
) -> ToolResult:
    """Run ``tool`` for ``call`` and return its result.

    An ``async def`` tool runs on the event loop; a plain ``def`` tool runs on a daemon thread
    of ``pool`` (the desk's, else a process-wide one), so it never blocks the loop. One
    exception, where no loop can be blocked: called through a sync API (``desk.run``) whose
    loop runs nothing but this call, a sync tool without a timeout runs on the calling thread
    (no thread hand-off; nested sync calls still work). A sync tool declared
    ``@tool(blocking=False)`` always runs on the loop's thread the same way. A sync tool that
    returns a coroutine (an ``async def`` behind a decorator that hides it) has it awaited as
    an async tool's call is, with the tool's timeout (in its own process under
    ``isolation="process"``); one returned after its call timed out or was cancelled is closed.

    The pre-hooks run before the call and the post-hooks after it; a tool with ``retries``
    runs both around each attempt (the pre-hooks again before each retry, so they can count
    attempts). A pre-hook that raises prevents the call (its error is the result, which the
    post-hooks see); a post-hook that raises fails the call, and neither is retried.

    What a timeout (or ``cancel_event``) can and cannot stop:

    - an async tool is cancelled: ``CancelledError`` is raised at its current ``await``, so it
      stops there. One that catches and ignores the cancellation runs on, its result
      discarded: the call still ends ``timed_out``/``cancelled``, at most ``CANCEL_GRACE``
      (1 s) later;
    - a sync tool cannot be stopped (Python cannot kill a thread): the call returns a
      ``timed_out``/``cancelled`` result at once and the function keeps running on its daemon
      thread until it returns; its result is discarded. It does not hold the pool's slot, nor
      ``desk.close()``, nor interpreter exit. A sync tool with side effects that must not
      happen late should check a deadline itself, be written ``async``, or take
      ``@tool(isolation="process")``;
    - a sync tool with ``isolation="process"`` runs in its own process, which is killed.

    Args:
        tool: the tool to run.
        call: the model's request (its ``arguments`` are validated first).
        cancel_event: when set while the tool runs, the tool is cancelled; when already set,
            the tool is not called (a retry is not started once it is set).
        pool: the thread pool for sync tools (default: the process-wide pool).
        on_retry: called with each failed attempt that a tool with ``retries`` will retry
            (its number, the wait before the next, its result: a worker run emits
            ``tool.retry``), before the wait; not called for the last attempt, nor for a
            call that succeeds at once. What it raises goes up to the caller.
    """
    hook = tool_step_hook.get()
    if hook is not None:  # a durable run: the whole call is one checkpointed step
        return await hook(tool, call, lambda: _execute(tool, call, cancel_event, pool, on_retry))
    return await _execute(tool, call, cancel_event, pool, on_retry)


async def _execute(
    tool: Tool,
    call: ToolCall,
    cancel_event: asyncio.Event | None,
    pool: ToolThreadPool | None,
    on_retry: RetryListener | None = None,
) -> ToolResult:
    # no coroutine for what a call does not use (hooks, retries): each costs ~0.5 us
    failure = await _run_pre_hooks(tool, call) if tool.pre else None
    if failure is not None:
        return await _run_post_hooks(tool, call, failure)
    try:
        arguments = _validate(tool, call)
    except ToolValidationError as exc:
        result = _error(str(exc), exc)
    else:
        if tool.retries:  # the hooks run around each attempt
            return await _call_with_retries(tool, call, arguments, cancel_event, pool, on_retry)
        result = await _call_once(tool, arguments, cancel_event, pool)
    return await _run_post_hooks(tool, call, result) if tool.post else result


def execute_tool(tool: Tool, call: ToolCall) -> ToolResult:
    """Synchronous :func:`aexecute_tool`."""
    return run_sync(aexecute_tool(tool, call), api="execute_tool")


async def _maybe_await(value: Any) -> Any:
    if inspect.isawaitable(value):
        return await value
    return value


async def _run_pre_hooks(tool: Tool, call: ToolCall) -> ToolResult | None:
    for hook in tool.pre:
        try:
            await _maybe_await(hook(call))
        except BaseException as exc:
            if not _failed_on_its_own(exc):
                raise
            return _error(f"pre-hook {_name(hook)} failed: {_hook_text(exc)}", exc)
    return None


async def _run_post_hooks(tool: Tool, call: ToolCall, result: ToolResult) -> ToolResult:
    failure = await _post_hook_failure(tool, call, result)
    return result if failure is None else failure


async def _post_hook_failure(tool: Tool, call: ToolCall, result: ToolResult) -> ToolResult | None:
    """Run the post-hooks; the failed result if one raised, else ``None``."""
    for hook in tool.post:
        try:
            await _maybe_await(hook(call, result))
        except BaseException as exc:
            if not _failed_on_its_own(exc):
                raise
            return result.model_copy(
                update={
                    "error": f"post-hook {_name(hook)} failed: {_hook_text(exc)}",
                    "exception_type": type(exc).__name__,
                    "original_exception": exc,
                }
            )
    return None


AWAITED_CANCELLED = "CancelledError: something it awaited was cancelled"


def _failed_on_its_own(exc: BaseException) -> bool:
    """Whether a hook's (or tool's) ``exc`` is its own failure: an exception, ``sys.exit()``,
    or a ``CancelledError`` of something it awaited that another cancelled while the call
    itself is not cancelled; not an interrupt, nor the cancellation of the call."""
    if isinstance(exc, Exception | SystemExit):
        return True
    import asyncio

    return isinstance(exc, asyncio.CancelledError) and not task_cancelling()


def _hook_text(exc: BaseException) -> str:
    import asyncio

    return AWAITED_CANCELLED if isinstance(exc, asyncio.CancelledError) else exception_text(exc)


def _validate(tool: Tool, call: ToolCall) -> dict[str, Any]:
    if call.error:
        raise ToolValidationError(
            f"invalid arguments for tool {tool.name!r}: {call.error}", tool_name=tool.name
        )
    try:
        model = tool.input_model.model_validate(call.arguments)
    except ValidationError as exc:
        details = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or '<root>'}: {err['msg']}"
            for err in exc.errors()
        )
        raise ToolValidationError(
            f"invalid arguments for tool {tool.name!r}: {details}", tool_name=tool.name
        ) from exc
    except Exception as exc:  # a validator's TypeError (pydantic wraps only ValueError)
        raise ToolValidationError(
            f"invalid arguments for tool {tool.name!r}: {describe_exception(exc)}",
            tool_name=tool.name,
        ) from exc
    return model.__dict__.copy()  # a validated model's __dict__ holds its fields, only them


async def _call_with_retries(
    tool: Tool,
    call: ToolCall,
    arguments: dict[str, Any],
    cancel_event: asyncio.Event | None,
    pool: ToolThreadPool | None,
    on_retry: RetryListener | None,
) -> ToolResult:
    """Call the tool until it succeeds, up to ``1 + tool.retries`` times, with backoff.

    The post-hooks see each attempt's result and the pre-hooks run again before each retry
    (the first attempt's ran before validation). A hook that raises ends the call with its
    failure: no further attempt. ``cancel_event`` set during the wait between attempts ends
    the wait: the call's result is then the cancelled one, and no pre-hook runs for it.
    ``on_retry`` hears of each failed attempt that is retried, before the wait.
    """
    attempt = 0
    while True:
        result = await _call_once(tool, arguments, cancel_event, pool)
        hook_failure = await _post_hook_failure(tool, call, result) if tool.post else None
        if hook_failure is not None:
            return hook_failure
        if result.error is None or result.cancelled or attempt >= tool.retries:
            return result
        # 2**1024 is past a float: the doubling stops at 2**64 (a retry_delay of 0.0 retries
        # at once, however many retries)
        wait = tool.retry_delay * 2 ** min(attempt, 64)
        if on_retry is not None:
            on_retry(attempt + 1, wait, result)
        await _backoff(wait, cancel_event)
        attempt += 1
        if cancel_event is not None and cancel_event.is_set():
            continue  # _call_once answers cancelled, for an attempt that never starts
        failure = await _run_pre_hooks(tool, call) if tool.pre else None
        if failure is not None:
            return await _run_post_hooks(tool, call, failure)


async def _backoff(seconds: float, cancel_event: asyncio.Event | None) -> None:
    """Wait ``seconds`` before a retry, or until ``cancel_event`` is set."""
    import asyncio

    if cancel_event is None:
        await asyncio.sleep(seconds)
        return
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(cancel_event.wait(), seconds)


async def _call_once(
    tool: Tool,
    arguments: dict[str, Any],
    cancel_event: asyncio.Event | None,
    pool: ToolThreadPool | None,
) -> ToolResult:
    import asyncio

    if cancel_event is not None and cancel_event.is_set():  # cancelled before it started
        return _error("tool execution cancelled", asyncio.CancelledError(), cancelled=True)
    threaded: asyncio.Future[Any] | None = None
    task: asyncio.Future[Any] | None = None
    try:
        if inspect.iscoroutinefunction(tool.callable):
            # the loop's create_task: ensure_future's checks cost as much as _no_exit's coroutine
            task = asyncio.get_running_loop().create_task(
                _no_exit(tool, tool.callable(**arguments))
            )
        elif tool.isolation == "process":  # killed when it times out or is cancelled
            from deskwork.tools._process import call_in_process

            task = asyncio.ensure_future(_no_exit(tool, call_in_process(tool.callable, arguments)))
        elif not tool.blocking or (
            tool.timeout is None and cancel_event is None and sync_call_alone()
        ):  # declared quick, or a sync API's own loop running nothing but this call
            value = call_off_loop(functools.partial(tool.callable, **arguments))
        else:  # a sync tool never runs on the thread of a loop that others use
            task = threaded = (pool or default_pool()).start(
                functools.partial(tool.callable, **arguments)
            )
        if task is not None and tool.timeout is None and cancel_event is None:
            value = await task  # as asyncio.wait_for(task, None) would, one coroutine less
        elif task is not None:
            value = await _await_task(task, tool.timeout, cancel_event)
        if type(value) is CoroutineType:  # a def returning one: an async def behind a decorator
            value = await _await_returned(tool, value, cancel_event)
    except _CallTimedOut:  # (a TimeoutError the tool raised is its own failure)
        message = f"tool {tool.name!r} timed out after {tool.timeout}s"
        return _error(message, TimeoutError(message), timed_out=True)  # a TimeoutError, as ever
    except asyncio.CancelledError as exc:
        if cancel_event is not None and cancel_event.is_set():
            return _error("tool execution cancelled", exc, cancelled=True)
        if task_cancelling():  # the caller (the run) is cancelled
            raise
        return _error(AWAITED_CANCELLED, exc)  # what the tool awaited was cancelled by another
    except Exception as exc:
        return _error(describe_exception(exc), exc)
    except SystemExit as exc:  # a sync tool's sys.exit() (argparse): the call failed
        return _exited(tool, exc)
    finally:
        if threaded is not None and threaded.cancelled():
            (pool or default_pool()).abandon(threaded)  # it runs on; nobody waits for it
    return tool_result_from_value(tool, value)


async def _await_returned(
    tool: Tool, coroutine: Coroutine[Any, Any, Any], cancel_event: asyncio.Event | None
) -> Any:
    """What the coroutine a sync tool returned gives, awaited as an async tool's call is
    (its own task, the tool's timeout, ``cancel_event``)."""
    import asyncio

    task = asyncio.ensure_future(_no_exit(tool, coroutine))
    if tool.timeout is None and cancel_event is None:
        return await task
    return await _await_task(task, tool.timeout, cancel_event)


async def _no_exit(tool: Tool, call: Awaitable[Any]) -> Any:
    """``await call``, a ``SystemExit`` it raises (``sys.exit()``, argparse) made the tool's
    failure: raised in a task, it would leave the event loop and end the run (or the program)."""
    try:
        return await call
    except SystemExit as exc:
        return _exited(tool, exc)


def _exited(tool: Tool, exc: SystemExit) -> ToolResult:
    return _error(
        f"tool {tool.name!r} raised SystemExit({exc.code!r}) (sys.exit or argparse):"
        " a tool call cannot end the program",
        exc,
    )


async def _await_task(
    task: asyncio.Future[Any], timeout: float | None, cancel_event: asyncio.Event | None
) -> Any:
    """``task``'s result, or ``_CallTimedOut`` / ``CancelledError`` once ``timeout`` passes or
    ``cancel_event`` is set. The task is then cancelled and given :data:`CANCEL_GRACE` seconds
    to stop (its ``finally`` blocks, a killed process): an async tool that catches its
    cancellation and goes on does not hold the call longer (``asyncio.wait_for`` waits for it,
    and returns what it returns late as a success)."""
    import asyncio

    waiter = None if cancel_event is None else asyncio.ensure_future(cancel_event.wait())
    waited = {task} if waiter is None else {task, waiter}
    try:
        done, _ = await asyncio.wait(waited, timeout=timeout, return_when="FIRST_COMPLETED")
    except asyncio.CancelledError:  # the caller was cancelled (the run: desk.cancel, ...)
        await _stop(task)  # asyncio.wait does not cancel what it waits for
        raise
    finally:
        if waiter is not None:
            waiter.cancel()
    if task in done:
        return task.result()
    await _stop(task)
    if waiter is not None and waiter in done:
        raise asyncio.CancelledError
    raise _CallTimedOut


class _CallTimedOut(TimeoutError):
    """The call outlasted the tool's ``timeout`` (not a ``TimeoutError`` the tool raised: a
    socket's, which was reported as "timed out after Nones")."""


CANCEL_GRACE = 1.0
"""Seconds a timed-out or cancelled async call has to stop before it is left to run on."""


async def _stop(task: asyncio.Future[Any]) -> None:
    """Cancel ``task`` and give it :data:`CANCEL_GRACE` seconds to stop: its ``finally``
    blocks run before the caller goes on (a run that ended while its tool cleaned up could
    close the loop under it), and one that ignores its cancellation is left to run on."""
    import asyncio

    task.cancel()
    await asyncio.wait({task}, timeout=CANCEL_GRACE)
    task.add_done_callback(_drop_outcome)


def _drop_outcome(task: asyncio.Future[Any]) -> None:
    """Retrieve what a stopped call ended with, so asyncio does not log it as unhandled."""
    if not task.cancelled():
        task.exception()


def tool_result_from_value(tool: Tool, value: Any) -> ToolResult:
    """Convert what a tool returned into a ToolResult (validating ``output_type``).

    Never raises: a value that cannot be made the model's text (one that contains itself, a
    ``__str__`` that raises) is the call's error.
    """
    try:
        if isinstance(value, ToolResult):
            return value
        if tool.output_type is not None:
            try:
                value = output_adapter(tool.output_type).validate_python(value)
            except ValidationError as exc:
                return _error(f"tool {tool.name!r} returned invalid output: {exc}", exc)
            return _json_result(to_jsonable(value))
        if value is None:
            return _result({"content": ""})
        if type(value) is str:
            return _result({"content": value})
        if isinstance(value, str):
            return ToolResult(content=value)
        if isinstance(value, _JSON_VALUES) or (
            dataclasses.is_dataclass(value) and not isinstance(value, type)
        ):
            return _json_result(to_jsonable(value))
        return ToolResult(content=str(value), data=value)
    except RecursionError as exc:  # a value that contains itself, or nests about 1,000 deep
        return ToolResult(
            error=f"tool {tool.name!r} returned a value that cannot be given to the model: it"
            " contains itself or nests too deeply (RecursionError)",
            exception_type="ToolResultTooDeep",
            original_exception=exc,
        )
    except Exception as exc:  # what a __str__ or a dump raised
        return _error(
            f"tool {tool.name!r} returned a value that cannot be given to the model:"
            f" {describe_exception(exc)}",
            exc,
        )


_JSON_VALUES = (BaseModel, dict, list, tuple, int, float, bool)
"""Returned values the model sees as JSON (a union built per call cost ~1.5 us)."""
_to_json = json.JSONEncoder(default=str, allow_nan=False).encode
"""``json.dumps(data, default=str, allow_nan=False)`` without a new encoder per call."""


def _json_result(data: Any) -> ToolResult:
    try:
        text = _to_json(data)
    except ValueError:  # NaN or an infinity, bare in JSON text (invalid): null, as pydantic writes
        text = _to_json(nan_as_null(data))
    return _result({"content": text, "data": data})


_RESULT_DEFAULTS = {name: field.default for name, field in ToolResult.model_fields.items()}


def _result(named: dict[str, Any]) -> ToolResult:
    """``ToolResult(**named)`` of a text ``content`` and any ``data`` (a field of any type),
    built without validation, which would only copy them (~9k instructions a call)."""
    return trusted(ToolResult, {**_RESULT_DEFAULTS, **named}, set(named))


def _error(
    message: str, exc: BaseException, *, timed_out: bool = False, cancelled: bool = False
) -> ToolResult:
    """A failed result; ``message`` (often an exception's text) is redacted here, as the
    model, the report and event listeners all see it (a tool's own return value is not)."""
    return ToolResult(
        error=redact_text(message),
        exception_type=type(exc).__name__,
        original_exception=exc,
        timed_out=timed_out,
        cancelled=cancelled,
    )


def _name(hook: Any) -> str:
    return getattr(hook, "__qualname__", None) or getattr(hook, "__name__", None) or repr(hook)
