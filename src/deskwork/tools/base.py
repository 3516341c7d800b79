"""Tools: typed Python callables the model can call.

``@tool`` reads the function's type hints to build a Pydantic input model (used to
validate arguments) and the JSON schema sent to the model.
"""

from __future__ import annotations

import functools
import inspect
import re
from collections.abc import Callable
from typing import Any, Literal, get_type_hints, overload

from pydantic import BaseModel, ConfigDict, create_model

from deskwork.core.tool_call import ToolCall, ToolResult
from deskwork.exceptions import ConfigurationError

__all__ = ["Tool", "ToolPostHook", "ToolPreHook", "ToolResult", "tool"]

ToolPreHook = Callable[[ToolCall], Any]
ToolPostHook = Callable[[ToolCall, ToolResult], Any]

DEFAULT_INPUT_KEY = "user_input"
_TOOL_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")
"""The tool names every provider accepts (OpenAI's and Anthropic's pattern)."""
Isolation = Literal["thread", "process"]


class Tool:
    """A callable plus everything the runtime needs to offer it to a model and run it."""

    __slots__ = (
        "blocking",
        "callable",
        "confirmation_prompt",
        "description",
        "external_execution",
        "input_key",
        "input_model",
        "isolation",
        "metadata",
        "name",
        "output_type",
        "post",
        "pre",
        "requires_confirmation",
        "requires_handoff",
        "requires_user_input",
        "retries",
        "retry_delay",
        "schema",
        "timeout",
        "user_input_prompt",
    )

    def __init__(
        self,
        *,
        name: str,
        description: str,
        callable: Callable[..., Any],
        input_model: type[BaseModel],
        schema: dict[str, Any] | None = None,
        requires_confirmation: bool = False,
        requires_user_input: bool = False,
        requires_handoff: bool = False,
        external_execution: bool = False,
        pre: tuple[ToolPreHook, ...] = (),
        post: tuple[ToolPostHook, ...] = (),
        confirmation_prompt: str | None = None,
        user_input_prompt: str | None = None,
        input_key: str | None = None,
        timeout: float | None = None,
        retries: int = 0,
        retry_delay: float = 1.0,
        output_type: type[Any] | None = None,
        metadata: dict[str, Any] | None = None,
        isolation: Isolation = "thread",
        blocking: bool = True,
    ) -> None:
        _check_name(name)
        if retries < 0:
            raise ValueError("retries must be >= 0")
        if not blocking:
            _check_nonblocking(callable, timeout, isolation)
        _check_isolation(isolation, callable)
        if timeout is not None and timeout <= 0:
            raise ValueError("timeout must be > 0")
        self.name = name
        self.description = description
        self.callable = callable
        self.input_model = input_model
        self.requires_confirmation = requires_confirmation
        self.requires_user_input = requires_user_input
        self.requires_handoff = requires_handoff
        self.external_execution = external_execution
        self.pre = tuple(pre)
        self.post = tuple(post)
        self.confirmation_prompt = confirmation_prompt
        self.user_input_prompt = user_input_prompt
        self.input_key = input_key
        self.timeout = timeout
        self.retries = retries
        self.retry_delay = retry_delay
        self.output_type = output_type
        self.isolation: Isolation = isolation
        """Where a sync tool runs: ``"thread"`` (the desk's daemon threads) or ``"process"``
        (a new process per call, killed on timeout or cancellation)."""
        self.blocking = blocking
        """``False``: a sync tool its author declares quick and free of blocking calls (no
        I/O, no sleeps, no locks held by others) runs on the event loop's thread, without the
        hand-off to a pool thread; see :func:`tool`."""
        self.metadata = dict(metadata or {})
        self.schema = schema if schema is not None else self._derive_schema()

    @property
    def effective_input_key(self) -> str:
        """Argument that receives the user's answer for ``requires_user_input`` tools."""
        return self.input_key or DEFAULT_INPUT_KEY

    def _derive_schema(self) -> dict[str, Any]:
        schema = self.input_model.model_json_schema()
        schema.pop("title", None)
        if self.requires_user_input:
            key = self.effective_input_key
            schema.get("properties", {}).pop(key, None)
            if key in schema.get("required", []):
                schema["required"] = [r for r in schema["required"] if r != key]
        return schema

    def to_provider(self) -> dict[str, Any]:
        """The OpenAI function-tool description of this tool."""
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": self.schema,
            },
        }

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Call the underlying function directly (no validation, hooks or events)."""
        return self.callable(*args, **kwargs)

    def __repr__(self) -> str:
        return f"Tool(name={self.name!r})"


@overload
def tool(func: Callable[..., Any], /) -> Tool: ...


@overload
def tool(
    func: None = None,
    *,
    name: str | None = None,
    description: str | None = None,
    requires_confirmation: bool = False,
    requires_user_input: bool = False,
    requires_handoff: bool = False,
    external_execution: bool = False,
    pre: tuple[ToolPreHook, ...] = (),
    post: tuple[ToolPostHook, ...] = (),
    confirmation_prompt: str | None = None,
    user_input_prompt: str | None = None,
    input_key: str | None = None,
    timeout: float | None = None,
    retries: int = 0,
    retry_delay: float = 1.0,
    output_type: type[Any] | None = None,
    isolation: Isolation = "thread",
    blocking: bool = True,
) -> Callable[[Callable[..., Any]], Tool]: ...


def tool(
    func: Callable[..., Any] | None = None,
    *,
    name: str | None = None,
    description: str | None = None,
    requires_confirmation: bool = False,
    requires_user_input: bool = False,
    requires_handoff: bool = False,
    external_execution: bool = False,
    pre: tuple[ToolPreHook, ...] = (),
    post: tuple[ToolPostHook, ...] = (),
    confirmation_prompt: str | None = None,
    user_input_prompt: str | None = None,
    input_key: str | None = None,
    timeout: float | None = None,
    retries: int = 0,
    retry_delay: float = 1.0,
    output_type: type[Any] | None = None,
    isolation: Isolation = "thread",
    blocking: bool = True,
) -> Tool | Callable[[Callable[..., Any]], Tool]:
    """Turn a typed function into a :class:`Tool`. Usable as ``@tool`` or ``@tool(...)``.

    ``timeout`` (seconds) bounds each attempt. An ``async def`` tool that times out is
    cancelled at its current ``await``. A plain ``def`` tool runs on a daemon thread of the
    desk's pool and cannot be stopped (Python cannot kill a thread): the run gets a
    ``timed_out`` result at once, the function runs on until it returns and its result is
    discarded; it holds neither the pool, ``desk.close()`` nor interpreter exit. A sync tool
    that must really stop takes ``isolation="process"``: each call runs in a new process
    (module-level function, picklable arguments and result, a process start per call),
    killed on timeout or cancellation. See :func:`~deskwork.tools.aexecute_tool`.

    ``blocking=False`` declares a sync tool quick and free of blocking calls (pure computation
    on its arguments, no I/O, sleeps or contended locks): it then runs on the event loop's
    thread, as a pool thread would run it (in a copy of the run's context, with no running
    loop) but without the hand-off to that thread (~25-70 us of CPU per call). While it runs,
    nothing else on the loop does: a tool declared so that blocks stalls every run of the
    loop. It runs to completion (no ``timeout``, no ``isolation="process"``); validation,
    hooks, retries and events are unchanged.
    """

    def build(fn: Callable[..., Any]) -> Tool:
        tool_name = _check_name(name if name is not None else _callable_name(fn))
        return Tool(
            name=tool_name,
            description=description or _doc_summary(fn) or f"Call {tool_name}",
            callable=fn,
            input_model=input_model_for(fn, tool_name),
            requires_confirmation=requires_confirmation,
            requires_user_input=requires_user_input,
            requires_handoff=requires_handoff,
            external_execution=external_execution,
            pre=pre,
            post=post,
            confirmation_prompt=confirmation_prompt,
            user_input_prompt=user_input_prompt,
            input_key=input_key,
            timeout=timeout,
            retries=retries,
            retry_delay=retry_delay,
            output_type=output_type,
            isolation=isolation,
            blocking=blocking,
        )

    if func is not None:
        return build(func)
    return build


def _check_name(name: object) -> str:
    if not isinstance(name, str) or not _TOOL_NAME.fullmatch(name):
        raise ConfigurationError(
            f"invalid tool name {name!r}: providers accept 1-64 letters, digits, '_' or '-'"
            " (pass @tool(name=...))"
        )
    return name


def _callable_name(fn: Callable[..., Any]) -> str:
    if not callable(fn):
        raise ConfigurationError(f"@tool needs a function, not {type(fn).__name__}")
    name = getattr(fn, "__name__", None)
    if not isinstance(name, str):
        raise ConfigurationError(f"{fn!r} has no __name__: pass @tool(name=...)")
    return name


def _check_isolation(isolation: str, fn: Callable[..., Any]) -> None:
    if isolation not in ("thread", "process"):
        raise ValueError(f"isolation must be 'thread' or 'process', not {isolation!r}")
    if isolation == "process":
        if inspect.iscoroutinefunction(fn):
            raise ValueError("isolation='process' is for sync (def) tools; async tools cancel")
        from deskwork.tools._process import importable_name

        importable_name(fn)


def _check_nonblocking(fn: Callable[..., Any], timeout: float | None, isolation: str) -> None:
    if inspect.iscoroutinefunction(fn):
        raise ValueError("blocking=False is for sync (def) tools; async tools run on the loop")
    if timeout is not None:
        raise ValueError(
            "blocking=False runs the tool on the loop's thread: no timeout can stop it"
        )
    if isolation != "thread":
        raise ValueError("blocking=False runs the tool on the loop's thread, not with isolation")


def input_model_for(fn: Callable[..., Any], tool_name: str) -> type[BaseModel]:
    """A Pydantic model whose fields are ``fn``'s parameters (from type hints)."""
    hints = _hints(fn)
    fields: dict[str, Any] = {}
    for param in inspect.signature(fn).parameters.values():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue
        annotation = hints.get(param.name, Any)
        default = ... if param.default is param.empty else param.default
        fields[param.name] = (annotation, default)
    model_name = "".join(part.title() for part in tool_name.split("_")) + "Input"
    return create_model(model_name, __config__=ConfigDict(extra="forbid"), **fields)


def _hints(fn: Any) -> dict[str, Any]:
    """The type hints of ``fn``'s parameters, also for a ``functools.partial``, a callable
    object (its ``__call__``) or a class (its ``__init__``)."""
    if isinstance(fn, functools.partial):
        return _hints(fn.func)
    if inspect.isclass(fn):
        init = fn.__init__
        return {**get_type_hints(fn), **(get_type_hints(init) if inspect.isfunction(init) else {})}
    if not (inspect.isfunction(fn) or inspect.ismethod(fn)) and callable(fn):
        call = type(fn).__call__
        return get_type_hints(call) if inspect.isfunction(call) else {}
    return get_type_hints(fn)


def _doc_summary(fn: Callable[..., Any]) -> str | None:
    doc = inspect.getdoc(fn)
    if not doc:
        return None
    return doc.strip().split("\n\n", 1)[0].replace("\n", " ")
