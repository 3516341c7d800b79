"""Worker: one agent loop that talks to the model, calls tools and returns a Report."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from functools import cache
from typing import TYPE_CHECKING, Any

from deskwork._sync import run_sync
from deskwork.exceptions import ConfigurationError

if TYPE_CHECKING:  # the loop (runtime._worker_loop) and what it needs load with the first run
    from deskwork.core.job import Job
    from deskwork.core.report import Report
    from deskwork.core.state import RunState
    from deskwork.runtime.config import RunConfig
    from deskwork.tools.base import Tool
    from deskwork.tools.toolbelt import Toolbelt

__all__ = ["Worker"]


class Worker:
    """A single agent: a name, optional model and instructions, and tools.

    Run it through a :class:`~deskwork.Desk` (``desk.run(worker, job)``), or directly
    with a :class:`~deskwork.RunConfig` (``worker.run(config, job)``).

    ``tools`` are :class:`~deskwork.tools.Tool` objects (``@tool`` makes one of a function),
    each with a name of its own: anything else raises ``ConfigurationError`` here.
    """

    __slots__ = ("_toolbelt", "_tools", "instructions", "memory_scope", "model", "name")
    runner_type = "worker"

    def __init__(
        self,
        name: str,
        tools: Iterable[Tool] | None = None,
        model: str | None = None,
        instructions: str | None = None,
        memory_scope: str | None = None,
    ) -> None:
        if not isinstance(name, str) or not name.strip():
            # it names the run's events, the runner a paused run finds again, the member a
            # workforce's manager picks (a blank one is "found" in any reply)
            raise ConfigurationError(f"a Worker's name must be a non-empty string, not {name!r}")
        self.name = name
        self._tools = _checked_tools(name, tools)
        self._toolbelt: Toolbelt | None = None
        self.model = model
        self.instructions = instructions
        self.memory_scope = memory_scope

    @property
    def tools(self) -> list[Tool]:
        """The worker's tools."""
        return list(self._tools)

    @property
    def toolbelt(self) -> Toolbelt:
        """The worker's tools as a :class:`Toolbelt` (built on first use)."""
        if self._toolbelt is None:
            from deskwork.tools.toolbelt import Toolbelt

            self._toolbelt = Toolbelt(self._tools)
        return self._toolbelt

    @property
    def scope(self) -> str:
        """Memory namespace: ``memory_scope`` or ``worker:<name>``."""
        return self.memory_scope or f"worker:{self.name}"

    def __repr__(self) -> str:
        return f"Worker(name={self.name!r}, tools={[t.name for t in self._tools]!r})"

    async def arun(self, config: RunConfig, job: Job) -> tuple[Report, RunState]:
        """Run ``job`` to completion, pause or failure."""
        return await _loop_start()(self, config, job)

    async def aresume(
        self, config: RunConfig, state: RunState, decision: Any, job: Job | None = None
    ) -> tuple[Report, RunState]:
        """Continue a paused run from its stored state with the person's ``decision``."""
        from deskwork.runtime._worker_loop import resume

        return await resume(self, config, state, decision, job)

    def run(self, config: RunConfig, job: Job) -> tuple[Report, RunState]:
        """Synchronous :meth:`arun`."""
        return run_sync(self.arun(config, job))

    def resume(self, config: RunConfig, state: RunState, decision: Any) -> tuple[Report, RunState]:
        """Synchronous :meth:`aresume`."""
        return run_sync(self.aresume(config, state, decision), api="resume")


def _checked_tools(worker: str, tools: Iterable[Tool] | None) -> tuple[Tool, ...]:
    """``tools`` as a tuple, each a Tool and each name once (the same tool twice counts once).

    Raises:
        ConfigurationError: an entry is not a Tool (a plain function: the run would fail at
            its first model call), or two tools share a name (the model could call only one).
    """
    if not tools:
        return ()
    from deskwork.tools.base import Tool

    if isinstance(tools, Tool | str):
        raise ConfigurationError(f"Worker {worker!r}: tools takes a list of tools, not {tools!r}")
    named: dict[str, Tool] = {}
    for item in tools:
        if not isinstance(item, Tool):
            hint = "decorate it with @tool" if callable(item) else "pass Tool objects (@tool)"
            raise ConfigurationError(f"Worker {worker!r}: {item!r} is not a tool; {hint}")
        if named.setdefault(item.name, item) is not item:
            raise ConfigurationError(
                f"Worker {worker!r}: two different tools are named {item.name!r} (the model"
                " could call only one); give one another name with @tool(name=...)"
            )
    return tuple(named.values())


@cache
def _loop_start() -> Callable[[Worker, RunConfig, Job], Awaitable[tuple[Report, RunState]]]:
    """The worker loop's ``start``, imported by the first run (once: a from-import in every
    run cost ~1.5 us)."""
    from deskwork.runtime._worker_loop import start

    return start
