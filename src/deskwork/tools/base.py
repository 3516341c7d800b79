"""Tools: typed Python callables the model can call.

``@tool`` reads the function's type hints to build a Pydantic input model (used to
validate arguments) and the JSON schema sent to the model.
"""

from __future__ import annotations

import functools
import inspect
import math
import types
import warnings
from collections.abc import Callable
from typing import Any, Literal, get_type_hints, overload

from pydantic import BaseModel, ConfigDict, TypeAdapter, create_model

from deskwork.core._tool_names import is_tool_name
from deskwork.core.tool_call import ToolCall, ToolResult
from deskwork.exceptions import ConfigurationError
from deskwork.utils import check_seconds, is_integer, is_number

__all__ = ["Tool", "ToolPostHook", "ToolPreHook", "ToolResult", "tool"]

ToolPreHook = Callable[[ToolCall], Any]
ToolPostHook = Callable[[ToolCall, ToolResult], Any]

DEFAULT_INPUT_KEY = "user_input"
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
        callable = _awaitable_call(callable)
        if inspect.isgeneratorfunction(callable) or inspect.isasyncgenfunction(callable):
            raise ConfigurationError(
                f"tool {name!r} is a generator function: a tool returns its result"
            )
        if not isinstance(description, str):
            raise ConfigurationError(
                f"tool {name!r}: description must be text, not {description!r}"
            )
        _check_options(timeout, retries, retry_delay, output_type)
        if not blocking:
            _check_nonblocking(callable, timeout, isolation)
        _check_isolation(isolation, callable)
        self.name = name
        self.description = description
        self.callable = callable
        self.input_model = input_model
        self.requires_confirmation = requires_confirmation
        self.requires_user_input = requires_user_input
        self.requires_handoff = requires_handoff
        self.external_execution = external_execution
        self.pre = _hooks("pre", pre)
        self.post = _hooks("post", post)
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
        if input_key is not None and input_key not in input_model.model_fields:
            raise ConfigurationError(
                f"tool {name!r}: input_key {input_key!r} is not one of its parameters"
                f" ({', '.join(input_model.model_fields) or 'none'}); the answer would be refused"
            )
        self.schema = schema if schema is not None else self._derive_schema()

    @property
    def effective_input_key(self) -> str:
        """Argument that receives the user's answer for ``requires_user_input`` tools."""
        return self.input_key or DEFAULT_INPUT_KEY

    def _derive_schema(self) -> dict[str, Any]:
        try:
            schema = self.input_model.model_json_schema()
        except Exception as exc:  # e.g. a Callable parameter: validated, but no JSON for it
            raise ConfigurationError(
                f"tool {self.name!r}: no JSON schema for its parameters: {exc}"
            ) from exc
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

    ``requires_user_input=True`` pauses the run at each call until a person answers
    (``desk.resume(report, answer)``). The answer is passed to the parameter named
    ``input_key`` (default ``user_input``), which the model is not asked for. A function
    without such a parameter (``def ask(question: str) -> str``) is not called: the answer
    is the call's result.

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


def _awaitable_call(fn: Callable[..., Any]) -> Callable[..., Any]:
    """An object whose ``__call__`` is ``async def`` as its bound ``__call__``: the runtime
    awaits what ``inspect.iscoroutinefunction`` recognises, and the object is not (its call's
    coroutine would be the tool's result, never run)."""
    call = inspect.getattr_static(type(fn), "__call__", None)
    if inspect.iscoroutinefunction(call) and not inspect.iscoroutinefunction(fn):
        return types.MethodType(call, fn)
    return fn


def _check_name(name: object) -> str:
    if not is_tool_name(name):
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


def _check_options(
    timeout: float | None, retries: int, retry_delay: float, output_type: type[Any] | None
) -> None:
    """``ConfigurationError`` (a ``ValueError``) for options a call could not use."""
    check_seconds(timeout, "timeout")
    if not is_integer(retries) or retries < 0:
        raise ConfigurationError(f"retries must be an int >= 0, not {retries!r}")
    if not (is_number(retry_delay) and 0 <= retry_delay < math.inf):  # inf: a hung retry
        raise ConfigurationError(
            f"retry_delay must be a finite number of seconds >= 0, not {retry_delay!r}"
        )
    if output_type is not None:
        try:
            output_adapter(output_type)
        except Exception as exc:
            raise ConfigurationError(f"output_type {output_type!r} cannot be validated") from exc


def output_adapter(output_type: Any) -> TypeAdapter[Any]:
    """The validator of a tool's ``output_type``: built once per type (the one its
    definition checked), not on every call (80 us for ``str``, 0.7 ms for ``JsonValue``)."""
    try:
        return _output_adapter(output_type)
    except TypeError:  # an unhashable type: nothing to cache it by
        return TypeAdapter(output_type)


@functools.lru_cache(maxsize=256)
def _output_adapter(output_type: Any) -> TypeAdapter[Any]:
    return TypeAdapter(output_type)


def _hooks(kind: str, hooks: Any) -> tuple[Any, ...]:
    if callable(hooks) or isinstance(hooks, str | bytes):
        raise ConfigurationError(f"{kind} must be a tuple of hooks, not {hooks!r}")
    try:
        items = tuple(hooks)
    except TypeError:
        raise ConfigurationError(f"{kind} must be a tuple of hooks, not {hooks!r}") from None
    for hook in items:
        if not callable(hook):
            raise ConfigurationError(f"{kind} hook {hook!r} is not callable")
    return items


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
    """A Pydantic model whose fields are ``fn``'s parameters (from type hints).

    Raises:
        ConfigurationError: a parameter the model could not pass (positional-only, a name
            Pydantic cannot have, a type it cannot validate), or the tool is a method
            decorated in its class body.
    """
    try:
        hints = _hints(fn)
        params = list(inspect.signature(fn).parameters.values())
    except (NameError, TypeError, ValueError) as exc:
        raise ConfigurationError(f"tool {tool_name!r}: cannot read its parameters: {exc}") from exc
    _check_not_unbound_method(fn, params, tool_name)
    fields: dict[str, Any] = {}
    for param in params:
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue
        _check_parameter(param, tool_name)
        default = ... if param.default is param.empty else param.default
        fields[param.name] = (hints.get(param.name, Any), default)
    model_name = "".join(part.title() for part in tool_name.split("_")) + "Input"
    try:
        with warnings.catch_warnings():  # a parameter named `json` or `schema` is fine here
            warnings.filterwarnings("ignore", "Field name .* shadows", UserWarning)
            return create_model(model_name, __config__=ConfigDict(extra="forbid"), **fields)
    except Exception as exc:  # which parameter: only now, on the error path
        raise ConfigurationError(_bad_field(tool_name, fields, exc)) from exc


def _check_parameter(param: inspect.Parameter, tool_name: str) -> None:
    where = f"parameter {param.name!r} of tool {tool_name!r}"
    if param.kind is param.POSITIONAL_ONLY:
        raise ConfigurationError(f"{where} is positional-only: tools are called by keyword")
    if param.name.startswith("_") or param.name == "model_config":
        raise ConfigurationError(f"{where}: a name Pydantic cannot take as a field; rename it")


def _check_not_unbound_method(
    fn: Callable[..., Any], params: list[inspect.Parameter], tool_name: str
) -> None:
    parts = getattr(fn, "__qualname__", "").split(".")
    in_class_body = len(parts) >= 2 and parts[-2] != "<locals>"
    if inspect.isfunction(fn) and in_class_body and params and params[0].name in ("self", "cls"):
        raise ConfigurationError(
            f"tool {tool_name!r} takes {params[0].name!r}: @tool on a method in its class"
            " body makes the model pass it; make the tool of the bound method instead,"
            f" e.g. tool({parts[-2]}().{parts[-1]})"
        )


def _bad_field(tool_name: str, fields: dict[str, Any], exc: Exception) -> str:
    for field, (annotation, _default) in fields.items():
        try:
            TypeAdapter(annotation)
        except Exception as why:  # its first line says why (a typing.TypedDict before 3.12)
            reason = str(why).strip().split("\n", 1)[0] or type(why).__name__
            where = f"parameter {field!r} of tool {tool_name!r}"
            return f"{where}: cannot validate {annotation!r}: {reason}"
    return f"tool {tool_name!r}: cannot build its input model: {exc}"


def _hints(fn: Any) -> dict[str, Any]:
    """The type hints of ``fn``'s parameters, also for a ``functools.partial``, a callable
    object (its ``__call__``) or a class (its ``__init__``); ``Annotated`` ones whole, so a
    ``Field(description=...)`` or a validator in them reaches the tool's model."""
    if isinstance(fn, functools.partial):
        return _hints(fn.func)
    if inspect.isclass(fn):
        init = fn.__init__
        own = get_type_hints(init, include_extras=True) if inspect.isfunction(init) else {}
        return {**get_type_hints(fn, include_extras=True), **own}
    if not (inspect.isfunction(fn) or inspect.ismethod(fn)) and callable(fn):
        call = type(fn).__call__
        return get_type_hints(call, include_extras=True) if inspect.isfunction(call) else {}
    return get_type_hints(fn, include_extras=True)


def _doc_summary(fn: Callable[..., Any]) -> str | None:
    doc = inspect.getdoc(fn)
    if not doc:
        return None
    return doc.strip().split("\n\n", 1)[0].replace("\n", " ")
