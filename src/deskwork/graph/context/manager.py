"""``SlotManager``: the shared slot pool, one pool per agent, and their persistence.

Lifecycle of one graph run::

    await manager.hydrate(session_id, user_id)   # load SESSION + LONG_TERM slots
    ... agents read and write slots ...
    await manager.flush(session_id, user_id)     # save SESSION + LONG_TERM slots
    await manager.clear_turn_slots()             # drop TURN slots

``hydrate`` and ``flush`` do their I/O outside the manager's lock and touch the pools only
inside it. A failing or timed-out backend raises :class:`SlotPersistenceError`; the pools are
then exactly as they were before the call. A manager belongs to the session (and user) it last
hydrated: hydrating another one drops the previous session's SESSION slots (and LONG_TERM slots
when the user changes), and flushing into another session raises ``ValueError``.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
from collections.abc import Awaitable, Callable, Mapping
from types import TracebackType
from typing import TYPE_CHECKING, Any, Self, TypeVar

from deskwork.core.redact import redact_text
from deskwork.graph.context.eviction import EvictionStrategy, eviction_strategy_for
from deskwork.graph.context.slots import TIER_RANK, Slot, SlotPool, SlotTier, check_priority
from deskwork.graph.core.exceptions import SlotPersistenceError
from deskwork.graph.core.logging_context import get_graph_logger

if TYPE_CHECKING:
    from deskwork.graph.config.schema import ContextConfig, TimeoutConfig
    from deskwork.graph.context.persistence import SlotPersistence
    from deskwork.graph.core.token_counting import TokenCounter

__all__ = ["SlotManager"]

logger = get_graph_logger("deskwork.graph.context")

_T = TypeVar("_T")
_FIELDS = frozenset({"value", "tier", "priority"})


class SlotManager:
    """Shared and per-agent slot pools with token budgets, tiers and persistence.

    Budgets come from ``config``: ``shared_slots.max_tokens`` caps each pool (the shared one
    and each agent's) and ``tiered_slots`` caps each tier inside a pool. Eviction runs after
    every write (``config.eviction_strategy`` unless ``eviction_strategy`` is given).
    """

    def __init__(
        self,
        config: ContextConfig,
        persistence: SlotPersistence | None = None,
        token_counter: TokenCounter | None = None,
        timeout_config: TimeoutConfig | None = None,
        *,
        eviction_strategy: EvictionStrategy | None = None,
    ) -> None:
        """Args:
        config: budgets and the eviction strategy name.
        persistence: where SESSION/LONG_TERM slots go; without one, hydrate/flush do nothing.
        token_counter: how slot values are measured (default ``CharDivisionTokenCounter``).
        timeout_config: ``persistence_seconds`` limits each persistence call.
        eviction_strategy: a strategy object overriding ``config.eviction_strategy``.
        """
        self.config = config
        self.persistence = persistence
        self.token_counter = token_counter
        self.eviction_strategy = eviction_strategy or eviction_strategy_for(
            config.eviction_strategy
        )
        self._timeout = timeout_config.persistence_seconds if timeout_config else None
        self._shared = self._new_pool()
        self._agents: dict[str, SlotPool] = {}
        self._lock = asyncio.Lock()
        self._flush_lock = asyncio.Lock()
        self._closed = False
        self._session_id: str | None = None
        self._user_id: str | None = None

    def _new_pool(self) -> SlotPool:
        tiers = self.config.tiered_slots
        return SlotPool(
            self.config.shared_slots.max_tokens,
            self.eviction_strategy,
            self.token_counter,
            tier_max_tokens={
                SlotTier.TURN: tiers.turn.max_tokens,
                SlotTier.SESSION: tiers.session.max_tokens,
                SlotTier.LONG_TERM: tiers.long_term.max_tokens,
            },
        )

    def __repr__(self) -> str:
        persistence = type(self.persistence).__name__ if self.persistence else None
        return (
            f"SlotManager(shared={len(self._shared)} slots/{self._shared.total_tokens} tokens,"
            f" agents={sorted(self._agents)}, eviction={type(self.eviction_strategy).__name__},"
            f" persistence={persistence}, closed={self._closed})"
        )

    # -- lifecycle -----------------------------------------------------------------------

    @property
    def is_closed(self) -> bool:
        """Whether :meth:`close` ran."""
        return self._closed

    def _check_open(self) -> None:
        if self._closed:
            raise RuntimeError("SlotManager is closed")

    async def close(self) -> None:
        """Drop every slot; later calls raise ``RuntimeError``. Safe to call twice."""
        self._closed = True
        self._shared.clear()
        self._agents.clear()

    async def __aenter__(self) -> Self:
        self._check_open()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    # -- shared slots --------------------------------------------------------------------

    @property
    def shared_pool(self) -> SlotPool:
        """The shared pool (read it; write through the manager)."""
        self._check_open()
        return self._shared

    def set_shared(self, key: str, value: Any, priority: int = 0) -> None:
        """Set a shared slot; a new slot is TURN, an existing one keeps its tier.

        Raises:
            ValueError: ``priority`` is not an int, or the value alone exceeds a budget it must fit.
        """
        self._check_open()
        existing = self._shared.peek(key)
        tier = existing.tier if existing else SlotTier.TURN
        self._shared.add(_key(key), value, priority, tier=tier)

    def set_shared_tiered(self, key: str, value: Any, tier: SlotTier, priority: int = 0) -> None:
        """Set a shared slot in ``tier``.

        Raises:
            ValueError: the value alone exceeds a budget it must fit, ``tier`` is unknown or
                ``priority`` is not an int.
        """
        self._check_open()
        self._shared.add(_key(key), value, priority, tier=SlotTier(tier))

    def get_shared(self, key: str) -> Any | None:
        """The value of a shared slot (``None`` if absent); counts as an access."""
        self._check_open()
        return self._shared.get(key)

    def get_shared_slot(self, key: str) -> Slot | None:
        """A copy of a shared slot with its tier and priority; counts as an access."""
        self._check_open()
        return self._shared.get_slot(key)

    def remove_shared(self, key: str) -> bool:
        """Delete a shared slot; ``False`` if absent."""
        self._check_open()
        return self._shared.remove(key)

    def shared_values(self) -> dict[str, Any]:
        """Every shared slot's value by key (no access is counted)."""
        self._check_open()
        return {slot.key: slot.value for slot in self._shared.slots()}

    def promote_slot(self, key: str, target_tier: SlotTier) -> bool:
        """Move a shared slot to a longer-lived tier.

        Returns ``False`` when the slot does not exist or already is in ``target_tier`` or
        a longer-lived one.

        Raises:
            ValueError: the slot alone exceeds the budget of ``target_tier``.
        """
        self._check_open()
        target = SlotTier(target_tier)
        slot = self._shared.peek(key)
        if slot is None or TIER_RANK[target] <= TIER_RANK[slot.tier]:
            return False
        return self._shared.set_tier(key, target)

    # -- per-agent slots -----------------------------------------------------------------

    def agent_pool(self, agent_name: str) -> SlotPool:
        """The pool of ``agent_name`` (created empty on first use)."""
        self._check_open()
        pool = self._agents.get(agent_name)
        if pool is None:
            pool = self._agents[_key(agent_name, "agent_name")] = self._new_pool()
        return pool

    @property
    def agent_names(self) -> list[str]:
        """Agents that have a pool, sorted."""
        self._check_open()
        return sorted(self._agents)

    def set_agent(self, agent_name: str, key: str, value: Any, priority: int = 0) -> None:
        """Set a slot private to ``agent_name``; a new slot is TURN, an existing one keeps its tier.

        Raises:
            ValueError: ``priority`` is not an int, or the value alone exceeds a budget it must fit.
        """
        pool = self.agent_pool(agent_name)
        existing = pool.peek(key)
        pool.add(_key(key), value, priority, tier=existing.tier if existing else SlotTier.TURN)

    def get_agent(self, agent_name: str, key: str) -> Any | None:
        """The value of an agent's slot (``None`` if absent); counts as an access."""
        self._check_open()
        pool = self._agents.get(agent_name)
        return None if pool is None else pool.get(key)

    # -- turn boundary -------------------------------------------------------------------

    async def clear_turn_slots(self) -> None:
        """Drop every TURN slot, shared and per agent."""
        self._check_open()
        async with self._lock:
            self._shared.remove_tier(SlotTier.TURN)
            for pool in self._agents.values():
                pool.remove_tier(SlotTier.TURN)

    # -- persistence ---------------------------------------------------------------------

    async def hydrate(self, session_id: str, user_id: str | None = None) -> None:
        """Load persisted SESSION slots (and LONG_TERM slots of ``user_id``) into the shared pool.

        Slots already present in the pool keep their in-memory value. A SESSION slot wins
        over a LONG_TERM slot of the same key. Hydrating another session than before first
        drops the SESSION slots held for the previous one (and LONG_TERM slots when the user
        changes too), so one manager never carries context across sessions or users.

        Raises:
            SlotPersistenceError: the backend failed or timed out; nothing was loaded.
            RuntimeError: the manager is closed.
        """
        self._check_open()
        _key(session_id, "session_id")
        loaded = await self._load(session_id, user_id) if self.persistence else []
        async with self._lock:
            self._check_open()
            self._rebind(session_id, user_id)
            present = {slot.key for slot in self._shared.slots()}
            for slot in loaded:
                if slot.key not in present:
                    self._shared.insert(slot)
            self._shared.enforce_budget()

    async def _load(self, session_id: str, user_id: str | None) -> list[Slot]:
        backend = self.persistence
        assert backend is not None  # checked by the caller
        long_term: list[Slot] = []
        if user_id is not None:
            long_term = await self._call(
                "load_long_term_slots", lambda: backend.load_long_term_slots(user_id)
            )
        session = await self._call(
            "load_session_slots", lambda: backend.load_session_slots(session_id)
        )
        return _checked(long_term, SlotTier.LONG_TERM) + _checked(session, SlotTier.SESSION)

    def _rebind(self, session_id: str, user_id: str | None) -> None:
        if self._session_id not in (None, session_id):
            for pool in (self._shared, *self._agents.values()):
                pool.remove_tier(SlotTier.SESSION)
        if self._user_id not in (None, user_id):
            for pool in (self._shared, *self._agents.values()):
                pool.remove_tier(SlotTier.LONG_TERM)
        self._session_id, self._user_id = session_id, user_id

    def _check_binding(self, session_id: str, user_id: str | None) -> None:
        if self._session_id not in (None, session_id):
            raise ValueError(
                f"this SlotManager holds session {self._session_id!r}; flushing it into"
                f" {session_id!r} would copy its slots there (hydrate {session_id!r} first)"
            )
        if user_id is not None and self._user_id not in (None, user_id):
            raise ValueError("this SlotManager holds another user's LONG_TERM slots; hydrate first")

    async def flush(self, session_id: str, user_id: str | None = None) -> None:
        """Save the shared SESSION slots (and LONG_TERM slots, when ``user_id`` is given).

        Each save replaces the stored set. If the LONG_TERM save fails after the SESSION save
        succeeded, the previous SESSION set is written back (best effort).

        Raises:
            SlotPersistenceError: the backend failed or timed out.
            ValueError: the manager was hydrated for another session or user.
            RuntimeError: the manager is closed.
        """
        self._check_open()
        _key(session_id, "session_id")
        self._check_binding(session_id, user_id)
        self._session_id = session_id
        self._user_id = user_id if user_id is not None else self._user_id
        if self.persistence is None:
            return
        async with self._lock:
            snapshot = self._shared.slots()
        session = [s for s in snapshot if s.tier is SlotTier.SESSION]
        long_term = [s for s in snapshot if s.tier is SlotTier.LONG_TERM]
        if user_id is None and long_term:
            logger.warning(
                "long_term_slots_not_saved", reason="flush without user_id", count=len(long_term)
            )
        async with self._flush_lock:
            if user_id is None:
                await self._save_session(self.persistence, session_id, session)
            else:
                await self._flush_both(self.persistence, session_id, session, user_id, long_term)

    async def _save_session(
        self, backend: SlotPersistence, session_id: str, slots: list[Slot]
    ) -> None:
        await self._call(
            "save_session_slots", lambda: backend.save_session_slots(session_id, slots)
        )

    async def _flush_both(
        self,
        backend: SlotPersistence,
        session_id: str,
        session: list[Slot],
        user_id: str,
        long_term: list[Slot],
    ) -> None:
        previous = await self._call(
            "load_session_slots", lambda: backend.load_session_slots(session_id)
        )
        await self._save_session(backend, session_id, session)
        try:
            await self._call(
                "save_long_term_slots", lambda: backend.save_long_term_slots(user_id, long_term)
            )
        except SlotPersistenceError:
            with contextlib.suppress(SlotPersistenceError):  # best effort: the first error wins
                await self._save_session(backend, session_id, previous)
            raise

    async def _call(self, operation: str, call: Callable[[], Awaitable[_T]]) -> _T:
        try:
            async with asyncio.timeout(self._timeout):
                return await call()
        except TimeoutError as exc:
            raise SlotPersistenceError(
                f"slot persistence {operation} timed out after {self._timeout}s"
            ) from exc
        except SlotPersistenceError:
            raise
        except Exception as exc:
            detail = redact_text(str(exc))
            raise SlotPersistenceError(
                f"slot persistence {operation} failed: {type(exc).__name__}: {detail}"
            ) from exc

    # -- serialization -------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """``{"shared": {key: {"value", "tier", "priority"}}, "agents": {name: {...}}}``.

        Reading for serialization does not count as an access.
        """
        self._check_open()
        return {
            "shared": _pool_dict(self._shared),
            "agents": {name: _pool_dict(pool) for name, pool in self._agents.items()},
        }

    def from_dict(self, data: Mapping[str, Any]) -> None:
        """Replace every slot with those in ``data`` (as :meth:`to_dict` writes it).

        A slot entry is either ``{"value": ..., "tier": ..., "priority": ...}`` (tier and
        priority optional) or a bare value, which becomes a TURN slot with priority 0.

        Raises:
            ValueError: ``data`` is malformed (the manager is then unchanged).
        """
        self._check_open()
        if not isinstance(data, Mapping):
            raise ValueError(f"from_dict expects a mapping, got {type(data).__name__}")
        shared = self._load_pool(data.get("shared", {}), "shared")
        agents_data = data.get("agents", {})
        if not isinstance(agents_data, Mapping):
            raise ValueError("from_dict: 'agents' must be a mapping of agent name to slots")
        agents = {
            _key(name, "agent_name"): self._load_pool(slots, f"agents[{name!r}]")
            for name, slots in agents_data.items()
        }
        self._shared, self._agents = shared, agents

    def _load_pool(self, entries: Any, where: str) -> SlotPool:
        if not isinstance(entries, Mapping):
            raise ValueError(f"from_dict: {where} must be a mapping of key to slot")
        pool = self._new_pool()
        for key, entry in entries.items():
            value, tier, priority = _parse_entry(entry, f"{where}[{key!r}]")
            pool.insert(Slot(_key(key), value, priority, tier))
        pool.enforce_budget()
        return pool


def _key(value: Any, what: str = "slot key") -> str:
    if not isinstance(value, str) or not value:
        raise ValueError(f"{what} must be a non-empty string, got {value!r}")
    return value


def _pool_dict(pool: SlotPool) -> dict[str, Any]:
    return {
        s.key: {"value": s.value, "tier": str(s.tier), "priority": s.priority} for s in pool.slots()
    }


def _parse_entry(entry: Any, where: str) -> tuple[Any, SlotTier, int]:
    if not (isinstance(entry, Mapping) and "value" in entry and set(entry) <= _FIELDS):
        return entry, SlotTier.TURN, 0  # the legacy format: a bare value
    try:
        tier = SlotTier(entry.get("tier", SlotTier.TURN))
    except ValueError as exc:
        raise ValueError(f"from_dict: {where} has unknown tier {entry.get('tier')!r}") from exc
    return entry["value"], tier, check_priority(entry.get("priority", 0), f"from_dict: {where}")


def _checked(slots: Any, tier: SlotTier) -> list[Slot]:
    if not isinstance(slots, list) or not all(isinstance(s, Slot) for s in slots):
        raise SlotPersistenceError(
            f"slot persistence returned something other than list[Slot] for {tier}"
        )
    return [dataclasses.replace(s, tier=tier) for s in slots]
