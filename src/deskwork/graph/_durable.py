"""A graph on a durable desk: its model calls and its LangChain tool calls are DBOS steps.

The desk's own adapter is already a ``DurableAdapter``; here the rest of a graph's calls
join it while ``GraphRunner`` drives the graph on a durable desk:

- a :class:`~deskwork.graph.llm.DeskworkChatModel` with an adapter of its own calls it
  through a ``DurableAdapter`` too (:func:`step_adapter`);
- a LangChain tool called with ``ainvoke`` (as ``ToolNode`` calls it) runs as the step
  ``deskwork.tool:<name>:<tool call id>``, so a recovered graph does not run a finished tool
  call again (:func:`durable_graph`).

Outside a durable run everything is a plain call. Chat models that are not
``DeskworkChatModel`` (``ChatOpenAI``, say) and synchronous ``tool.invoke`` are not steps.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

from langchain_core.tools import BaseTool

if TYPE_CHECKING:
    from deskwork.adapters.base import BaseModelAdapter
    from deskwork.runtime.config import RunConfig

__all__ = ["durable_graph", "step_adapter"]

_DURABLE: ContextVar[bool] = ContextVar("deskwork_graph_durable", default=False)
_patched: list[Callable[..., Awaitable[Any]]] = []
"""The ``ainvoke`` methods as LangChain defines them, once :func:`_install` has wrapped them."""


def _durable(config: RunConfig | None) -> bool:
    return config is not None and config.desk is not None and config.desk.durable


def step_adapter(adapter: BaseModelAdapter, config: RunConfig | None) -> BaseModelAdapter:
    """``adapter`` with each call a step when ``config`` is a run of a durable desk."""
    if not _durable(config):
        return adapter
    from deskwork.runtime._durable_steps import DurableAdapter

    return adapter if isinstance(adapter, DurableAdapter) else DurableAdapter(adapter)


@contextmanager
def durable_graph(config: RunConfig) -> Iterator[None]:
    """While the graph of ``config``'s run runs in this block, its LangChain tool calls are
    steps of the run (when the desk is durable)."""
    if not _durable(config):
        yield
        return
    _install()
    token = _DURABLE.set(True)
    try:
        yield
    finally:
        _DURABLE.reset(token)


def _install() -> None:
    """Wrap ``ainvoke`` of LangChain's tool classes once (``StructuredTool`` runs a sync
    tool through its own ``ainvoke``); the wrapper is a plain call outside a durable graph."""
    if _patched:
        return
    from langchain_core.tools import StructuredTool, Tool

    for cls in (BaseTool, StructuredTool, Tool):
        if "ainvoke" in cls.__dict__:
            original = cls.__dict__["ainvoke"]
            _patched.append(original)
            # the one method every way of calling a LangChain tool asynchronously goes through
            setattr(cls, "ainvoke", _as_step(original))  # noqa: B010


def _as_step(original: Callable[..., Awaitable[Any]]) -> Callable[..., Awaitable[Any]]:
    async def ainvoke(self: BaseTool, input: Any, *args: Any, **kwargs: Any) -> Any:
        if not _DURABLE.get():
            return await original(self, input, *args, **kwargs)
        from deskwork.runtime._durable_steps import call_step

        call_id = input.get("id") if isinstance(input, dict) and "args" in input else None
        name = f"deskwork.tool:{self.name}:{call_id or ''}"
        return await call_step(name, lambda: original(self, input, *args, **kwargs))

    return ainvoke
