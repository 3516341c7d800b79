"""Workforce: several workers coordinated in one run (managed, collaborate, swarm, blackboard).

Every mode is a pair of functions ``start(wf, config, job)`` / ``resume(wf, config, state,
decision, job)`` in its own module; ``Workforce.arun``/``aresume`` only emit the workforce
events and dispatch::

    Workforce.arun ──► workforce.started ──► <mode>.start ──► workforce.completed (if finished)
    Workforce.aresume ─► workforce.started ──► <mode>.resume ─┘

Members run inside the workforce's run (``await worker.arun(config, job)``), so their events,
the workforce's events and the run's events form one ordered stream.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, get_args

from deskwork._sync import run_sync
from deskwork.collaboration import Blackboard, Channel
from deskwork.core.event import EventType
from deskwork.core.job import Job
from deskwork.core.report import Report
from deskwork.core.state import RunState
from deskwork.core.types import WorkforceMode
from deskwork.exceptions import ConfigurationError
from deskwork.runtime._durable_fanout import check_distribute
from deskwork.runtime.config import RunConfig
from deskwork.runtime.worker import Worker
from deskwork.workforce import _collaborate, _managed, _swarm
from deskwork.workforce._members import (
    check_count,
    check_workers,
    child_from_payload,
    composite_failure,
    composite_outcome,
    warn_unusable_overrides,
)

if TYPE_CHECKING:
    from deskwork.architecture.blackboard import BlackboardArchitecture

__all__ = ["Reducer", "Workforce"]

SHARED_KEY = "shared"
"""Payload key of a paused run's channel and board states (``Workforce.channel``/``blackboard``)."""
Reducer = Callable[[list[Report]], Report]
"""Combines the member reports of a collaborate run into one report."""

Outcome = tuple[Report, RunState]
_Start = Callable[["Workforce", RunConfig, Job], Awaitable[Outcome]]
_Resume = Callable[["Workforce", RunConfig, RunState, Any, Job], Awaitable[Outcome]]


class Workforce:
    """Coordinates several workers inside one run.

    Modes:
        managed: a manager (``manager`` or the first worker) picks one worker, which runs the job.
        collaborate: every worker runs the job (concurrently when none has tools) and
            ``reducer`` (default :func:`default_reducer`) combines their reports.
        swarm: the first worker starts; workers hand the conversation to each other with
            ``transfer_to_agent_tool`` (at most ``max_handoffs`` times).
        blackboard: a :class:`~deskwork.architecture.blackboard.BlackboardArchitecture` with the
            workers as agents and ``coordinator``/``decider``/``max_rounds``.

    Example:
        ```python
        team = Workforce([researcher, writer], mode="managed", name="team")
        report = desk.run(team, Job(input="Research and write about AI"))
        ```
    """

    runner_type = "workforce"

    def __init__(
        self,
        workers: Sequence[Worker],
        mode: WorkforceMode = "managed",
        name: str = "workforce",
        manager: Worker | None = None,
        reducer: Reducer | None = None,
        channel: Channel | None = None,
        blackboard: Blackboard | None = None,
        max_handoffs: int = 10,
        coordinator: Worker | None = None,
        decider: Worker | None = None,
        max_rounds: int = 10,
        distribute: bool | str = False,
    ) -> None:
        """Create a workforce.

        Args:
            workers: The members (at least one, unique names).
            mode: ``"managed"``, ``"collaborate"``, ``"swarm"`` or ``"blackboard"``.
            name: Name used in events and to find the workforce again on resume.
            manager: The selecting worker in managed mode (default: the first worker).
            reducer: Combines reports in collaborate mode (default: ``default_reducer``).
            channel: Message channel shared by the workers (a new one if omitted). A pause
                saves its messages; a resume in another process puts them back into a
                channel that holds none.
            blackboard: Shared board (a new one if omitted); the blackboard mode keeps its
                entries on it. A pause saves its entries; a resume in another process adds
                those the board lacks.
            max_handoffs: Maximum handoffs per swarm run; one more fails the run.
            coordinator: Blackboard mode: picks the next agent each round (round-robin if omitted).
            decider: Blackboard mode: writes the final answer from the board.
            max_rounds: Blackboard mode: maximum rounds.
            distribute: Collaborate mode on a durable desk: run each worker as a child run
                that any ``deskwork worker`` serving the queue may pick up (``True``: the
                run's own queue; a string: that queue). Elsewhere the workers run
                in-process as usual. See "Fan-out over workers" in ``docs/durable.md``.

        Raises:
            ConfigurationError: no workers (or not a list of them), a member or role that
                is not a Worker, duplicate names, an unknown mode, a limit that is not an
                integer >= 0, or ``distribute`` in a mode other than collaborate.
        """
        self.workers = _worker_list(workers, name)
        roles = {"manager": manager, "coordinator": coordinator, "decider": decider}
        members = [("a member", w) for w in self.workers]
        members += [(role, w) for role, w in roles.items() if w is not None]
        check_workers(f"Workforce {name!r}", members)
        _check_config(self.workers, mode, max_handoffs, max_rounds)
        self.distribute = check_distribute(distribute, f"Workforce {name!r}")
        if self.distribute and mode != "collaborate":
            raise ConfigurationError("distribute applies to mode='collaborate' only")
        self.mode: WorkforceMode = mode
        self.name = name
        self.manager = manager or self.workers[0]
        self.reducer = reducer
        self.channel = channel if channel is not None else Channel()
        self.blackboard = blackboard if blackboard is not None else Blackboard()
        self.max_handoffs = max_handoffs
        self.coordinator = coordinator
        self.decider = decider
        self.max_rounds = max_rounds
        self._by_name = {worker.name: worker for worker in self.workers}
        self._architecture: BlackboardArchitecture | None = None

    def __repr__(self) -> str:
        """Show the name, mode and member names."""
        return f"Workforce(name={self.name!r}, mode={self.mode!r}, workers={list(self._by_name)!r})"

    def get_worker(self, name: Any) -> Worker | None:
        """The member called ``name``, or ``None``."""
        return self._by_name.get(name) if isinstance(name, str) else None

    @property
    def architecture(self) -> BlackboardArchitecture:
        """The blackboard architecture that runs ``mode="blackboard"`` (built on first use)."""
        if self._architecture is None:
            from deskwork.architecture.blackboard import BlackboardArchitecture

            self._architecture = BlackboardArchitecture(
                agents=dict(self._by_name),
                coordinator=self.coordinator,
                decider=self.decider,
                max_rounds=self.max_rounds,
                name=self.name,
                board=self.blackboard,
            )
        return self._architecture

    def emit(self, config: RunConfig, event_type: str, payload: dict[str, Any]) -> None:
        """Emit an event whose source is this workforce."""
        config.emit(event_type, self.name, payload)

    async def arun(self, config: RunConfig, job: Job) -> tuple[Report, RunState]:
        """Run ``job`` with the workforce's mode."""
        self.emit(config, EventType.WORKFORCE_STARTED, {"mode": self.mode})
        if self.mode != "blackboard":  # the blackboard's agents: its architecture warns
            warn_unusable_overrides(f"workforce {self.name!r}", self.workers, job)
        start, _ = _MODES[self.mode]
        return self._finish(config, await start(self, config, job))

    async def aresume(
        self, config: RunConfig, state: RunState, decision: Any, job: Job | None = None
    ) -> tuple[Report, RunState]:
        """Continue a paused run where its stored stage says (see the mode modules)."""
        job = job or Job.from_state(state.job)
        self.emit(config, EventType.WORKFORCE_STARTED, {"mode": self.mode, "resumed": True})
        stored = state.payload.get("mode")
        if stored != self.mode:
            error = _other_mode(stored, self.mode)
            return self._finish(config, composite_failure(self, config, job, error))
        damaged = self._restore_shared(state.payload.get(SHARED_KEY))
        if damaged is not None:
            return self._finish(config, composite_failure(self, config, job, damaged))
        _, resume = _MODES[self.mode]
        return self._finish(config, await resume(self, config, state, decision, job))

    def check_resume(self, state: RunState) -> None:
        """Refuse a paused run this workforce cannot continue (the desk asks before it claims
        the run).

        Raises:
            ConfigurationError: the run paused in another mode, or the member it paused in
                (the manager, the selected, pending or active worker, the blackboard's
                coordinator, agent or decider) is not this workforce's any more (removed,
                renamed, or moved in collaborate mode); the run stays paused, resumable with
                the workforce it paused in.
        """
        stored = state.payload.get("mode")
        if isinstance(stored, str) and stored in _MODES and stored != self.mode:
            problem: str | None = _other_mode(stored, self.mode)
        else:
            mismatch = _MISMATCH.get(self.mode)
            problem = mismatch(self, state.payload) if mismatch is not None else None
        if problem is not None:
            raise ConfigurationError(
                f"workforce {self.name!r} cannot resume run {state.run_id}: {problem}; resume"
                " it with the workforce as it was when it paused; the run stays paused"
            )
        if self.mode == "blackboard" and (child := child_from_payload(state.payload)) is not None:
            self.architecture.check_resume(child)  # the coordinator, agent or decider it paused in

    def run(self, config: RunConfig, job: Job) -> tuple[Report, RunState]:
        """Synchronous :meth:`arun`."""
        return run_sync(self.arun(config, job))

    def resume(self, config: RunConfig, state: RunState, decision: Any) -> tuple[Report, RunState]:
        """Synchronous :meth:`aresume`."""
        return run_sync(self.aresume(config, state, decision), api="resume")

    def _finish(self, config: RunConfig, outcome: Outcome) -> Outcome:
        report, state = outcome
        if report.status != "paused":
            self.emit(config, EventType.WORKFORCE_COMPLETED, {"status": report.status})
        else:  # what the members shared so far, for a resume in another process
            shared = {"channel": self.channel.to_state()}
            if self.mode != "blackboard":  # that mode saves its whole board itself
                shared["blackboard"] = self.blackboard.to_state()
            state.payload[SHARED_KEY] = shared
        return outcome

    def _restore_shared(self, saved: Any) -> str | None:
        """Put the channel and board saved at the pause back into this workforce's where they
        lack it (a new process): the board's missing keys, a channel holding nothing. Live
        ones (a resume in the process that paused) carry on as they are. Returns what is
        wrong with a damaged save."""
        if not isinstance(saved, Mapping):
            return None
        try:
            if (board := saved.get("blackboard")) is not None:
                _add_missing_keys(self.blackboard, board)
            channel = saved.get("channel")
            if channel is not None and _holds_nothing(self.channel):
                self.channel.restore(channel)
        except ValueError as exc:
            return f"stored workforce channel or blackboard is invalid: {exc}"
        return None


def _add_missing_keys(board: Blackboard, saved: Any) -> None:
    """Add the entries of a saved board state whose keys ``board`` lacks (``ValueError``: not
    a board state; the board is then unchanged)."""
    entries = Blackboard.from_state(saved).to_state()["entries"]
    live = board.to_state()
    present = {entry["key"] for entry in live["entries"]}
    missing = [entry for entry in entries if entry["key"] not in present]
    if missing:
        board.restore({**live, "entries": live["entries"] + missing})


def _holds_nothing(channel: Channel) -> bool:
    state = channel.to_state()
    return not state["messages"] and not state["cursors"]


def _other_mode(stored: Any, mode: str) -> str:
    return f"run was paused by a {stored!r} workforce; this workforce is {mode!r}"


def _check_config(workers: list[Worker], mode: str, max_handoffs: int, max_rounds: int) -> None:
    if not workers:
        raise ConfigurationError("a Workforce needs at least one worker")
    names = [worker.name for worker in workers]
    duplicates = sorted({name for name in names if names.count(name) > 1})
    if duplicates:
        raise ConfigurationError(f"worker names must be unique in a Workforce: {duplicates}")
    if mode not in get_args(WorkforceMode):
        raise ConfigurationError(
            f"unknown Workforce mode {mode!r}; use one of {list(get_args(WorkforceMode))}"
        )
    check_count("Workforce", "max_handoffs", max_handoffs)
    check_count("Workforce", "max_rounds", max_rounds)


def _worker_list(workers: Any, name: str) -> list[Worker]:
    """``workers`` as a list (a single worker, ``None`` or a mapping is a mistake)."""
    if isinstance(workers, Worker | str | Mapping) or not isinstance(workers, Iterable):
        raise ConfigurationError(
            f"Workforce {name!r} takes a list of workers, got {type(workers).__name__}"
        )
    return list(workers)


async def _start_blackboard(wf: Workforce, config: RunConfig, job: Job) -> Outcome:
    return _wrap_blackboard(wf, config, job, await wf.architecture.arun(config, job))


async def _resume_blackboard(
    wf: Workforce, config: RunConfig, state: RunState, decision: Any, job: Job
) -> Outcome:
    child = child_from_payload(state.payload)
    if child is None:
        return composite_failure(wf, config, job, "stored workforce state has no paused member")
    arch = wf.architecture
    return _wrap_blackboard(wf, config, job, await arch.aresume(config, child, decision, job))


def _wrap_blackboard(wf: Workforce, config: RunConfig, job: Job, step: Outcome) -> Outcome:
    report, state = step
    paused = report.status == "paused"
    return composite_outcome(
        wf,
        config,
        job,
        report,
        metrics=report.metrics,
        payload={"mode": "blackboard", "stage": "blackboard"} if paused else None,
        child=state if paused else None,
    )


_MODES: dict[str, tuple[_Start, _Resume]] = {
    "managed": (_managed.start, _managed.resume),
    "collaborate": (_collaborate.start, _collaborate.resume),
    "swarm": (_swarm.start, _swarm.resume),
    "blackboard": (_start_blackboard, _resume_blackboard),
}
_MISMATCH: dict[str, Callable[[Workforce, Mapping[str, Any]], str | None]] = {
    "managed": _managed.mismatch,
    "collaborate": _collaborate.mismatch,
    "swarm": _swarm.mismatch,
}
"""Per mode: why a workforce cannot continue a paused state of that mode (``None``: it can)."""
