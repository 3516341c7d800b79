"""The nodes of a flow and the outcome of running one.

Every node turns ``(run, cursor)`` into an :data:`Outcome`. ``cursor`` is ``None`` for a
fresh start, or the JSON the node returned in :class:`Paused` when the run paused there.
Sequencing, short-circuiting, pausing and error capture live in ``_engine.FlowRun``;
a node only says what is particular to it. Cursor shapes (``child`` is always the nested
cursor, so the engine can find paused steps without knowing node types)::

    sequence   {"index": i, "child": <node cursor>}
    Step       {"state": <the paused runner's RunState>}
    Condition  {"key": "true" | "false", "child": <sequence cursor>}
    Router     {"key": <route>, "child": <sequence cursor>}
    Loop       {"iteration": n, "child": <sequence cursor>}
    Parallel   {"branches": [{"child": <node cursor> | None, "results": [<StepOutput>]}]}

In a ``Parallel`` cursor a branch whose ``child`` is ``None`` has finished; ``results``
keeps every branch's outputs until the whole ``Parallel`` completes.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from deskwork._aio import gather_or_cancel
from deskwork.core.job import Job, as_job
from deskwork.core.state import RunState
from deskwork.exceptions import ConfigurationError
from deskwork.runtime._durable_fanout import can_fan_out, check_distribute
from deskwork.runtime.runner import Runner
from deskwork.utils import is_integer
from deskwork.workflow._context import StepOutput, WorkflowContext

if TYPE_CHECKING:
    from deskwork.workflow._engine import FlowRun

__all__ = [
    "DONE",
    "AsyncCondition",
    "AsyncLoop",
    "Condition",
    "Cursor",
    "Done",
    "Failed",
    "Loop",
    "Node",
    "Outcome",
    "Parallel",
    "Paused",
    "Router",
    "Step",
    "call_user",
    "check_callable",
    "nest",
    "node_list",
    "paused_steps",
]

Cursor = dict[str, Any]
JobBuilder = Callable[[WorkflowContext], "Job | str | Awaitable[Job | str]"]
Predicate = Callable[[WorkflowContext], "bool | Awaitable[bool]"]
AsyncPredicate = Callable[[WorkflowContext], Awaitable[bool]]
Selector = Callable[[WorkflowContext], "str | Awaitable[str]"]


# -- outcomes ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Done:
    """The node completed; its steps' outputs are in the context."""


@dataclass(frozen=True, slots=True)
class Paused:
    """A step under the node paused; ``cursor`` says where to continue."""

    cursor: Cursor


@dataclass(frozen=True, slots=True)
class Failed:
    """The node failed; nothing after it runs."""

    errors: list[str] = field(default_factory=list)


Outcome = Done | Paused | Failed
DONE = Done()


def nest(outcome: Outcome, **frame: Any) -> Outcome:
    """Wrap a paused child's cursor in this node's ``frame``; other outcomes pass through."""
    if isinstance(outcome, Paused):
        return Paused({**frame, "child": outcome.cursor})
    return outcome


async def call_user(function: Callable[[WorkflowContext], Any], ctx: WorkflowContext) -> Any:
    """Call a user predicate, selector or job builder, awaiting it when it is async."""
    value = function(ctx)
    if inspect.isawaitable(value):
        value = await value
    return value


def paused_steps(nodes: Sequence[Node], cursor: Cursor) -> Iterator[tuple[Step | None, RunState]]:
    """The paused steps under a sequence's ``cursor``, with their stored states, in order
    (the first is resumed next)."""
    yield from nodes[cursor["index"]].paused(cursor["child"])


def cursor_states(cursor: Cursor) -> Iterator[RunState]:
    """The paused steps' states under any node's ``cursor``, in order, from its shape alone."""
    if "state" in cursor:
        yield RunState.model_validate(cursor["state"])
    elif "branches" in cursor:
        for branch in cursor["branches"]:
            if branch["child"] is not None:
                yield from cursor_states(branch["child"])
    else:
        yield from cursor_states(cursor["child"])


def node_list(nodes: Node | Sequence[Node] | None, owner: str) -> tuple[Node, ...]:
    """Validate children given as one node or a sequence of nodes.

    Raises:
        ConfigurationError: a child is not a workflow node.
    """
    items = (nodes,) if isinstance(nodes, Node) else tuple(nodes or ())
    for item in items:
        if not isinstance(item, Node):
            raise ConfigurationError(
                f"{owner} expects workflow nodes (Step, Parallel, Condition, Router, Loop), "
                f"got {type(item).__name__}; wrap runners in Step(...)"
            )
    return items


def _route_key(value: Any) -> str:
    """A route key as plain text: a ``str`` subclass (a ``(str, Enum)`` member, say) by its
    value, not by its ``str()`` (``"Route.FAST"``); any other value by its ``str()``."""
    return str.__str__(value) if isinstance(value, str) else str(value)


def check_callable(owner: str, what: str, function: Any) -> None:
    """Check that a user callback (predicate, selector, job builder) is callable.

    Raises:
        ConfigurationError: naming the node and the callback.
    """
    if not callable(function):
        raise ConfigurationError(
            f"{owner}: {what} must be a function of the context, got {type(function).__name__}"
        )


# -- nodes ------------------------------------------------------------------------------


class Node:
    """Base class of the workflow nodes."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        """Name the node.

        Raises:
            ConfigurationError: ``name`` is not a string (it names the node's events).
        """
        if not isinstance(name, str):
            raise ConfigurationError(
                f"a {type(self).__name__}'s name must be a string, got {name!r}"
                f" ({type(name).__name__})"
            )
        self.name = name

    @property
    def label(self) -> str:
        """``Type 'name'`` for error messages."""
        return f"{type(self).__name__} {self.name!r}"

    async def execute(self, run: FlowRun, cursor: Cursor | None) -> Outcome:
        """Run (``cursor is None``) or continue (from ``cursor``) this node."""
        raise NotImplementedError

    def shape(self) -> Any:
        """A JSON description of the node's structure (to detect a changed flow on resume)."""
        raise NotImplementedError

    def paused(self, cursor: Cursor) -> Iterator[tuple[Step | None, RunState]]:
        """The paused steps under this node's ``cursor``, with their stored states, in order.

        A node of its own (a subclass) that nests its children's cursors as the built-in
        ones do (``"child"``, ``"branches"``, a step's ``"state"``) pauses and resumes without
        overriding this; its paused steps are then not known (``None``): only their states.
        """
        for state in cursor_states(cursor):
            yield None, state


class Step(Node):
    """Runs a worker, workforce (or any runner) once, inside the flow's run.

    Args:
        runner: the worker, workforce or other runner.
        job_builder: ``ctx -> Job`` (sync or async) building the step's job; any other
            value (a non-empty string, a dict for a graph, ...) becomes ``Job(input=...)``;
            ``None`` or a blank string fails the step. Default: the flow's job.
        name: the step's name (event source, output header); default: the runner's name.
    """

    __slots__ = ("job_builder", "runner")

    def __init__(
        self, runner: Runner, job_builder: JobBuilder | None = None, name: str | None = None
    ) -> None:
        super().__init__(name or getattr(runner, "name", None) or "step")
        if not callable(getattr(runner, "arun", None)):
            raise ConfigurationError(
                f"{self.label} expects a runner (a Worker, Workforce, Flow, ...),"
                f" got {type(runner).__name__}"
            )
        if job_builder is not None:
            check_callable(self.label, "job_builder", job_builder)
        self.runner = runner
        self.job_builder = job_builder

    async def build_job(self, ctx: WorkflowContext) -> Job:
        """The job for a fresh run of this step."""
        if self.job_builder is None:
            return ctx.job
        return as_job(await call_user(self.job_builder, ctx), "the job_builder's result")

    async def execute(self, run: FlowRun, cursor: Cursor | None) -> Outcome:
        """Run the runner (or resume it from the stored state)."""
        return await run.step(self, cursor)

    def shape(self) -> Any:
        """Type, name and runner identity."""
        runner = self.runner
        return ["Step", self.name, getattr(runner, "runner_type", ""), getattr(runner, "name", "")]

    def paused(self, cursor: Cursor) -> Iterator[tuple[Step | None, RunState]]:
        """This step and its runner's paused state."""
        yield self, RunState.model_validate(cursor["state"])


class Parallel(Node):
    """Runs its children concurrently; completes when all complete.

    A failed branch fails the ``Parallel`` (after every branch has finished). When
    branches pause, the finished branches' outputs are kept and the paused ones resume,
    first to last, one decision each.

    ``distribute`` (every branch a :class:`Step`): on a durable desk each branch runs as a
    child run that any ``deskwork worker`` serving the queue may pick up (``True``: the
    run's own queue; a string: that queue); a branch that would pause fails instead.
    Elsewhere the branches run in-process as usual.
    """

    __slots__ = ("distribute", "steps")

    def __init__(
        self, *steps: Node, name: str = "parallel", distribute: bool | str = False
    ) -> None:
        super().__init__(name)
        self.steps = node_list(steps, "Parallel")
        if not self.steps:
            raise ConfigurationError("Parallel needs at least one step")
        self.distribute = check_distribute(distribute, self.label)
        if self.distribute and not all(isinstance(step, Step) for step in self.steps):
            raise ConfigurationError(
                f"{self.label}: distribute runs each branch as a run of its own, so every"
                " branch must be a Step"
            )

    async def execute(self, run: FlowRun, cursor: Cursor | None) -> Outcome:
        """Run every branch at once (on resume: only the first paused branch)."""
        if cursor is None and self.distribute and can_fan_out(run.config):
            steps = [step for step in self.steps if isinstance(step, Step)]
            return await run.fan_out(steps, self.distribute, self.name)
        branches: list[Cursor] = (
            cursor["branches"] if cursor else [{"child": None, "results": []} for _ in self.steps]
        )
        forks = [run.fork([StepOutput.from_json(r) for r in b["results"]]) for b in branches]
        active = next((i for i, b in enumerate(branches) if b["child"] is not None), None)

        async def branch(index: int) -> Outcome:
            child = branches[index]["child"]
            if cursor is None or index == active:
                return await forks[index].node(self.steps[index], child)
            return DONE if child is None else Paused(child)

        outcomes = await gather_or_cancel(*(branch(i) for i in range(len(self.steps))))
        errors = [e for o in outcomes if isinstance(o, Failed) for e in o.errors]
        if errors:
            return Failed(errors)
        if any(isinstance(o, Paused) for o in outcomes):
            return Paused(
                {"branches": [_branch_cursor(o, f) for o, f in zip(outcomes, forks, strict=True)]}
            )
        for fork in forks:
            run.ctx.results.extend(fork.new_results)
        return DONE

    def shape(self) -> Any:
        """Type, name and branches."""
        return ["Parallel", self.name, [step.shape() for step in self.steps]]

    def paused(self, cursor: Cursor) -> Iterator[tuple[Step | None, RunState]]:
        """The paused steps of every unfinished branch, first branch first."""
        for step, branch in zip(self.steps, cursor["branches"], strict=True):
            if branch["child"] is not None:
                yield from step.paused(branch["child"])


def _branch_cursor(outcome: Outcome, fork: FlowRun) -> Cursor:
    child = outcome.cursor if isinstance(outcome, Paused) else None
    return {"child": child, "results": [r.to_json() for r in fork.new_results]}


class _Branching(Node):
    """Chooses one of several step sequences by key and runs it (Condition, Router)."""

    __slots__ = ("branches",)

    def __init__(self, name: str, branches: Mapping[str, Node | Sequence[Node]]) -> None:
        super().__init__(name)
        if not isinstance(branches, Mapping):
            raise ConfigurationError(
                f"{self.label} expects its branches as a mapping of keys to steps,"
                f" got {type(branches).__name__}"
            )
        for key in branches:
            if not isinstance(key, str):
                raise ConfigurationError(
                    f"{self.label}: branch keys must be strings, got {key!r} ({type(key).__name__})"
                )
        self.branches = {
            _route_key(key): node_list(steps, type(self).__name__)
            for key, steps in branches.items()
        }

    async def choose(self, ctx: WorkflowContext) -> str:
        """The key of the branch to run."""
        raise NotImplementedError

    async def execute(self, run: FlowRun, cursor: Cursor | None) -> Outcome:
        """Choose a branch (on resume: the stored choice) and run it."""
        key = cursor["key"] if cursor else await self.choose(run.ctx)
        steps = self.branches.get(key)
        if steps is None:
            known = ", ".join(repr(k) for k in self.branches) or "none"
            return Failed([f"{self.label}: unknown route {key!r} (routes: {known})"])
        return nest(await run.sequence(steps, cursor["child"] if cursor else None), key=key)

    def shape(self) -> Any:
        """Type, name and branches."""
        branches = {key: [step.shape() for step in steps] for key, steps in self.branches.items()}
        return [type(self).__name__, self.name, branches]

    def paused(self, cursor: Cursor) -> Iterator[tuple[Step | None, RunState]]:
        """The paused steps of the chosen branch."""
        return paused_steps(self.branches[cursor["key"]], cursor["child"])


class Condition(_Branching):
    """Runs ``if_true`` or ``if_false`` depending on ``predicate(ctx)`` (sync or async).

    The predicate is evaluated once; a resumed run continues the branch it chose.
    """

    __slots__ = ("predicate",)

    def __init__(
        self,
        predicate: Predicate,
        if_true: Node | Sequence[Node],
        if_false: Node | Sequence[Node] | None = None,
        *,
        name: str = "condition",
    ) -> None:
        super().__init__(name, {"true": if_true, "false": if_false or ()})
        check_callable(self.label, "predicate", predicate)
        self.predicate = predicate

    async def choose(self, ctx: WorkflowContext) -> str:
        """``"true"`` or ``"false"``."""
        return "true" if await call_user(self.predicate, ctx) else "false"


class AsyncCondition(Condition):
    """A :class:`Condition` whose predicate is a coroutine function."""

    __slots__ = ()

    def __init__(
        self,
        predicate: AsyncPredicate,
        if_true: Node | Sequence[Node],
        if_false: Node | Sequence[Node] | None = None,
        *,
        name: str = "condition",
    ) -> None:
        super().__init__(predicate, if_true, if_false, name=name)


class Router(_Branching):
    """Runs the route whose key ``selector(ctx)`` returns (sync or async).

    Route keys are strings; a ``str`` subclass (a ``(str, Enum)`` member) stands for its
    value, as a key and as the selector's result. An unknown key fails the flow with an
    error naming the known routes.
    """

    __slots__ = ("selector",)

    def __init__(
        self,
        selector: Selector,
        routes: Mapping[str, Node | Sequence[Node]],
        *,
        name: str = "router",
    ) -> None:
        super().__init__(name, routes)
        check_callable(self.label, "selector", selector)
        self.selector = selector

    async def choose(self, ctx: WorkflowContext) -> str:
        """The selected route key."""
        return _route_key(await call_user(self.selector, ctx))


class Loop(Node):
    """Repeats ``steps`` until ``stop`` says so or ``max_iterations`` is reached.

    ``stop(ctx)`` (sync or async) is checked after each iteration;
    ``ctx.loop_iteration(name)`` is the current iteration, from 1. Name your loops to
    track them: loops with the same name share one counter in the context.
    """

    __slots__ = ("max_iterations", "steps", "stop")

    def __init__(
        self,
        steps: Node | Sequence[Node],
        stop: Predicate,
        max_iterations: int = 10,
        name: str = "loop",
    ) -> None:
        super().__init__(name)
        self.steps = node_list(steps, type(self).__name__)
        if not self.steps:
            raise ConfigurationError(f"{self.label} needs at least one step")
        if not is_integer(max_iterations):
            raise ConfigurationError(
                f"{self.label}: max_iterations must be an integer >= 1, got {max_iterations!r}"
            )
        if max_iterations < 1:
            raise ConfigurationError(f"{self.label}: max_iterations must be >= 1")
        check_callable(self.label, "stop", stop)
        self.stop = stop
        self.max_iterations = max_iterations

    async def execute(self, run: FlowRun, cursor: Cursor | None) -> Outcome:
        """Run iterations (on resume: finish the paused one first)."""
        iteration: int = cursor["iteration"] if cursor else 0
        child: Cursor | None = cursor["child"] if cursor else None
        while child is not None or iteration < self.max_iterations:
            if child is None:
                iteration += 1
            run.ctx.set_loop_iteration(self.name, iteration)
            outcome = await run.sequence(self.steps, child)
            child = None
            if not isinstance(outcome, Done):
                return nest(outcome, iteration=iteration)
            if await call_user(self.stop, run.ctx):
                break
        return DONE

    def shape(self) -> Any:
        """Type, name, limit and steps."""
        steps = [step.shape() for step in self.steps]
        return [type(self).__name__, self.name, self.max_iterations, steps]

    def paused(self, cursor: Cursor) -> Iterator[tuple[Step | None, RunState]]:
        """The paused steps of the current iteration."""
        return paused_steps(self.steps, cursor["child"])


class AsyncLoop(Loop):
    """A :class:`Loop` whose ``stop`` predicate is a coroutine function."""

    __slots__ = ()

    def __init__(
        self,
        steps: Node | Sequence[Node],
        stop: AsyncPredicate,
        max_iterations: int = 10,
        name: str = "loop",
    ) -> None:
        super().__init__(steps, stop, max_iterations, name)
