"""``AgentEngine``: runs registered agents for a turn, in phases, around one blackboard.

One ``process_turn`` call::

    start: set trigger info, seed v1 shared_state keys and sys.* variables on the board
    phase 1: agents matching the trigger (FORCE: every allowed agent) whose cooldown is over
             and whose conditions hold on a frozen snapshot run concurrently
             → successful responses merge in ascending (priority, registration) order
             → their events (plus events the host left on the board) are collected
    phase 2..max_phases: EVENT agents subscribed to the previous phase's events run likewise
    end: the events the turn dispatched or emitted are cleared from the board (one the host
         emitted meanwhile stays for the next turn); the aggregated AgentResponse is returned

A failing agent (exception, timeout, unusable output, a ``CancelledError`` out of something
it awaited) contributes exactly one ``error`` insight and nothing else: none of its updates
or events reach the board. Other agents of the phase are unaffected. Progress is reported
to callbacks and as ``realtime.*`` events.

Process the turns of one session one at a time: concurrent turns on one board never lose an
update (every merge is an atomic board ``update``), but they share its transient events.
"""

from __future__ import annotations

import asyncio
import threading
import time
import weakref
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, Final

from deskwork._aio import gather_or_cancel, task_cancelling
from deskwork._logs import get_stdlib_logger
from deskwork.collaboration._blackboard import copy_json
from deskwork.core.job import Job
from deskwork.core.redact import exception_text
from deskwork.core.report import Report
from deskwork.core.state import RunState
from deskwork.event_bus import EventBus
from deskwork.realtime.core._checks import (
    check_agent,
    check_agents_given,
    check_api_key,
    check_callbacks,
    check_clock,
    check_context,
    check_ids,
    check_names,
    check_phases,
    check_services,
    check_text,
    check_timeout,
    check_turn,
)
from deskwork.realtime.core._merge import Contribution, apply_phase, normalize_response
from deskwork.realtime.core._notify import Notifier, describe_error
from deskwork.realtime.core._problems import AgentConfigurationError
from deskwork.realtime.core._selection import QUIET_REASONS, match_keyword, trigger_skip_reason
from deskwork.realtime.core._turn import PhaseRecord, Turn
from deskwork.realtime.core.agent import BaseAgent, Clock
from deskwork.realtime.core.blackboard import RESERVED_PREFIX, Blackboard
from deskwork.realtime.core.callbacks import AgentCallbackHandler, turn_scope
from deskwork.realtime.core.conditions import ConditionEvaluator
from deskwork.realtime.core.events import ENGINE_SOURCE
from deskwork.realtime.core.llm import LLMClient
from deskwork.realtime.core.models import (
    AgentContext,
    AgentInsight,
    AgentResponse,
    Event,
    InsightType,
    TriggerType,
)
from deskwork.runtime.config import EventEmitter, RunConfig
from deskwork.utils import new_id

if TYPE_CHECKING:
    from deskwork.adapters.base import BaseModelAdapter
    from deskwork.runtime.desk import Desk

__all__ = ["MAX_PHASES", "AgentConfigurationError", "AgentEngine", "RealtimeTurn"]

_ENGINE_CLIENTS: weakref.WeakSet[LLMClient] = weakref.WeakSet()
"""LLM clients created by engines (replaced when an agent moves to another engine)."""

MAX_PHASES: Final = 5
"""Deepest event chain a turn may run (phase 1 plus up to four event phases)."""

logger = get_stdlib_logger("deskwork.realtime.engine")

_Outcome = tuple[AgentResponse, bool] | None
"""``(response, failed)``, or ``None`` when the agent turned out to be cooling down."""


class AgentEngine:
    """Orchestrates realtime agents: routing, conditions, phases, merging, observability.

    Example:
        ```python
        engine = AgentEngine(adapter=ScriptedAdapter(default='{"has_insight": false}'))
        engine.register_agent(DynamicAgent(config))
        response = await engine.process_turn(context, trigger_type=TriggerType.TURN_BASED)
        ```
    """

    def __init__(
        self,
        api_key: str | None = None,
        callbacks: Sequence[AgentCallbackHandler] | None = None,
        max_phases: int = 2,
        *,
        adapter: BaseModelAdapter | None = None,
        event_bus: EventBus | None = None,
        desk: Desk | None = None,
        agent_timeout: float | None = 30.0,
        clock: Clock = time.monotonic,
        strict_reasoning_config: bool = True,
    ) -> None:
        """Create an engine.

        Args:
            api_key: Key for the default ``LiteLLMAdapter`` (created on first LLM call).
            callbacks: Lifecycle observers (e.g. ``StructuredLogTracer``).
            max_phases: Phase depth: 1 disables event phases, 2 (default) runs subscribers of
                phase-1 events, N runs subscribers of phase N-1 events. Values outside
                1..``MAX_PHASES`` are clamped, with a warning.
            adapter: Model adapter for LLM agents (instead of the default LiteLLM one).
            event_bus: Bus that receives ``realtime.*`` events.
            desk: A desk whose event bus (and adapter, when neither ``adapter`` nor
                ``api_key`` is given) the engine uses.
            agent_timeout: Default seconds per agent run (``None``: no limit); an agent's
                ``config.timeout`` overrides it.
            clock: Time source for cooldowns and intervals.
            strict_reasoning_config: Registering an agent whose model looks like a reasoning
                model (``gpt-5*``, ``o1``/``o3``/``o4*``) without a ``reasoning_effort``
                raises ``AgentConfigurationError`` (``True``, default) or logs a warning.

        Raises:
            ConfigurationError: ``max_phases`` is not an integer, ``agent_timeout`` is not
                ``None`` or a number above 0, ``clock`` cannot be called, ``callbacks`` is
                not a list of handlers (each with at least one ``AgentCallbackHandler``
                hook, all of its hooks async), ``adapter``, ``event_bus`` or ``desk`` is not
                one, or ``api_key`` is not a string.
        """
        check_clock(clock)
        check_services(adapter, event_bus, desk)
        check_api_key(api_key, "")
        self.agents: list[BaseAgent] = []
        self.callbacks: list[AgentCallbackHandler] = check_callbacks(callbacks)
        self.max_phases = clamp_phases(check_phases(max_phases))
        self.strict_reasoning_config = strict_reasoning_config
        self.agent_timeout = check_timeout(agent_timeout)
        self.clock = clock
        self.condition_evaluator = ConditionEvaluator()
        self.event_bus = event_bus if event_bus is not None else getattr(desk, "event_bus", None)
        self._desk = desk
        self._api_key = api_key
        self._adapter = adapter
        self._owns_adapter = False
        self._order: dict[str, int] = {}
        self._next_index = 0
        self._registry_lock = threading.Lock()
        self.llm_client = LLMClient(adapter_provider=self.get_adapter)
        """The LLM client given to registered agents that have none (over ``get_adapter``)."""
        _ENGINE_CLIENTS.add(self.llm_client)

    def turn(
        self,
        context: AgentContext,
        *,
        trigger_type: TriggerType = TriggerType.TURN_BASED,
        trigger_metadata: dict[str, Any] | None = None,
        allowed_agent_ids: Sequence[str] | None = None,
        name: str | None = None,
    ) -> RealtimeTurn:
        """A desk runner for one turn: ``report = await desk.arun(engine.turn(ctx), job)``.

        The turn then gets a run record, its events are stored in order with the run, and
        the board's state is kept in the run's ``RunState.payload["blackboard"]``.

        Raises:
            TypeError, ValueError: as :meth:`process_turn`, here rather than in the run.
        """
        check_context(context, "turn")
        check_turn(trigger_type, allowed_agent_ids, trigger_metadata, "turn")
        return RealtimeTurn(
            self,
            context,
            trigger_type=trigger_type,
            trigger_metadata=trigger_metadata,
            allowed_agent_ids=allowed_agent_ids,
            name=name,
        )

    # ------------------------------------------------------------- registry

    def register_agent(self, agent: BaseAgent) -> None:
        """Add ``agent``; it gets the engine's clock, adapter and (if it has none) LLM client.

        Raises:
            ConfigurationError: ``agent`` is not a ``BaseAgent`` instance.
            AgentConfigurationError: another registered agent has the same id, or the
                agent's reasoning configuration is incomplete (see ``strict_reasoning_config``).
        """
        check_agent(agent)
        with self._registry_lock:
            problems = check_agents([*self.agents, agent], self.strict_reasoning_config)
            if problems:
                raise AgentConfigurationError("\n".join(problems))
            self._attach(agent)
            self._order = {**self._order, agent.config.id: self._next_index}
            self._next_index += 1
            self.agents = [*self.agents, agent]

    def replace_agents(self, agents: Sequence[BaseAgent]) -> None:
        """Swap the whole agent set at once (a hot reload of agent configs).

        All or nothing: every agent is checked first, and on a problem the old agents keep
        serving. Sessions keep their blackboards (the engine holds none); an agent whose id
        was registered before takes over its predecessor's cooldowns, so a reload does not
        make every agent fire at once. A turn already running finishes with the old set.

        Raises:
            ConfigurationError: ``agents`` is not a list of ``BaseAgent`` instances.
            AgentConfigurationError: duplicate ids or incomplete reasoning configuration
                (every problem is listed).
        """
        incoming = check_agents_given(agents)
        with self._registry_lock:
            problems = check_agents(incoming, self.strict_reasoning_config)
            if problems:
                raise AgentConfigurationError(
                    "agent reload rejected; the previous agents keep serving:\n"
                    + "\n".join(problems)
                )
            previous = {a.config.id: a for a in self.agents}
            for agent in incoming:
                old = previous.get(agent.config.id)
                if old is not None:
                    agent.copy_cooldowns_from(old)
                self._attach(agent)
            self._order = {a.config.id: i for i, a in enumerate(incoming)}
            self._next_index = len(incoming)
            self.agents = incoming

    def _attach(self, agent: BaseAgent) -> None:
        if agent.config.subscribed_events and TriggerType.EVENT not in agent.config.trigger_types:
            logger.warning(
                "agent %r subscribes to events but lacks TriggerType.EVENT; it will not run "
                "in event phases",
                agent.config.id,
            )
        agent.clock = self.clock
        agent.adapter_provider = self.get_adapter
        if agent.llm is None or agent.llm in _ENGINE_CLIENTS:  # none, or another engine's
            agent.llm = self.llm_client

    def unregister_agent(self, agent_id: str) -> bool:
        """Remove the agent with ``agent_id``; return whether it was registered."""
        with self._registry_lock:
            if agent_id not in self._order:
                return False
            self._order = {k: v for k, v in self._order.items() if k != agent_id}
            self.agents = [a for a in self.agents if a.config.id != agent_id]
            return True

    def get_event_subscribers(self, event_names: Iterable[str]) -> list[BaseAgent]:
        """The agents an event phase would wake for ``event_names``.

        An agent qualifies when it has ``TriggerType.EVENT`` and subscribes to at least one
        of the names (cooldowns and conditions are checked when the phase runs).

        Raises:
            TypeError: ``event_names`` is not a list (a string would be read as letters).
        """
        names = check_names(event_names, "get_event_subscribers")
        return [
            agent
            for agent in self.agents
            if TriggerType.EVENT in agent.config.trigger_types
            and not names.isdisjoint(agent.config.subscribed_events)
        ]

    def get_agent(self, agent_id: str) -> BaseAgent | None:
        """Return the registered agent with ``agent_id``, or ``None``."""
        return next((a for a in self.agents if a.config.id == agent_id), None)

    # -------------------------------------------------------------- adapter

    def get_adapter(self) -> BaseModelAdapter:
        """The model adapter for LLM agents, created on first use.

        Order: the ``adapter`` given; a ``LiteLLMAdapter`` with ``api_key``; the desk's
        adapter; a default ``LiteLLMAdapter``.
        """
        if self._adapter is None:
            if self._api_key is None and self._desk is not None:
                self._adapter = self._desk.adapter
            else:
                from deskwork.adapters.litellm import LiteLLMAdapter

                kwargs: dict[str, Any] = {} if self._api_key is None else {"api_key": self._api_key}
                self._adapter = LiteLLMAdapter(**kwargs)
                self._owns_adapter = True
        return self._adapter

    def update_api_key(self, api_key: str | None) -> None:
        """Use ``api_key`` from now on (the default adapter is rebuilt on next use).

        An adapter passed to the constructor is kept as is.

        Raises:
            ConfigurationError: ``api_key`` is not a string or ``None``.
        """
        check_api_key(api_key, ".update_api_key")
        self._api_key = api_key
        if self._owns_adapter:
            self._adapter = None
            self._owns_adapter = False

    # ------------------------------------------------------------- keywords

    def check_keyword_triggers(
        self, text: str, allowed_agent_ids: Sequence[str] | None = None
    ) -> list[tuple[BaseAgent, str]]:
        """Return ``(agent, keyword)`` for each agent with a keyword found in ``text``.

        Keyword detection is the host's job; this is a helper for it. Matching is
        case-insensitive substring matching; each agent appears once (first keyword).

        Raises:
            TypeError: ``text`` is not a string, or ``allowed_agent_ids`` is not ``None`` or
                a list of agent ids.
        """
        check_text(text, "check_keyword_triggers")
        allowed = check_ids(allowed_agent_ids, "check_keyword_triggers")
        matches: list[tuple[BaseAgent, str]] = []
        for agent in self.agents:
            if allowed is not None and agent.config.id not in allowed:
                continue
            keyword = match_keyword(agent.config.trigger_keywords, text)
            if keyword is not None:
                matches.append((agent, keyword))
        return matches

    # ----------------------------------------------------------------- turns

    async def process_turn(
        self,
        context: AgentContext,
        allowed_agent_ids: Sequence[str] | None = None,
        trigger_type: TriggerType = TriggerType.TURN_BASED,
        trigger_metadata: dict[str, Any] | None = None,
        *,
        emit: EventEmitter | None = None,
    ) -> AgentResponse:
        """Run one turn and return the aggregated response.

        Args:
            context: The turn's context. The engine sets its ``trigger_type``, merges
                ``trigger_metadata`` into it, creates its ``blackboard`` if missing and
                refreshes its ``shared_state`` from the board's variables afterwards.
            allowed_agent_ids: Hard allow-list for every phase (``None``: all agents;
                an empty list: none).
            trigger_type: What triggered the turn.
            trigger_metadata: Trigger details, merged over ``context.trigger_metadata``.
            emit: Send the turn's events through this emitter (a desk run's) instead of
                the engine's bus; :meth:`turn` uses it so a turn is a stored desk run.

        Returns:
            Insights of every phase (registration order within a phase), every event, the
            final variable values written, queue pushes, facts, memory and data by agent id,
            and ``debug_info`` with the phase trace.

        Raises:
            TypeError: ``context`` is not an ``AgentContext``, ``allowed_agent_ids`` is not
                ``None`` or a list of agent ids (a string is not split into letters), or
                ``trigger_metadata`` is not ``None`` or a mapping.
            ValueError: ``trigger_type`` is not a ``TriggerType``.
        """
        check_context(context, "process_turn")
        checked = check_turn(trigger_type, allowed_agent_ids, trigger_metadata, "process_turn")
        turn = self._start_turn(context, *checked)
        notifier = Notifier(self.callbacks, self.event_bus, emit, self.agent_timeout)
        with turn_scope(turn.turn_id):
            await notifier.turn_started(turn)
            try:
                response = await self._run_turn(turn, notifier)
            except (Exception, asyncio.CancelledError) as exc:  # still close the turn
                await notifier.turn_failed(turn, exc)
                raise
            await notifier.turn_completed(turn, response)
        return response

    async def _run_turn(self, turn: Turn, notifier: Notifier) -> AgentResponse:
        """Run the phases, clear the turn's events and build the aggregated response."""
        try:
            await self._run_phases(turn, notifier)
        finally:
            if turn.events_seen:
                turn.board._change("events", _without(turn.events_seen), ENGINE_SOURCE, default=[])
        turn.context.shared_state.update(public_variables(turn.board.variables))
        return turn.result()

    def _start_turn(
        self,
        context: AgentContext,
        trigger_type: TriggerType,
        allowed: frozenset[str] | None,
        trigger_metadata: dict[str, Any],
    ) -> Turn:
        """Record the trigger on ``context`` and prepare the board for the turn."""
        context.trigger_type = trigger_type
        context.trigger_metadata = {**context.trigger_metadata, **trigger_metadata}
        if context.blackboard is None:
            context.blackboard = Blackboard()
        seeds = public_variables(context.shared_state)
        system = {
            "sys.turn_count": context.turn_count,
            "sys.session_id": context.session_id,
            "sys.trigger_type": trigger_type.value,
        }

        def prepare(variables: dict[str, Any]) -> dict[str, Any]:
            new = {k: v for k, v in seeds.items() if k not in variables}
            return {**variables, **new, **system}

        context.blackboard._change("variables", prepare, ENGINE_SOURCE, default={})
        return Turn(new_id(), context, context.blackboard, trigger_type, allowed)

    async def _run_phases(self, turn: Turn, notifier: Notifier) -> None:
        """Run phase 1, then event phases while events arrive and ``max_phases`` allows."""
        dispatch: list[Event] = turn.board.events  # events the host left on the board
        turn.events_seen.extend(event.model_dump(mode="json") for event in dispatch)
        for phase in range(1, self.max_phases + 1):
            names = list(dict.fromkeys(e.name for e in dispatch))
            if phase > 1 and not names:
                break
            emitted = await self._run_phase(turn, notifier, phase, names if phase > 1 else [])
            dispatch = [*dispatch, *emitted] if phase == 1 else emitted

    async def _run_phase(
        self, turn: Turn, notifier: Notifier, phase: int, trigger_events: list[str]
    ) -> list[Event]:
        """Select, run and merge one phase; return the events it emitted."""
        record = PhaseRecord(phase, trigger_events)
        turn.phases.append(record)
        started = time.perf_counter()
        snapshot = turn.board.frozen_copy()
        selected = await self._select(turn, notifier, record, snapshot)
        if not selected:
            return []
        await notifier.phase_started(turn, record, selected)
        base = _phase_state(turn.context, snapshot)
        outcomes = await gather_or_cancel(
            *(
                self._run_agent(
                    turn,
                    notifier,
                    phase,
                    agent,
                    self._agent_context(turn, snapshot, base, phase, trigger_events),
                )
                for agent in selected
            )
        )
        emitted = self._merge(turn, record, list(zip(selected, outcomes, strict=True)))
        record.duration_ms = (time.perf_counter() - started) * 1000
        await notifier.phase_completed(turn, record)
        return emitted

    async def _select(
        self, turn: Turn, notifier: Notifier, record: PhaseRecord, snapshot: Blackboard
    ) -> list[BaseAgent]:
        """Return the agents that run in this phase; report the skipped candidates."""
        meta = turn.meta(record.phase, _phase_trigger(turn, record.phase))
        selected: list[BaseAgent] = []
        for agent in list(self.agents):
            reason = self._skip_reason(turn, agent, record, snapshot, meta)
            if reason is None:
                selected.append(agent)
            elif reason not in QUIET_REASONS:
                record.agents_skipped[agent.config.id] = reason
                await notifier.agent_skipped(turn, record.phase, agent, reason)
        return selected

    def _skip_reason(
        self,
        turn: Turn,
        agent: BaseAgent,
        record: PhaseRecord,
        snapshot: Blackboard,
        meta: dict[str, Any],
    ) -> str | None:
        """Why ``agent`` does not run in this phase, or ``None`` if it runs."""
        config = agent.config
        if not turn.allows(config.id):
            return "not_allowed"
        phase_trigger = _phase_trigger(turn, record.phase)
        if phase_trigger == TriggerType.FORCE:
            return None
        if record.phase == 1:
            reason = trigger_skip_reason(
                agent, phase_trigger, turn.context.trigger_metadata, turn.session_id
            )
        elif phase_trigger in config.trigger_types and not set(config.subscribed_events).isdisjoint(
            record.trigger_events
        ):
            reason = None
        else:
            reason = "trigger_type_mismatch"
        if reason is not None:
            return reason
        if agent.cooldown_remaining(turn.session_id, agent.effective_cooldown(turn.context)) > 0:
            return "cooldown"
        conditions = config.conditions
        if conditions is not None and not self.condition_evaluator.evaluate(
            conditions, snapshot, meta, config.id
        ):
            return "conditions_not_met"
        return None

    def _agent_context(
        self,
        turn: Turn,
        snapshot: Blackboard,
        base: dict[str, Any],
        phase: int,
        trigger_events: list[str],
    ) -> AgentContext:
        """The context one agent of a phase receives: its own copy, over the shared snapshot.

        Each agent gets its own containers (``base`` is copied per agent; segments are
        immutable), so an agent that changes its context cannot change what the other
        agents of the phase or the host see.
        """
        host = turn.context
        metadata = copy_json(host.trigger_metadata)
        if phase > 1:
            metadata["trigger_events"] = list(trigger_events)
        return host.model_copy(
            update={
                "blackboard": snapshot,
                "shared_state": copy_json(base),
                "trigger_type": _phase_trigger(turn, phase),
                "trigger_metadata": metadata,
                "phase": phase,
                "recent_segments": list(host.recent_segments),
                "rag_docs": list(host.rag_docs),
            }
        )

    async def _run_agent(
        self,
        turn: Turn,
        notifier: Notifier,
        phase: int,
        agent: BaseAgent,
        context: AgentContext,
    ) -> _Outcome:
        """Run one agent with its timeout; never raises (except cancellation)."""
        started = time.perf_counter()
        await notifier.agent_started(turn, phase, agent, context)
        timeout = agent.config.timeout if agent.config.timeout is not None else self.agent_timeout
        deadline = asyncio.timeout(timeout)
        before = agent._run_record(turn.session_id)
        try:
            async with deadline:
                response = await agent.process(context)
            if response is not None:
                response = normalize_response(response, agent.config.id)
        except (Exception, asyncio.CancelledError) as exc:
            if isinstance(exc, asyncio.CancelledError) and task_cancelling():
                agent._undo_run(turn.session_id, before)  # a barge-in: no cooldown from it
                raise  # the turn is cancelled, not just something the agent awaited
            error = _agent_error(agent, exc, timeout if deadline.expired() else None)
            await notifier.agent_failed(turn, phase, agent, error, time.perf_counter() - started)
            return _error_response(agent, error), True
        if response is None:
            await notifier.agent_skipped(turn, phase, agent, "cooldown")
            return None
        await notifier.agent_completed(turn, phase, agent, response, time.perf_counter() - started)
        return response, False

    def _merge(
        self, turn: Turn, record: PhaseRecord, results: list[tuple[BaseAgent, _Outcome]]
    ) -> list[Event]:
        """Apply successful responses to the board; collect everything into the turn."""
        contributions: list[Contribution] = []
        for agent, outcome in results:
            if outcome is None:
                continue
            response, failed = outcome
            agent_id = agent.config.id
            turn.add_response(agent_id, response)
            if failed:
                record.agents_failed.append(agent_id)
                continue
            record.agents_run.append(agent_id)
            index = self._order.get(agent_id, len(self._order))
            contributions.append(Contribution(agent_id, agent.config.priority, index, response))
        turn.add_changes(apply_phase(turn.board, contributions))
        emitted = [event for item in contributions for event in item.response.events]
        turn.board.emit_events(emitted, author=ENGINE_SOURCE)
        turn.events_seen.extend(event.model_dump(mode="json") for event in emitted)
        record.events_emitted = [event.name for event in emitted]
        return emitted


def public_variables(variables: dict[str, Any]) -> dict[str, Any]:
    """``variables`` without the engine's reserved ``sys.*`` keys (kept out of shared_state)."""
    return {k: v for k, v in variables.items() if not k.startswith(RESERVED_PREFIX)}


def clamp_phases(max_phases: int) -> int:
    """``max_phases`` within 1..``MAX_PHASES`` (a warning when it had to be clamped)."""
    clamped = min(max(max_phases, 1), MAX_PHASES)
    if clamped != max_phases:
        logger.warning(
            "max_phases=%r is outside the supported range 1..%d; using %d",
            max_phases,
            MAX_PHASES,
            clamped,
        )
    return clamped


REASONING_PREFIXES: Final = ("gpt-5", "o1", "o3", "o4")
"""Model names (after any ``provider/`` prefix) that look like reasoning models."""
NON_REASONING_MARKERS: Final = ("-chat",)
"""Name parts of models under those prefixes that do not reason (``gpt-5-chat-latest``)."""


def looks_reasoning_capable(model: str) -> bool:
    """Whether ``model`` looks like a reasoning model (an advisory name check)."""
    name = model.rsplit("/", 1)[-1].lower()
    if any(marker in name for marker in NON_REASONING_MARKERS):
        return False
    return name.startswith(REASONING_PREFIXES)


def check_agents(agents: Sequence[BaseAgent], strict_reasoning: bool) -> list[str]:
    """Problems that prevent registering ``agents`` together (empty: none).

    Duplicate ids are always problems. A reasoning model without ``reasoning_effort`` is one
    when ``strict_reasoning`` (else it is logged as a warning).
    """
    problems: list[str] = []
    seen: set[str] = set()
    for agent in agents:
        config = agent.config
        if config.id in seen:
            problems.append(f"an agent with id {config.id!r} is already registered")
        seen.add(config.id)
        if config.reasoning_effort is None and looks_reasoning_capable(config.model):
            message = (
                f"agent {config.id!r} uses {config.model!r}, which looks like a reasoning "
                "model, without a reasoning_effort; the provider default can be slow and "
                'costly in real time. Fix: set "reasoning_effort" in its model_config '
                '(e.g. "minimal" or "low"), or build the engine with '
                "AgentEngine(strict_reasoning_config=False)"
            )
            if strict_reasoning:
                problems.append(message)
            else:
                logger.warning(message)
    return problems


def _without(seen: list[dict[str, Any]]) -> Any:
    """An update of the board's events that removes ``seen`` (once each): the events a turn
    dispatched or emitted. One the host emitted meanwhile stays for the next turn."""

    def drop(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
        left = list(seen)
        kept = []
        for event in events:
            if event in left:
                left.remove(event)
            else:
                kept.append(event)
        return kept

    return drop


def _phase_state(host: AgentContext, snapshot: Blackboard) -> dict[str, Any]:
    """The phase's v1 ``shared_state``: host state, board variables and ``memory_<id>``."""
    memory = {f"memory_{agent_id}": mem for agent_id, mem in snapshot.memory.items()}
    return {**public_variables(host.shared_state), **public_variables(snapshot.variables), **memory}


def _phase_trigger(turn: Turn, phase: int) -> TriggerType:
    """The trigger agents of ``phase`` see: the turn's in phase 1, ``EVENT`` after."""
    return turn.trigger_type if phase == 1 else TriggerType.EVENT


def _agent_error(agent: BaseAgent, error: BaseException, expired: float | None) -> BaseException:
    """The error a failed agent is reported with. ``expired`` is the engine's timeout when it
    is what stopped the agent: a ``TimeoutError`` the agent raised itself (its own
    ``wait_for``) is reported as the agent's, not as the engine's ``agent_timeout``."""
    agent_id = agent.config.id
    if expired is not None and isinstance(error, TimeoutError):
        return TimeoutError(f"agent {agent_id!r} timed out after {expired}s")
    if isinstance(error, asyncio.CancelledError) and not exception_text(error):
        return asyncio.CancelledError(f"something agent {agent_id!r} awaited was cancelled")
    return error


def _error_response(agent: BaseAgent, error: BaseException) -> AgentResponse:
    """The single ``error`` insight a failing agent contributes."""
    message = describe_error(error)
    insight = AgentInsight(
        agent_id=agent.config.id,
        agent_name=agent.config.name,
        type=InsightType.ERROR,
        content=f"Agent '{agent.config.name}' failed: {message}",
        metadata={"error_type": type(error).__name__},
    )
    return AgentResponse(insights=[insight], debug_info={"error": message})


class RealtimeTurn:
    """One engine turn as a desk runner (``runner_type = "realtime"``); turns never pause."""

    runner_type = "realtime"

    def __init__(
        self,
        engine: AgentEngine,
        context: AgentContext,
        *,
        trigger_type: TriggerType = TriggerType.TURN_BASED,
        trigger_metadata: dict[str, Any] | None = None,
        allowed_agent_ids: Sequence[str] | None = None,
        name: str | None = None,
    ) -> None:
        self.engine = engine
        self.context = context
        self.trigger_type = trigger_type
        self.trigger_metadata = trigger_metadata
        self.allowed_agent_ids = allowed_agent_ids
        self.name = name or f"realtime:{context.session_id}"

    async def arun(self, config: RunConfig, job: Job) -> tuple[Report, RunState]:
        """Run the turn with the run's emitter; the report's data is the AgentResponse."""
        response = await self.engine.process_turn(
            self.context,
            allowed_agent_ids=self.allowed_agent_ids,
            trigger_type=self.trigger_type,
            trigger_metadata=self.trigger_metadata,
            emit=config.emit,
        )
        lines = [i.content for i in response.insights if getattr(i, "content", None)]
        report = Report(
            run_id=config.run_id,
            status="completed",
            content="\n".join(str(line) for line in lines) or None,
            data=response,
            metrics={"insights": len(response.insights)},
        )
        board = self.context.blackboard
        state = RunState(
            run_id=config.run_id,
            status="completed",
            runner_type=self.runner_type,
            runner_name=self.name,
            job=job.to_state(),
            metrics=report.metrics,
            payload={
                "session_id": self.context.session_id,
                "turn_count": self.context.turn_count,
                "blackboard": board.to_state() if board is not None else None,
            },
        )
        return report, state

    async def aresume(
        self, config: RunConfig, state: RunState, decision: Any, job: Job | None = None
    ) -> tuple[Report, RunState]:
        """Realtime turns never pause, so there is nothing to resume."""
        report = Report(
            run_id=config.run_id, status="failed", errors=["realtime turns do not pause"]
        )
        return report, state.model_copy(update={"status": "failed"})
