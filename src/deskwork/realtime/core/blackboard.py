"""The realtime ``Blackboard``: deskwork's one shared board, seen as five containers.

``deskwork.realtime.Blackboard`` *is* a :class:`deskwork.collaboration.Blackboard`. It keeps
each container under its own board key and changes it only through the board's atomic
``update``, so concurrent writers never lose a change and ``to_state()`` / ``from_state()``
carry a session's board across a restart::

    board key     container                          lifetime
    "variables"   {name: JSON value}                 session
    "events"      [Event as JSON, ...]               cleared after each turn
    "queues"      {name: [item, ...]}  (FIFO)        session
    "facts"       [Fact as JSON, ...]  (type, key)   session
    "memory"      {agent_id: {name: JSON value}}     session

Reading a container attribute (``board.variables``, ``board.facts`` ...) returns a fresh
snapshot: changing it does not change the board. Write with the operations
(``set_var``, ``push_queue``, ``add_fact`` ...); a variable name, queue name or agent id that
is not a string is a ``TypeError`` (JSON would rename ``None`` to ``"null"``), and so is a
name or key holding a lone surrogate, anywhere in a write (no saved board could keep it;
the shared board refuses it). A *frozen*
copy (``frozen_copy()``) is what agents see during a phase; writing to it raises
:class:`ReadOnlyBlackboardError`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, Final

from pydantic import GetCoreSchemaHandler, GetJsonSchemaHandler, ValidationError
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import core_schema

from deskwork._logs import get_stdlib_logger
from deskwork.collaboration import Blackboard as _SharedBlackboard
from deskwork.collaboration import BlackboardEntry
from deskwork.collaboration._blackboard import check_name, copy_json, lone_surrogate_key
from deskwork.exceptions import DeskworkError
from deskwork.realtime.core._persist import load_board_state, save_board
from deskwork.realtime.core._records import Event, Fact
from deskwork.utils import escape_surrogates, is_items

if TYPE_CHECKING:
    from deskwork.store.session import SessionStore

__all__ = [
    "CONTAINERS",
    "DEFAULT_AUTHOR",
    "RESERVED_PREFIX",
    "Blackboard",
    "ReadOnlyBlackboardError",
    "put_fact",
]

CONTAINERS: Final = ("variables", "events", "queues", "facts", "memory")
"""The board keys that hold the five containers."""
RESERVED_PREFIX: Final = "sys."
"""Variables under this prefix are written by the engine only."""
DEFAULT_AUTHOR: Final = "realtime"
"""Author recorded for writes made through the container operations."""
logger = get_stdlib_logger("deskwork.realtime.blackboard")
_ITEM_MODELS: Final[dict[str, type[Event] | type[Fact]]] = {"events": Event, "facts": Fact}
_EMPTY: Final[dict[str, Callable[[], Any]]] = {
    "variables": dict,
    "events": list,
    "queues": dict,
    "facts": list,
    "memory": dict,
}


class ReadOnlyBlackboardError(DeskworkError, RuntimeError):
    """A write to a frozen board (the snapshot agents read during a phase).

    Agents change the board by returning updates in their ``AgentResponse``.
    """


def put_fact(
    facts: list[dict[str, Any]],
    fact: dict[str, Any],
    *,
    override: Callable[[dict[str, Any]], bool] | None = None,
) -> bool:
    """Insert ``fact`` into a JSON fact list, deduplicating by ``(type, key)``.

    With ``key=None`` the fact replaces any fact of its type. A duplicate is replaced when
    ``override(existing)`` is true or the new ``(priority, confidence)`` is at least the old
    one (higher priority wins; at equal priority, higher or equal confidence); the new fact
    moves to the end of the list.

    Returns:
        Whether the list changed.
    """
    key = fact.get("key")
    for index, existing in enumerate(facts):
        if existing.get("type") == fact["type"] and (key is None or existing.get("key") == key):
            wins = _rank(fact) >= _rank(existing)
            if wins or (override is not None and override(existing)):
                del facts[index]
                facts.append(fact)
                return True
            return False
    facts.append(fact)
    return True


def _rank(fact: Mapping[str, Any]) -> tuple[int, float]:
    return int(fact.get("priority") or 0), float(fact.get("confidence", 1.0))


class Blackboard(_SharedBlackboard):
    """Structured shared state for realtime agents, stored on a deskwork board.

    Example:
        ```python
        board = Blackboard(variables={"phase": "discovery"})
        board.push_queue("pending_questions", "What's the price?")
        board.add_fact(Fact(type="budget", value=50_000, source_agent="host"))
        state = board.to_state()               # JSON; Blackboard.from_state(state) restores it
        ```
    """

    def __init__(
        self,
        *,
        variables: Mapping[str, Any] | None = None,
        events: Iterable[Event | Mapping[str, Any]] | None = None,
        queues: Mapping[str, Iterable[Any]] | None = None,
        facts: Iterable[Fact | Mapping[str, Any]] | None = None,
        memory: Mapping[str, Mapping[str, Any]] | None = None,
    ) -> None:
        """Create a board, optionally filling its containers.

        Args:
            variables: Initial session variables.
            events: Initial pending events (``Event`` or dicts).
            queues: Initial queues, by name.
            facts: Initial facts (``Fact`` or dicts), deduplicated as by ``add_fact``.
            memory: Initial agent memories, by agent id.
        """
        super().__init__()
        self._frozen = False
        self._cache: dict[str, Any] | None = None
        initial: dict[str, Any] = {
            "variables": _named("variables", "variable name", variables),
            "events": [_event_json(e) for e in _items(events or (), "events")],
            "queues": {
                name: _items(items, f"items of queue {name!r}", _ONE_ITEM)
                for name, items in _named("queues", "queue name", queues).items()
            },
            "facts": [],
            "memory": {
                agent: _named(f"memory of agent {agent!r}", "memory key", mem)
                for agent, mem in _named("memory", "agent id", memory).items()
            },
        }
        for fact in _items(facts or (), "facts"):
            put_fact(initial["facts"], _fact_json(fact))
        for key in CONTAINERS:
            self.write(key, initial[key], author=DEFAULT_AUTHOR)

    def __repr__(self) -> str:
        """Summarize the containers."""
        sizes = ", ".join(f"{key}={len(self._container(key))}" for key in CONTAINERS)
        return f"Blackboard({sizes}, frozen={self._frozen})"

    # ------------------------------------------------------------ containers

    @property
    def frozen(self) -> bool:
        """Whether this board is a read-only snapshot."""
        return self._frozen

    @property
    def variables(self) -> dict[str, Any]:
        """A snapshot of the session variables."""
        variables: dict[str, Any] = self._read_container("variables")
        return variables

    @property
    def events(self) -> list[Event]:
        """The events pending this turn (emitted by agents or the host)."""
        return [Event.model_validate(e) for e in self._container("events")]

    @property
    def queues(self) -> dict[str, list[Any]]:
        """A snapshot of every queue, by name."""
        queues: dict[str, list[Any]] = self._read_container("queues")
        return queues

    @property
    def facts(self) -> list[Fact]:
        """The facts on the board, oldest first."""
        return [Fact.model_validate(f) for f in self._container("facts")]

    @property
    def memory(self) -> dict[str, dict[str, Any]]:
        """A snapshot of every agent's private memory, by agent id."""
        memory: dict[str, dict[str, Any]] = self._read_container("memory")
        return memory

    def as_dict(self) -> dict[str, Any]:
        """Return all five containers as one JSON-compatible dict (a fresh copy)."""
        return {key: self._read_container(key) for key in CONTAINERS}

    def to_dict(self) -> dict[str, Any]:
        """The five containers as JSON (a fresh copy); ``from_dict`` restores a board."""
        return self.as_dict()

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Blackboard:
        """Build a board from ``to_dict()`` output (missing containers start empty).

        Raises:
            TypeError: ``data`` is not a mapping, or a container has the wrong type.
            ValueError: ``data`` has keys that are not containers.
        """
        if not isinstance(data, Mapping):
            raise TypeError(
                f"Blackboard.from_dict needs a mapping of containers, got {type(data).__name__}"
            )
        return cls.model_validate(dict(data))

    def snapshot(self) -> Blackboard:  # type: ignore[override]  # 2.6 API: a board, not a dict
        """Return an independent, writable copy of this board (also of a frozen one).

        Unlike ``deskwork.collaboration.Blackboard.snapshot`` (a dict of values; use
        ``to_dict()`` for that here), this returns a ``Blackboard``, as the realtime API
        documents. Authors and versions are kept.
        """
        return type(self).from_state(self.to_state())

    def save_to(self, store: SessionStore, session_id: str) -> None:
        """Store this board in a deskwork session store (see ``_persist``)."""
        save_board(store, session_id, self.to_state())

    @classmethod
    def load_from(cls, store: SessionStore, session_id: str) -> Blackboard | None:
        """The board saved with ``save_to`` for ``session_id``, or ``None``."""
        state = load_board_state(store, session_id)
        return None if state is None else cls.from_state(state)

    def model_dump(self, **_: Any) -> dict[str, Any]:
        """Same as ``as_dict`` (kept for code written against a Pydantic board)."""
        return self.as_dict()

    @classmethod
    def model_validate(cls, data: Blackboard | Mapping[str, Any]) -> Blackboard:
        """Build a board from ``as_dict()`` output, ``to_state()`` output, or return a board."""
        if isinstance(data, Blackboard):
            return data
        if isinstance(data, _SharedBlackboard):
            raise ValueError(
                "expected a deskwork.realtime.Blackboard (the shared board with realtime "
                f"containers), got {type(data).__name__}; build one with "
                "deskwork.realtime.Blackboard.from_state(board.to_state())"
            )
        if not isinstance(data, Mapping):
            raise ValueError("a Blackboard is built from a mapping of containers or a state")
        if "entries" in data and "version" in data:
            return cls.from_state(data)
        unknown = set(data) - set(CONTAINERS)
        if unknown:
            raise ValueError(f"unknown Blackboard containers: {sorted(unknown)}")
        return cls(**data)

    def frozen_copy(self) -> Blackboard:
        """Return a read-only copy of this board (what agents read during a phase).

        The copy shares the board's entry snapshots (which the shared board never changes in
        place) and keeps one private copy of the containers for fast reads.
        """
        board = type(self).__new__(type(self))
        _SharedBlackboard.__init__(board)
        with self._lock:
            entries = dict(self._entries)
        board._entries = entries
        board._cache = {
            key: _conform(key, copy_json(entries[key].value) if key in entries else None)
            for key in CONTAINERS
        }
        board._frozen = True
        return board

    def containers_view(self) -> dict[str, Any]:
        """All five containers for reading without a copy when frozen.

        For use inside ``deskwork.realtime`` (prompt rendering): the result of a frozen board
        is shared by every reader and must not be mutated. A live board returns copies.
        """
        if self._cache is not None:
            return self._cache
        return {key: self._read_container(key) for key in CONTAINERS}

    # ---------------------------------------------------------------- events

    def emit_event(self, event: Event, *, author: str = DEFAULT_AUTHOR) -> None:
        """Append ``event`` to the pending events (no deduplication)."""
        item = _event_json(event)
        self._change("events", lambda events: [*events, item], author, default=[])

    def emit_events(self, events: Iterable[Event], *, author: str = DEFAULT_AUTHOR) -> None:
        """Append several events in one atomic write."""
        items = [_event_json(e) for e in _items(events, "events")]
        if items:
            self._change("events", lambda current: [*current, *items], author, default=[])

    def has_event(self, event_name: str) -> bool:
        """Return whether an event called ``event_name`` is pending."""
        return any(e.get("name") == event_name for e in self._container("events"))

    def get_events_by_name(self, event_name: str) -> list[Event]:
        """Return the pending events called ``event_name``."""
        return [e for e in self.events if e.name == event_name]

    def count_events(self, event_name: str | None = None) -> int:
        """Return how many pending events are called ``event_name`` (``None``: all of them)."""
        events = self._container("events")
        if event_name is None:
            return len(events)
        return sum(1 for e in events if e.get("name") == event_name)

    def clear_events(self, *, author: str = DEFAULT_AUTHOR) -> None:
        """Remove every pending event (the engine does this after each turn)."""
        self.write("events", [], author)

    # ------------------------------------------------------------- variables

    def set_var(self, key: str, value: Any, *, author: str = DEFAULT_AUTHOR) -> None:
        """Set the session variable ``key``.

        ``sys.*`` keys belong to the engine: writing one logs a warning (the write still
        happens, and the engine overwrites it at the next turn).
        """
        check_name("key", key)
        if key.startswith(RESERVED_PREFIX):
            logger.warning("writing reserved variable %r; sys.* keys are engine-managed", key)
        self._change("variables", lambda variables: {**variables, key: value}, author, default={})

    def get_var(self, key: str, default: Any = None) -> Any:
        """Return a copy of the variable ``key``, or ``default``."""
        variables = self._container("variables")
        return self._copy_out(variables[key]) if key in variables else default

    def has_var(self, key: str) -> bool:
        """Return whether the variable ``key`` is set (even to a falsy value)."""
        return key in self._container("variables")

    def delete_var(self, key: str, *, author: str = DEFAULT_AUTHOR) -> None:
        """Remove the variable ``key`` (no error if it is missing)."""
        check_name("key", key)

        def drop(variables: dict[str, Any]) -> dict[str, Any]:
            variables.pop(key, None)
            return variables

        self._change("variables", drop, author, default={})

    # ---------------------------------------------------------------- queues

    def push_queue_items(
        self, queue_name: str, items: Iterable[Any], *, author: str = DEFAULT_AUTHOR
    ) -> None:
        """Append ``items`` to the queue ``queue_name`` in order, in one atomic write.

        Raises:
            TypeError: ``queue_name`` is not a string, or ``items`` is not a list (or other
                iterable) of items: a string, bytes or a mapping is refused, not split.
        """
        check_name("queue_name", queue_name)
        added = _items(items, "items", _ONE_ITEM)

        def push(queues: dict[str, list[Any]]) -> dict[str, list[Any]]:
            queues.setdefault(queue_name, []).extend(added)
            return queues

        self._change("queues", push, author, default={})

    def push_queue(self, queue_name: str, item: Any, *, author: str = DEFAULT_AUTHOR) -> None:
        """Append ``item`` to the queue ``queue_name`` (created if missing)."""
        check_name("queue_name", queue_name)

        def push(queues: dict[str, list[Any]]) -> dict[str, list[Any]]:
            queues.setdefault(queue_name, []).append(item)
            return queues

        self._change("queues", push, author, default={})

    def pop_queue(self, queue_name: str, *, author: str = DEFAULT_AUTHOR) -> Any | None:
        """Remove and return the first item of ``queue_name`` (``None`` if empty or missing)."""
        check_name("queue_name", queue_name)
        popped: list[Any] = []

        def pop(queues: dict[str, list[Any]]) -> dict[str, list[Any]]:
            if queues.get(queue_name):
                popped.append(queues[queue_name].pop(0))
            return queues

        self._change("queues", pop, author, default={})
        return popped[0] if popped else None

    def peek_queue(self, queue_name: str) -> Any | None:
        """Return a copy of the first item of ``queue_name`` without removing it."""
        items = self._container("queues").get(queue_name) or []
        return self._copy_out(items[0]) if items else None

    def get_queue(self, queue_name: str) -> list[Any] | None:
        """Return a copy of the queue ``queue_name``, or ``None`` if it does not exist."""
        items = self._container("queues").get(queue_name)
        return None if items is None else list(self._copy_out(items))

    def queue_length(self, queue_name: str) -> int:
        """Return the number of items in ``queue_name`` (0 if missing)."""
        return len(self._container("queues").get(queue_name) or [])

    def clear_queue(self, queue_name: str, *, author: str = DEFAULT_AUTHOR) -> None:
        """Empty the queue ``queue_name``."""
        check_name("queue_name", queue_name)
        self._change("queues", lambda queues: {**queues, queue_name: []}, author, default={})

    # ----------------------------------------------------------------- facts

    def add_fact(self, fact: Fact, *, author: str = DEFAULT_AUTHOR) -> None:
        """Add ``fact``, replacing a duplicate ``(type, key)`` of lower or equal confidence."""
        item = _fact_json(fact)

        def add(facts: list[dict[str, Any]]) -> list[dict[str, Any]]:
            put_fact(facts, item)
            return facts

        self._change("facts", add, author, default=[])

    def get_fact(self, fact_type: str, key: str | None = None) -> Fact | None:
        """Return the first fact of ``fact_type`` (and ``key``, when given), or ``None``."""
        for raw in self._container("facts"):
            if raw.get("type") == fact_type and (key is None or raw.get("key") == key):
                return Fact.model_validate(raw)
        return None

    def get_facts_by_type(self, fact_type: str) -> list[Fact]:
        """Return every fact of ``fact_type`` (any key)."""
        return [f for f in self.facts if f.type == fact_type]

    # ---------------------------------------------------------------- memory

    def get_memory(self, agent_id: str) -> dict[str, Any]:
        """Return a copy of ``agent_id``'s private memory (empty if it has none)."""
        return dict(self._copy_out(self._container("memory").get(agent_id) or {}))

    def set_memory(
        self, agent_id: str, data: Mapping[str, Any], *, author: str = DEFAULT_AUTHOR
    ) -> None:
        """Replace ``agent_id``'s private memory with ``data``."""
        check_name("agent_id", agent_id)
        data = _named("data", "memory key", _mapping(data, "data"))
        self._change("memory", lambda memory: {**memory, agent_id: dict(data)}, author, default={})

    def update_memory(
        self, agent_id: str, updates: Mapping[str, Any], *, author: str = DEFAULT_AUTHOR
    ) -> None:
        """Merge ``updates`` into ``agent_id``'s private memory."""
        check_name("agent_id", agent_id)
        updates = _named("updates", "memory key", _mapping(updates, "updates"))

        def merge(memory: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
            memory[agent_id] = {**memory.get(agent_id, {}), **updates}
            return memory

        self._change("memory", merge, author, default={})

    # ------------------------------------------------------ write protection

    def write(self, key: str, value: Any, author: str) -> BlackboardEntry:
        """Store ``value`` under ``key`` (see ``deskwork.collaboration.Blackboard.write``)."""
        self._check_writable()
        return super().write(key, value, author)

    def update(
        self, key: str, fn: Callable[[Any], Any], author: str, default: Any = None
    ) -> BlackboardEntry:
        """Atomically replace ``key`` with ``fn(current)`` (see the shared board's ``update``)."""
        self._check_writable()
        return super().update(key, fn, author, default)

    def _change(self, key: str, fn: Callable[[Any], Any], author: str, default: Any = None) -> None:
        """``update`` for the board's own operations and the engine, which drop the entry it
        returns: no snapshot (a deep copy of the whole container) is made for them."""
        self._check_writable()
        self._update(key, fn, author, default)

    def delete(self, key: str) -> bool:
        """Remove ``key``; raises on a frozen board."""
        self._check_writable()
        return super().delete(key)

    def clear(self) -> None:
        """Remove every entry; raises on a frozen board."""
        self._check_writable()
        super().clear()

    def restore(self, state: Mapping[str, Any]) -> None:
        """Replace every entry with those in ``state``; raises on a frozen board.

        Raises:
            ValueError: ``state`` is not a board state, or one of its containers has the
                wrong type or holds an event or fact that is not one (a damaged or
                hand-edited state); the board is then unchanged.
        """
        self._check_writable()
        _check_state_containers(state)
        super().restore(state)

    # --------------------------------------------------------------- pydantic

    @classmethod
    def __get_pydantic_core_schema__(
        cls, source: Any, handler: GetCoreSchemaHandler
    ) -> core_schema.CoreSchema:
        """Let Pydantic models hold a board by reference and serialize it as containers."""
        return core_schema.no_info_plain_validator_function(
            cls.model_validate,
            serialization=core_schema.plain_serializer_function_ser_schema(
                lambda board: board.as_dict()
            ),
        )

    @classmethod
    def __get_pydantic_json_schema__(
        cls, schema: core_schema.CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        """Describe the serialized form (the five containers) in JSON schema."""
        return {
            "type": "object",
            "title": "Blackboard",
            "properties": {
                key: {"type": "object" if isinstance(_EMPTY[key](), dict) else "array"}
                for key in CONTAINERS
            },
        }

    # ---------------------------------------------------------------- private

    def _check_writable(self) -> None:
        if getattr(self, "_frozen", False):
            raise ReadOnlyBlackboardError(
                "this Blackboard is a read-only phase snapshot; return changes in AgentResponse"
            )

    def _container(self, key: str) -> Any:
        """One container for internal reads (never mutate the result)."""
        if self._cache is not None:
            return self._cache[key]
        return self._read_container(key)

    def _read_container(self, key: str) -> Any:
        if self._cache is not None:
            return self._copy_out(self._cache[key])
        return _conform(key, self.read(key))

    @staticmethod
    def _copy_out(value: Any) -> Any:
        return copy_json(value)


_ONE_ITEM: Final = " (push_queue appends one item)"


def _named(container: str, label: str, mapping: Any) -> dict[str, Any]:
    """``mapping`` (``None``: empty) as a dict whose keys are names (strings).

    Raises:
        TypeError: ``mapping`` is not a mapping (naming ``container``), or a key is not a
            string (naming ``label``).
    """
    if mapping is None:
        return {}
    if not isinstance(mapping, Mapping):
        raise TypeError(f"{container} must be a mapping, got {type(mapping).__name__}")
    for name in mapping:
        check_name(label, name)
    return dict(mapping)


def _mapping(value: Any, label: str) -> Mapping[Any, Any]:
    """``value`` when it is a mapping (``None`` too is refused here)."""
    if not isinstance(value, Mapping):
        raise TypeError(f"{label} must be a mapping, got {type(value).__name__}")
    return value


def _items(items: Any, label: str, hint: str = "") -> list[Any]:
    """The items of an iterable as a list; a string, bytes or a mapping is refused."""
    if not is_items(items):
        raise TypeError(f"{label} must be a list of items, got {type(items).__name__}{hint}")
    return list(items)


def _check_state_containers(state: Mapping[str, Any]) -> None:
    """Refuse a state whose containers a board could not use: read as empty, their data
    would be lost at the next write (which failed on the wrong type besides)."""
    entries = state.get("entries") if isinstance(state, Mapping) else None
    for entry in entries if isinstance(entries, list) else ():  # else: the shared parser
        key = entry.get("key") if isinstance(entry, Mapping) else None
        if key not in _EMPTY:
            continue
        value, kind = entry.get("value"), type(_EMPTY[key]())
        if not isinstance(value, kind):
            shape = "an object" if kind is dict else "a list"
            raise ValueError(f"Blackboard state: {key} must be {shape}, got {type(value).__name__}")
        model = _ITEM_MODELS.get(key)
        if model is None:
            continue
        for index, item in enumerate(value):
            try:
                model.model_validate(item)
            except ValidationError as exc:
                problem = exc.errors()[0]
                where = ".".join(str(part) for part in problem["loc"]) or "item"
                raise ValueError(
                    f"Blackboard state: {key}[{index}] is not a valid {model.__name__} "
                    f"({where}: {problem['msg']})"
                ) from None


def _conform(key: str, value: Any) -> Any:
    """``value`` if it has the container's type, else an empty container."""
    empty = _EMPTY[key]()
    return value if isinstance(value, type(empty)) else empty


def _event_json(event: Event | Mapping[str, Any]) -> dict[str, Any]:
    model = Event.model_validate(event)
    label = f"event {model.name!r}"
    # pydantic writes a top-level payload key holding a lone surrogate as U+FFFD, silently
    if any(not key.isascii() for key in model.payload):
        key = lone_surrogate_key({k: None for k in model.payload})
        if key is not None:
            raise TypeError(_surrogate_key(label, key))
    return _dumped(model, label)


def _fact_json(fact: Fact | Mapping[str, Any]) -> dict[str, Any]:
    model = Fact.model_validate(fact)
    return _dumped(model, f"fact {model.type!r}")


def _dumped(model: Event | Fact, label: str) -> dict[str, Any]:
    """``model`` in JSON mode; a nested key holding a lone surrogate (pydantic raises
    ``UnicodeEncodeError``) refused as the board's other writes refuse it."""
    try:
        return model.model_dump(mode="json")
    except UnicodeEncodeError as exc:
        raise TypeError(_surrogate_key(label, str(exc.object))) from None


def _surrogate_key(label: str, key: str) -> str:
    return (
        f"{label}: the key {escape_surrogates(key)!r} holds a lone surrogate, which a saved"
        " state cannot keep as a key"
    )
