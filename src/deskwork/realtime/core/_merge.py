"""Turning agent responses into blackboard changes (the pure part of the engine).

``normalize_response`` maps v1 fields, stamps sources and proves every update is JSON, so a
response that cannot be stored fails *before* anything is written. ``apply_phase`` then merges
the successful responses of one phase in ascending ``(priority, registration index)`` order,
one atomic ``update`` per container.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from deskwork._logs import get_stdlib_logger
from deskwork.collaboration._blackboard import to_json_value
from deskwork.realtime.core.blackboard import RESERVED_PREFIX, Blackboard, put_fact
from deskwork.realtime.core.events import ENGINE_SOURCE
from deskwork.realtime.core.models import AgentInsight, AgentResponse, Event, Fact

__all__ = ["Contribution", "PhaseChanges", "apply_phase", "normalize_response"]

logger = get_stdlib_logger(__name__)


@dataclass(frozen=True, slots=True)
class Contribution:
    """A successful agent response with what decides its merge order."""

    agent_id: str
    priority: int
    index: int
    """Registration order (tie-break: later registration writes later)."""
    response: AgentResponse


@dataclass(slots=True)
class PhaseChanges:
    """What one phase wrote to the board."""

    variables: dict[str, Any] = field(default_factory=dict)
    queue_pushes: dict[str, list[Any]] = field(default_factory=dict)
    memory: dict[str, dict[str, Any]] = field(default_factory=dict)


def normalize_response(response: AgentResponse, agent_id: str) -> AgentResponse:
    """Check, map v1 fields onto v2 ones, stamp sources, and convert every update to JSON.

    ``state_updates`` become ``variable_updates`` (v2 keys win), except ``memory_<agent_id>``
    which merges into the agent's memory. ``sys.*`` variables are dropped (engine-owned).
    A queue push that is not a list is treated as one item.

    Raises:
        TypeError: ``response`` is not an ``AgentResponse``, an update (an event or a
            fact included) is not JSON-serializable, or a name or key in one holds a lone
            surrogate (a saved board cannot hold one as a key).
        pydantic.ValidationError: a field was changed after construction to a value of the
            wrong type (e.g. a string appended to ``insights``).
    """
    if not isinstance(response, AgentResponse):
        raise TypeError(
            f"agent {agent_id!r} returned {type(response).__name__}, not an AgentResponse"
        )
    if not _as_built(response):  # changed after it was built: validate it again
        response = type(response).model_validate(response.__dict__)
    own_memory_key = f"memory_{agent_id}"
    variables = {k: v for k, v in response.state_updates.items() if k != own_memory_key}
    variables.update(response.variable_updates)
    for key in [key for key in variables if key.startswith(RESERVED_PREFIX)]:
        logger.warning("agent %r may not write reserved variable %r; ignored", agent_id, key)
        del variables[key]
    memory: dict[str, Any] = {}
    legacy_memory = response.state_updates.get(own_memory_key)
    if isinstance(legacy_memory, Mapping):
        memory.update(legacy_memory)
    memory.update(response.memory_updates)
    pushes = {k: v if isinstance(v, list) else [v] for k, v in response.queue_pushes.items()}
    events, facts = response.events, response.facts
    raw = {
        "variables": variables,
        "memory": memory,
        "pushes": pushes,
        "payloads": [e.payload for e in events],
        "values": [f.value for f in facts],
        "numbers": [e.timestamp for e in events]  # NaN or infinity: not JSON
        + [n for f in facts for n in (f.confidence, f.timestamp)],
    }
    data = to_json_value(raw, label=f"updates of agent {agent_id!r}")
    return response.model_copy(
        update={
            "variable_updates": data["variables"],
            "state_updates": {},
            "memory_updates": data["memory"],
            "queue_pushes": data["pushes"],
            "events": [
                _stamp(e, agent_id, payload=p)
                for e, p in zip(events, data["payloads"], strict=True)
            ],
            "facts": [
                _stamp(f, agent_id, value=v) for f, v in zip(facts, data["values"], strict=True)
            ],
        }
    )


_LIST_FIELDS: Final = (
    ("insights", frozenset({AgentInsight})),
    ("events", frozenset({Event})),
    ("facts", frozenset({Fact})),
)
_DICT_FIELDS: Final = tuple(
    name for name in AgentResponse.model_fields if name not in dict(_LIST_FIELDS)
)
_NAMES: Final = frozenset({str})


def _as_built(response: AgentResponse) -> bool:
    """Whether ``response`` still has the shape its validation gave it: an exact
    ``AgentResponse`` whose list fields hold their own models and whose other fields are
    dicts keyed by strings.

    Its lists and dicts are mutable (``response.insights.append("text")``), so a reply is
    checked again before it is merged; this test passes the common case in half the time
    of a validation. Anything else (a subclass, an item of another type, a field that is
    no longer a dict) is validated in full.
    """
    if type(response) is not AgentResponse:
        return False
    fields = response.__dict__
    for name, models in _LIST_FIELDS:
        items = fields[name]
        if type(items) is not list or (items and not set(map(type, items)) <= models):
            return False
    for name in _DICT_FIELDS:
        mapping = fields[name]
        if type(mapping) is not dict or (mapping and not set(map(type, mapping)) <= _NAMES):
            return False
    return True


def _stamp(item: Event | Fact, agent_id: str, **json_fields: Any) -> Any:
    """Copy an event or fact with its source set and its value replaced by the JSON form."""
    return item.model_copy(update={"source_agent": item.source_agent or agent_id, **json_fields})


def apply_phase(board: Blackboard, contributions: Sequence[Contribution]) -> PhaseChanges:
    """Merge the responses of one phase into ``board`` (ascending priority: highest wins).

    Returns:
        The variables written (final values), queue pushes and memory changes.
    """
    ordered = sorted(contributions, key=lambda c: (c.priority, c.index))
    changes = PhaseChanges()
    for item in ordered:
        changes.variables.update(item.response.variable_updates)
        for name, items in item.response.queue_pushes.items():
            changes.queue_pushes.setdefault(name, []).extend(items)
        if item.response.memory_updates:
            mine = changes.memory.setdefault(item.agent_id, {})
            mine.update(item.response.memory_updates)
    if changes.variables:
        written = changes.variables
        board._change("variables", lambda v: {**v, **written}, ENGINE_SOURCE, default={})
    if changes.queue_pushes:
        board._change("queues", _pusher(changes.queue_pushes), ENGINE_SOURCE, default={})
    if changes.memory:
        board._change("memory", _memory_merger(changes.memory), ENGINE_SOURCE, default={})
    _merge_facts(board, ordered)
    return changes


def _pusher(pushes: dict[str, list[Any]]) -> Any:
    def push(queues: dict[str, list[Any]]) -> dict[str, list[Any]]:
        for name, items in pushes.items():
            queues.setdefault(name, []).extend(items)
        return queues

    return push


def _memory_merger(changes: dict[str, dict[str, Any]]) -> Any:
    def merge(memory: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
        for agent_id, updates in changes.items():
            memory[agent_id] = {**memory.get(agent_id, {}), **updates}
        return memory

    return merge


def _with_priority(fact: Fact, priority: int) -> Fact:
    return fact.model_copy(update={"priority": priority})


def _merge_facts(board: Blackboard, ordered: Sequence[Contribution]) -> None:
    """Add facts: higher priority wins, then higher confidence, then later registration.

    Each fact is stamped with its agent's priority. A fact from an earlier (lower-ranked)
    contribution of this phase is always replaced by a later one for the same ``(type, key)``;
    a fact already on the board is replaced only by an equal or higher ``(priority,
    confidence)`` (``Blackboard.add_fact`` semantics).
    """
    ranked: list[tuple[tuple[int, float, int], Fact]] = [
        (
            (item.priority, fact.confidence, item.index),
            fact.model_copy(update={"priority": item.priority}),
        )
        for item in ordered
        for fact in item.response.facts
    ]
    if not ranked:
        return
    ranked.sort(key=lambda pair: pair[0])
    incoming = [fact.model_dump(mode="json") for _, fact in ranked]

    def add(facts: list[dict[str, Any]]) -> list[dict[str, Any]]:
        added: list[dict[str, Any]] = []
        for fact in incoming:
            if put_fact(facts, fact, override=lambda old: any(old is new for new in added)):
                added.append(fact)
        return facts

    board._change("facts", add, ENGINE_SOURCE, default=[])
