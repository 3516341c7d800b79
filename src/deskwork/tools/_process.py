"""Killable sync tools: ``@tool(isolation="process")`` runs each call in its own process.

A thread cannot be stopped, a process can: when such a call times out or is cancelled, its
process is killed at once (its side effects stop there), and on POSIX so are the processes it
started (it leads its own process group). A call that answers leaves what it started alone.
The price is a process start per call (a fresh interpreter, ``spawn``) and picklable arguments
and results; the function must be importable by name (defined at module level, ``@tool`` or
not).
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import inspect
import multiprocessing
import os
import pickle
import signal
from collections.abc import Callable
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from types import CoroutineType
from typing import Any

from deskwork.core.redact import describe_exception, exception_text
from deskwork.exceptions import ToolExecutionError

__all__ = ["call_in_process", "importable_name"]


def importable_name(fn: Callable[..., Any]) -> tuple[str, str]:
    """``(module, qualname)`` by which a new process finds ``fn``.

    Raises:
        ValueError: ``fn`` is a lambda, is defined inside a function, has no name (a
            ``functools.partial``, a callable object) or is bound to an instance (which a new
            process cannot find by name).
    """
    module = getattr(fn, "__module__", None)
    qualname = getattr(fn, "__qualname__", "")
    if not module or not qualname or "<" in qualname:
        raise ValueError(
            f"isolation='process' needs a function defined at module level, not {qualname or fn!r}"
        )
    if inspect.ismethod(fn) and not isinstance(fn.__self__, type):  # a classmethod's is found
        raise ValueError(
            f"isolation='process' cannot call {qualname!r} bound to an instance: a new process"
            " finds functions by name, not objects; use a module-level function"
        )
    return module, qualname


def _resolve(module: str, qualname: str) -> Callable[..., Any]:
    obj: Any = importlib.import_module(module)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    inner = getattr(obj, "callable", None)  # the module attribute is the Tool @tool made
    return inner if callable(inner) else obj  # type: ignore[no-any-return]


def _child(module: str, qualname: str, arguments: dict[str, Any], conn: Connection) -> None:
    if hasattr(os, "setpgid"):  # POSIX: the processes the tool starts share its kill
        with contextlib.suppress(OSError):  # refused (a sandbox): killed alone, as before
            os.setpgid(0, 0)
    try:
        value = _resolve(module, qualname)(**arguments)
        if type(value) is CoroutineType:  # a def returning one: an async def behind a decorator
            value = asyncio.run(value)  # awaited here, as on a thread; it cannot be pickled
        message: tuple[bool, Any] = (True, value)
    except BaseException as exc:  # sent to the parent, which reports it as the tool's error
        message = (False, _portable(exc))
    try:
        conn.send(message)
    except Exception as exc:  # the result or exception cannot be pickled
        error = f"cannot send the tool's result back: {exception_text(exc)}"
        conn.send((False, ToolExecutionError(error)))
    finally:
        conn.close()


def _portable(exc: BaseException) -> BaseException:
    """``exc`` if the parent can rebuild it from its pickle, else a ``ToolExecutionError`` with
    its type and text: an exception whose ``__init__`` takes several arguments (or a class
    defined in a function) would arrive as an unrelated ``TypeError`` or not at all."""
    try:
        pickle.loads(pickle.dumps(exc))
    except Exception:
        return ToolExecutionError(describe_exception(exc))
    return exc


async def call_in_process(fn: Callable[..., Any], arguments: dict[str, Any]) -> Any:
    """``fn(**arguments)`` in a new process; cancelling this coroutine kills the process.

    Raises:
        ValueError: ``fn`` cannot be found by name in a new process.
        ToolExecutionError: the process died without an answer.
        Exception: whatever ``fn`` raised.
    """
    module, qualname = importable_name(fn)
    multiprocessing.active_children()  # reap processes of earlier calls
    context = multiprocessing.get_context("spawn")
    receiver, sender = context.Pipe(duplex=False)
    process = context.Process(
        target=_child,
        args=(module, qualname, arguments, sender),
        name=f"deskwork-tool:{qualname}",
        daemon=True,
    )
    answered = False
    try:
        process.start()
        sender.close()
        await _readable(receiver)
        answered = True  # (or its process ended): what it started is its own business
        try:
            ok, value = receiver.recv()
        except EOFError:
            process.join(1)
            raise ToolExecutionError(
                f"the process of tool function {qualname!r} exited (code {process.exitcode})"
                " without an answer"
            ) from None
        except Exception as exc:  # it arrived, but cannot be rebuilt in this process
            raise ToolExecutionError(
                f"cannot read the result of tool function {qualname!r} back:"
                f" {describe_exception(exc)}"
            ) from None
    finally:
        receiver.close()
        if process.is_alive() and not answered:
            _kill_group(process)  # timed out or cancelled: stop the work for real
        if process.is_alive():
            process.kill()
    if not ok:
        raise value
    return value


def _kill_group(process: BaseProcess) -> None:
    """On POSIX, kill the process group of a call that did not answer: its process and the
    processes it started (a ``subprocess`` the tool runs would go on working after its parent
    was killed). No group of that id yet (the call has not reached ``setpgid``): nothing."""
    if hasattr(os, "killpg"):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)  # type: ignore[arg-type]  # it started


async def _readable(conn: Connection) -> None:
    loop = asyncio.get_running_loop()
    ready: asyncio.Future[None] = loop.create_future()

    def wake() -> None:
        if not ready.done():
            ready.set_result(None)

    try:
        loop.add_reader(conn.fileno(), wake)
    except NotImplementedError:  # an event loop without reader callbacks (Windows proactor)
        while not await asyncio.to_thread(conn.poll, 0.05):
            pass
        return
    try:
        await ready
    finally:
        loop.remove_reader(conn.fileno())
