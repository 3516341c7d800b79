"""Blackboard: a shared board with a coordinator picking the next contributor each round.

Classical AI: Erman et al. 1980 (Hearsay-II); revived for LLM agents by Han & Zhang 2025
(arXiv:2507.01701).

Pattern::

    board ◄── the user's problem statement
    round 1..max_rounds:
        coordinator reads the board ──► {"terminate", "next_agent", "instruction"}
            terminate ──► stop             malformed / unknown agent ──► skip (warning event)
        chosen agent runs with render_for(agent) + instruction ──► its contribution is posted
    decider synthesizes the answer from the board
        (decider=None: the last ``answer``-kind entry, else the most recent contribution)

``coordinator=None`` selects agents round-robin. An agent marks a contribution as an answer by
starting it with ``ANSWER:``.

The architecture is a runner: run it with ``desk.run(arch, Job(input=prompt))``. Coordinator,
agents and decider are workers run inside that run, so all their events share one stream. A
pause inside any of them stores the phase, the round, the board and the member's state in
``RunState.payload``; resume (in another process too) continues that member, then the
remaining rounds. The board's entries live on one ``deskwork.collaboration.Blackboard`` (keys
``public`` and ``private:<agent>``), which is what gets saved.
"""

from __future__ import annotations

import contextlib
import json
import re
import threading
from collections.abc import AsyncGenerator, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from pydantic import ValidationError

from deskwork._aio import run_events
from deskwork.architecture._board import Blackboard, BlackboardEntry
from deskwork.collaboration import Blackboard as SharedBoard
from deskwork.core._model import DeskworkModel
from deskwork.core.event import Event, EventType
from deskwork.core.job import Job
from deskwork.core.message import Message
from deskwork.core.report import Report
from deskwork.core.state import RunState
from deskwork.exceptions import ConfigurationError
from deskwork.runtime.config import RunConfig
from deskwork.runtime.worker import Worker
from deskwork.workforce._members import (
    Resume,
    check_count,
    check_workers,
    child_from_payload,
    composite_failure,
    composite_outcome,
    run_member,
    sum_metrics,
    task_text,
    warn_unusable_overrides,
)

if TYPE_CHECKING:
    from deskwork.runtime.desk import Desk

__all__ = [
    "ANSWER_PREFIX",
    "COMPLETED_EVENT",
    "DEFAULT_COORDINATOR_INSTRUCTIONS",
    "DEFAULT_DECIDER_INSTRUCTIONS",
    "POSTED_EVENT",
    "ROUND_EVENT",
    "STARTED_EVENT",
    "Blackboard",
    "BlackboardArchitecture",
    "BlackboardEntry",
    "CoordinatorDecision",
]

DEFAULT_COORDINATOR_INSTRUCTIONS = """\
You coordinate a team of specialist agents on a shared problem.

Read the blackboard state below and decide:
- Should we terminate now? (Has a satisfactory answer been written?)
- If continuing, which agent should contribute next?
- What specific instruction should that agent receive?

Available agents:
{agents}

Output JSON exactly:
{{"terminate": <bool>, "next_agent": <str|null>, "instruction": <str|null>}}

If terminating, set next_agent and instruction to null.
"""

DEFAULT_DECIDER_INSTRUCTIONS = """You synthesize the final answer from a multi-agent blackboard
discussion. Read the blackboard state below and produce the best
answer you can. Cite specific contributions when useful;
acknowledge dissent if it matters.
"""

ANSWER_PREFIX = "ANSWER:"
"""A contribution starting with this prefix is posted as an ``answer``-kind entry."""
CONTRIBUTOR_INSTRUCTIONS = (
    "You are one of several specialists contributing to a shared blackboard. Read the board"
    " and follow your instruction. Reply with your contribution only. If it is a complete"
    f" final answer to the problem, start it with '{ANSWER_PREFIX}'."
)
STARTED_EVENT = "blackboard.started"
ROUND_EVENT = "blackboard.round"
"""An agent was chosen: payload ``round``, ``agent``, ``instruction``."""
POSTED_EVENT = "blackboard.posted"
COMPLETED_EVENT = "blackboard.completed"
WARNING_EVENT = EventType.WORKFORCE_WARNING
"""A skipped round or a failed contribution: payload ``round``, ``reason``, ``detail``."""

Phase = Literal["coordinator", "agent", "decider"]
_PHASES: dict[str, Phase] = {"coordinator": "coordinator", "agent": "agent", "decider": "decider"}
Outcome = tuple[Report, RunState]


class CoordinatorDecision(DeskworkModel):
    """What the coordinator returns each round."""

    terminate: bool = False
    next_agent: str | None = None
    instruction: str | None = None


@dataclass(frozen=True, slots=True)
class Terminate:
    """The coordinator ended the discussion."""


@dataclass(frozen=True, slots=True)
class Contribute:
    """``agent`` contributes next, following ``instruction``."""

    agent: str
    instruction: str | None


@dataclass(frozen=True, slots=True)
class SkipRound:
    """No usable decision this round (a warning event says why)."""

    reason: str
    detail: str


RoundDecision = Terminate | Contribute | SkipRound


@dataclass(frozen=True, slots=True)
class Paused:
    """A member paused: where (phase, member, instruction) and its report and state."""

    phase: Phase
    member: str
    report: Report
    state: RunState
    instruction: str | None = None


@dataclass(frozen=True, slots=True)
class Pending:
    """A paused member to continue first when a run resumes."""

    phase: Phase
    member: str
    instruction: str | None
    resume: Resume


@dataclass(slots=True)
class BoardRun:
    """Progress of one architecture run."""

    config: RunConfig
    job: Job
    view: Blackboard
    round: int = 0
    metrics: dict[str, Any] = field(default_factory=dict)
    """Metrics of every finished member run."""


class BlackboardArchitecture:
    """Coordinator + agents + decider, mediated by a shared blackboard.

    Example:
        ```python
        arch = BlackboardArchitecture(
            agents={"researcher": researcher, "critic": critic}, coordinator=lead, decider=judge
        )
        report = desk.run(arch, Job(input="Which dataset answers the question?"))
        ```
    """

    name = "blackboard"
    runner_type = "blackboard"

    def __init__(
        self,
        *,
        agents: dict[str, Worker],
        coordinator: Worker | None = None,
        decider: Worker | None = None,
        max_rounds: int = 10,
        coordinator_instructions: str | None = None,
        decider_instructions: str | None = None,
        name: str = "blackboard",
        board: SharedBoard | None = None,
    ) -> None:
        """Create the architecture.

        Args:
            agents: The specialists, keyed by the name the coordinator uses.
            coordinator: Picks the next agent each round; ``None`` selects round-robin.
            decider: Writes the final answer; ``None`` uses the last answer/contribution.
            max_rounds: Maximum rounds (skipped rounds count).
            coordinator_instructions: System text for the coordinator (``{agents}`` is replaced
                by the roster). Default: ``DEFAULT_COORDINATOR_INSTRUCTIONS``.
            decider_instructions: System text for the decider (default
                ``DEFAULT_DECIDER_INSTRUCTIONS``).
            name: Runner name (events' source; how a paused run finds the runner again).
            board: Keep the entries on this shared board (reset at the start of each run;
                one executing run at a time); a new board per run if omitted.

        Raises:
            ConfigurationError: no agents (or not a mapping of non-empty string names to
                workers), a coordinator or decider that is not a Worker, or a ``max_rounds``
                that is not an integer >= 0.
        """
        if not agents:
            raise ConfigurationError("BlackboardArchitecture needs at least one agent")
        if not isinstance(agents, Mapping):
            raise ConfigurationError(
                "BlackboardArchitecture takes agents as a mapping of names to workers,"
                f" got {type(agents).__name__}"
            )
        unnamed = [key for key in agents if not isinstance(key, str) or not key.strip()]
        if unnamed:  # the coordinator names agents by text; an agent's scratchpad is keyed by it
            raise ConfigurationError(
                f"BlackboardArchitecture: agent names must be non-empty strings, got {unnamed[0]!r}"
            )
        roles = [(f"agent {key!r}", agent) for key, agent in agents.items()]
        extras = {"coordinator": coordinator, "decider": decider}
        roles += [(role, worker) for role, worker in extras.items() if worker is not None]
        check_workers("BlackboardArchitecture", roles)
        check_count("BlackboardArchitecture", "max_rounds", max_rounds)
        self.agents = dict(agents)
        self.coordinator = coordinator
        self.decider = decider
        self.max_rounds = max_rounds
        self.coordinator_instructions = coordinator_instructions or DEFAULT_COORDINATOR_INSTRUCTIONS
        self.decider_instructions = decider_instructions or DEFAULT_DECIDER_INSTRUCTIONS
        self.name = name
        self.board = board

    def declared_workers(self) -> dict[str, Worker]:
        """Every worker the architecture runs: the agents, then coordinator and decider."""
        workers = dict(self.agents)
        for extra in (self.coordinator, self.decider):
            if extra is not None:
                workers.setdefault(extra.name, extra)
        return workers

    async def arun(self, config: RunConfig, job: Job) -> tuple[Report, RunState]:
        """Post the problem, run the rounds, then decide.

        A shared ``board`` runs one run at a time: a run started while another is executing on
        the same board fails (it would reset and mix the other run's entries).
        """
        with _claim(self.board) as claimed:
            if not claimed:
                return composite_failure(self, config, job, _BOARD_BUSY)
            return await self._start(config, job)

    async def _start(self, config: RunConfig, job: Job) -> Outcome:
        view = Blackboard(self.board)
        view.reset()
        view.post("user", task_text(job.input), kind="problem")
        warn_unusable_overrides(f"blackboard {self.name!r}", self.agents.values(), job)
        run = BoardRun(config, job, view)
        self._emit(run, STARTED_EVENT, self._describe())
        return await self._loop(run, 1, None)

    async def aresume(
        self, config: RunConfig, state: RunState, decision: Any, job: Job | None = None
    ) -> tuple[Report, RunState]:
        """Restore the board, continue the paused member, then the remaining rounds."""
        job = job or Job.from_state(state.job)
        with _claim(self.board) as claimed:
            if not claimed:
                return composite_failure(self, config, job, _BOARD_BUSY)
            return await self._continue(config, job, state, decision)

    def check_resume(self, state: RunState) -> None:
        """Refuse a paused run whose paused member (coordinator, agent or decider) this
        blackboard lacks (the desk asks before it claims the run).

        Raises:
            ConfigurationError: the member the run paused in was removed or renamed; the run
                stays paused, resumable with the blackboard it paused in.
        """
        problem = self._mismatch(state.payload)
        if problem is not None:
            raise ConfigurationError(
                f"{problem}: resume run {state.run_id} with the blackboard as it was when it"
                " paused; the run stays paused"
            )

    def _mismatch(self, payload: Mapping[str, Any]) -> str | None:
        """Why this blackboard cannot continue the paused member stored in ``payload``
        (``None`` when it can, or when the state is incomplete: :meth:`_restore` fails it)."""
        phase, member = payload.get("phase"), payload.get("member")
        known = _PHASES.get(phase) if isinstance(phase, str) else None
        if known is None or not isinstance(member, str) or self._knows(known, member):
            return None
        return f"cannot resume {phase!r} {member!r}: not part of blackboard {self.name!r}"

    async def _continue(
        self, config: RunConfig, job: Job, state: RunState, decision: Any
    ) -> Outcome:
        restored = self._restore(config, job, state, decision)
        if isinstance(restored, str):
            return composite_failure(self, config, job, restored)
        run, pending = restored
        self._emit(run, STARTED_EVENT, {**self._describe(), "resumed": True})
        return await self._loop(run, run.round, pending)

    def stream(self, desk: Desk, prompt: str) -> AsyncGenerator[Event, None]:
        """Run ``prompt`` through ``desk`` and yield the run's events as they happen.

        Stopping early (``break``, then ``aclose()``) cancels the run: it ends failed ("run
        cancelled") instead of going on, unobserved, through its remaining rounds.
        """
        return run_events(lambda listener: desk.arun(self, Job(input=prompt), on_event=listener))

    # ------------------------------------------------------------------- the loop

    async def _loop(self, run: BoardRun, first: int, pending: Pending | None) -> Outcome:
        if pending is not None and pending.phase == "decider":
            return await self._decide(run, pending.resume)
        for number in range(first, self.max_rounds + 1):
            run.round = number
            step = await self._round(run, pending)
            pending = None
            if isinstance(step, Paused):
                return self._pause(run, step)
            if isinstance(step, Terminate):
                break
        return await self._decide(run, None)

    async def _round(self, run: BoardRun, pending: Pending | None) -> Paused | RoundDecision | None:
        if pending is not None and pending.phase == "agent":
            return await self._contribute(run, pending.member, pending.instruction, pending.resume)
        decision = await self._choose(run, pending.resume if pending is not None else None)
        if isinstance(decision, Paused | Terminate):
            return decision
        if isinstance(decision, SkipRound):
            payload = {"round": run.round, "reason": decision.reason, "detail": decision.detail}
            self._emit(run, WARNING_EVENT, payload)
            return decision
        self._emit(
            run,
            ROUND_EVENT,
            {"round": run.round, "agent": decision.agent, "instruction": decision.instruction},
        )
        return await self._contribute(run, decision.agent, decision.instruction, None)

    async def _choose(self, run: BoardRun, resume: Resume | None) -> Paused | RoundDecision:
        if self.coordinator is None:
            names = list(self.agents)
            return Contribute(names[(run.round - 1) % len(names)], None)
        job = self._coordinator_job(run)
        report, state = await run_member(self.coordinator, run.config, job, resume)
        if report.status == "paused":
            return Paused("coordinator", self.coordinator.name, report, state)
        run.metrics = sum_metrics(run.metrics, report.metrics)
        return interpret(report, list(self.agents))

    async def _contribute(
        self, run: BoardRun, agent: str, instruction: str | None, resume: Resume | None
    ) -> Paused | None:
        job = self._agent_job(run, agent, instruction)
        report, state = await run_member(self.agents[agent], run.config, job, resume)
        if report.status == "paused":
            return Paused("agent", agent, report, state, instruction)
        run.metrics = sum_metrics(run.metrics, report.metrics)
        text = (report.content or "").strip()
        if report.status != "completed" or not text:
            detail = "; ".join(report.errors) or "empty contribution"
            self._emit(
                run,
                WARNING_EVENT,
                {"round": run.round, "reason": "agent_failed", "agent": agent, "detail": detail},
            )
            return None
        kind = "contribution"
        if text.upper().startswith(ANSWER_PREFIX):
            kind, text = "answer", text[len(ANSWER_PREFIX) :].strip()
        self._post(run, agent, text, kind)
        return None

    async def _decide(self, run: BoardRun, resume: Resume | None) -> Outcome:
        if self.decider is None:
            entry = run.view.final_entry()
            if entry is None:
                return self._done(run, None, "no contribution on the blackboard to answer from")
            report = Report(run_id=run.config.run_id, status="completed", content=entry.content)
            return self._done(run, report)
        job = self._decider_job(run)
        report, state = await run_member(self.decider, run.config, job, resume)
        if report.status == "paused":
            return self._pause(run, Paused("decider", self.decider.name, report, state))
        run.metrics = sum_metrics(run.metrics, report.metrics)
        if report.status == "completed" and report.content:
            self._post(run, self.decider.name, report.content, "decision")
        return self._done(run, report)

    # ------------------------------------------------------------------- jobs

    def _coordinator_job(self, run: BoardRun) -> Job:
        roster = "\n".join(
            f"- {name}" + (f": {w.instructions}" if w.instructions else "")
            for name, w in self.agents.items()
        )
        system = _fill(self.coordinator_instructions, roster)
        name = self.coordinator.name if self.coordinator is not None else "coordinator"
        text = f"Round {run.round} of {self.max_rounds}.\n\n{run.view.render_for(name)}"
        return _member_job(run.job, text, system, schema=CoordinatorDecision, tools=False)

    def _agent_job(self, run: BoardRun, agent: str, instruction: str | None) -> Job:
        task = instruction or "Contribute what you can to solve the problem."
        text = f"{run.view.render_for(agent)}\n\nYour instruction: {task}"
        return _member_job(run.job, text, CONTRIBUTOR_INSTRUCTIONS, schema=None, tools=True)

    def _decider_job(self, run: BoardRun) -> Job:
        name = self.decider.name if self.decider is not None else "decider"
        text = run.view.render_for(name)
        schema = run.job.response_schema
        return _member_job(run.job, text, self.decider_instructions, schema=schema, tools=False)

    # ------------------------------------------------------------------- state

    def _pause(self, run: BoardRun, paused: Paused) -> Outcome:
        payload = {
            "phase": paused.phase,
            "round": run.round,
            "member": paused.member,
            "instruction": paused.instruction,
            "board": run.view.to_state(),
            "metrics": run.metrics,
        }
        metrics = sum_metrics(run.metrics, paused.report.metrics)
        return composite_outcome(
            self, run.config, run.job, paused.report, metrics=metrics, payload=payload,
            child=paused.state,
        )  # fmt: skip

    def _restore(
        self, config: RunConfig, job: Job, state: RunState, decision: Any
    ) -> tuple[BoardRun, Pending] | str:
        """Rebuild the run and the pending member from stored state, or say what is wrong."""
        payload = state.payload
        phase, member, number = payload.get("phase"), payload.get("member"), payload.get("round")
        problem = self._mismatch(payload)
        if problem is not None:
            return problem
        child = child_from_payload(payload)
        known = _PHASES.get(phase) if isinstance(phase, str) else None
        if child is None or not isinstance(number, int) or not isinstance(member, str):
            return "stored blackboard state is incomplete"
        if known is None:
            return f"cannot resume unknown phase {phase!r}"
        view = Blackboard(self.board)
        try:
            view.load(payload.get("board") or {})
        except ValueError as exc:
            return f"invalid stored board: {exc}"
        run = BoardRun(config, job, view, number, dict(payload.get("metrics") or {}))
        instruction = payload.get("instruction")
        return run, Pending(known, member, instruction, Resume(child, decision))

    def _knows(self, phase: Phase, member: str) -> bool:
        if phase == "agent":
            return member in self.agents
        worker = {"coordinator": self.coordinator, "decider": self.decider}.get(phase)
        return worker is not None and worker.name == member

    def _done(self, run: BoardRun, report: Report | None, error: str | None = None) -> Outcome:
        if report is None:
            outcome = composite_failure(self, run.config, run.job, error or "", metrics=run.metrics)
        else:
            outcome = composite_outcome(self, run.config, run.job, report, metrics=run.metrics)
        self._emit(run, COMPLETED_EVENT, {"status": outcome[0].status, "rounds": run.round})
        return outcome

    def _post(self, run: BoardRun, author: str, content: str, kind: str) -> None:
        run.view.post(author, content, kind=kind)
        self._emit(run, POSTED_EVENT, {"round": run.round, "author": author, "kind": kind})

    def _emit(self, run: BoardRun, event_type: str, payload: dict[str, Any]) -> None:
        run.config.emit(event_type, self.name, payload)

    def _describe(self) -> dict[str, Any]:
        return {
            "agents": list(self.agents),
            "coordinator": self.coordinator.name if self.coordinator else None,
            "decider": self.decider.name if self.decider else None,
            "max_rounds": self.max_rounds,
        }


_BOARD_BUSY = "the shared blackboard is in use by another run; give concurrent runs their own board"
_busy_lock = threading.Lock()
_busy_boards: set[int] = set()
"""``id()`` of the shared boards a run is executing on (alive while listed: the run holds it)."""


@contextlib.contextmanager
def _claim(board: SharedBoard | None) -> Iterator[bool]:
    """Hold ``board`` for one executing run; yields ``False`` if another run holds it."""
    if board is None:
        yield True
        return
    with _busy_lock:
        if id(board) in _busy_boards:
            claimed = False
        else:
            claimed = True
            _busy_boards.add(id(board))
    try:
        yield claimed
    finally:
        if claimed:
            with _busy_lock:
                _busy_boards.discard(id(board))


def interpret(report: Report, agents: list[str]) -> RoundDecision:
    """Turn the coordinator's report into this round's decision (never raises).

    The structured ``data`` is used when present; otherwise a JSON object is looked for in the
    text (plain or fenced JSON, possibly with prose around it).
    """
    if report.status != "completed":
        return SkipRound("coordinator_failed", "; ".join(report.errors) or report.status)
    decision = _decision(report)
    if decision is None:
        return SkipRound("malformed_coordinator_output", (report.content or "")[:500])
    if decision.terminate:
        return Terminate()
    if not decision.next_agent:
        return SkipRound("malformed_coordinator_output", "next_agent is missing")
    if decision.next_agent not in agents:
        return SkipRound("unknown_agent", f"{decision.next_agent!r} is not one of {agents}")
    return Contribute(decision.next_agent, decision.instruction)


_JSON_OBJECT = re.compile(r"\{.*\}", re.DOTALL)


def _decision(report: Report) -> CoordinatorDecision | None:
    if isinstance(report.data, CoordinatorDecision):
        return report.data
    candidates: list[Any] = [report.data] if isinstance(report.data, dict) else []
    match = _JSON_OBJECT.search(report.content or "")
    if match is not None:
        with contextlib.suppress(json.JSONDecodeError):
            candidates.append(json.loads(match.group(0)))
    for candidate in candidates:
        try:
            return CoordinatorDecision.model_validate(candidate)
        except ValidationError:
            continue
    return None


def _fill(template: str, roster: str) -> str:
    try:
        return template.format(agents=roster)
    except (KeyError, IndexError, ValueError):
        return template.replace("{agents}", roster)


def _member_job(root: Job, text: str, system: str, *, schema: Any, tools: bool) -> Job:
    """A member's job: ``text`` as input after ``system``, sharing the root job's model options.

    Only agents (``tools=True``) inherit the root job's ``tools_override``: each one the
    entries it can use (:func:`~deskwork.workforce._members.member_job`).
    """
    return Job(
        input=text,
        initial_messages=[Message(role="system", content=system)],
        response_schema=schema,
        tools_override=root.tools_override if tools else None,
        thinking=root.thinking,
        drop_params=root.drop_params,
        extra_body=root.extra_body,
        metadata=root.metadata,
    )
