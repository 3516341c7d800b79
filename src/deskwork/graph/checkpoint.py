"""LangGraph checkpoints kept in deskwork's run store (one database for runs and graphs).

:class:`RunStoreSaver` is a LangGraph ``BaseCheckpointSaver`` over any
:class:`~deskwork.store.RunStore` that implements the checkpoint items API (in-memory and SQLite
do): a graph paused by ``interrupt()`` in one process resumes in another from the same
``.deskwork/deskwork.db`` file. ``GraphRunner`` uses the run id as the thread id.

Each checkpoint and each pending write is one item, serialized with LangGraph's serializer
(``JsonPlusSerializer`` by default). Secrets in graph state (key-named values such as
``api_key``, bearer tokens, provider keys) are redacted before anything is stored, like
everything else deskwork stores.

Item keys (``\\x1f`` separates the parts, so namespaces and ids sort as LangGraph expects)::

    <ns> c <checkpoint_id>                      one checkpoint with its metadata and parent
    <ns> w <checkpoint_id> <task_id> <idx>      one pending write of a task
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import AsyncIterator, Iterator, Sequence
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    WRITES_IDX_MAP,
    BaseCheckpointSaver,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
    PendingWrite,
    get_checkpoint_id,
    get_checkpoint_metadata,
    writes_sort_key,
)
from langgraph.checkpoint.serde.base import SerializerProtocol
from pydantic import BaseModel

from deskwork.core.redact import REDACTED, may_hold_secrets, redact, redact_text
from deskwork.store.base import RunStore

__all__ = ["RunStoreSaver"]

_SEP = "\x1f"


class RunStoreSaver(BaseCheckpointSaver[str]):
    """A LangGraph checkpointer whose checkpoints live in a deskwork run store.

    Args:
        store: the run store (``desk.run_store``); it must implement the checkpoint items API.
        serde: LangGraph serializer (``JsonPlusSerializer`` when omitted).
    """

    def __init__(self, store: RunStore, *, serde: SerializerProtocol | None = None) -> None:
        super().__init__(serde=serde)
        self.store = store

    def get_next_version(self, current: str | int | None, channel: None) -> str:
        """A channel's next version: a zero-padded counter (sorts as text) and a random tail."""
        number = 0 if current is None else int(str(current).split(".", 1)[0])
        return f"{number + 1:032}.{random.random():016}"

    # -- encoding ---------------------------------------------------------------------

    def _dump(self, record: dict[str, Any]) -> bytes:
        kind, data = self.serde.dumps_typed(record)
        if may_hold_secrets(data.decode("utf-8", "replace")):
            kind, data = self.serde.dumps_typed(_scrub_record(record))
        return kind.encode() + b"\x00" + data

    def _load(self, blob: bytes) -> Any:
        kind, _, data = blob.partition(b"\x00")
        return self.serde.loads_typed((kind.decode(), data))

    # -- reading ----------------------------------------------------------------------

    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        """The checkpoint ``config`` names, or the thread's latest in its namespace."""
        thread_id, ns = _thread(config), _ns(config)
        wanted = get_checkpoint_id(config)
        prefix = _key(ns, "c", wanted) if wanted else _key(ns, "c", "")
        items = self.store.get_checkpoint_items(thread_id, prefix, newest_first=True, limit=1)
        if not items or (wanted and items[0][0] != prefix):
            return None
        return self._tuple(thread_id, ns, items[0])

    def list(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> Iterator[CheckpointTuple]:
        """The thread's checkpoints, newest first (``config`` must name the thread)."""
        if config is None:
            raise ValueError("RunStoreSaver.list needs a config with a thread_id")
        thread_id = _thread(config)
        ns = config["configurable"].get("checkpoint_ns")
        wanted, limit_at = get_checkpoint_id(config), get_checkpoint_id(before) if before else None
        found = [
            (key.split(_SEP), (key, blob))
            for key, blob in self.store.get_checkpoint_items(
                thread_id, "" if ns is None else _key(ns, "c", "")
            )
        ]
        heads = sorted(
            ((parts, item) for parts, item in found if parts[1] == "c"),
            key=lambda entry: entry[0][2],
            reverse=True,
        )
        for parts, item in heads:
            cid = parts[2]
            if (wanted and cid != wanted) or (limit_at and cid >= limit_at):
                continue
            entry = self._tuple(thread_id, parts[0], item)
            if filter and any(entry.metadata.get(k) != v for k, v in filter.items()):
                continue
            if limit is not None and limit <= 0:
                return
            if limit is not None:
                limit -= 1
            yield entry

    def _tuple(self, thread_id: str, ns: str, item: tuple[str, bytes]) -> CheckpointTuple:
        key, blob = item
        cid = key.rsplit(_SEP, 1)[1]
        record = self._load(blob)
        writes = self.store.get_checkpoint_items(thread_id, _key(ns, "w", cid, ""))
        loaded = [self._load(value) for _, value in writes]
        loaded.sort(key=lambda w: writes_sort_key(w["task_path"], w["task_id"], w["idx"]))
        pending: list[PendingWrite] = [(w["task_id"], w["channel"], w["value"]) for w in loaded]
        parent = record["parent"]
        return CheckpointTuple(
            config=_config(thread_id, ns, cid),
            checkpoint=record["checkpoint"],
            metadata=record["metadata"],
            parent_config=_config(thread_id, ns, parent) if parent else None,
            pending_writes=pending,
        )

    # -- writing ----------------------------------------------------------------------

    def put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        """Store ``checkpoint`` (all its channel values) as the thread's newest."""
        thread_id, ns = _thread(config), _ns(config)
        record = {
            "checkpoint": checkpoint,
            "metadata": get_checkpoint_metadata(config, metadata),
            "parent": get_checkpoint_id(config),
        }
        self.store.put_checkpoint_items(
            thread_id, [(_key(ns, "c", checkpoint["id"]), self._dump(record))]
        )
        return _config(thread_id, ns, checkpoint["id"])

    def put_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        """Store a task's writes; special channels (errors, interrupts) replace earlier ones."""
        thread_id, ns = _thread(config), _ns(config)
        cid = config["configurable"]["checkpoint_id"]
        special: list[tuple[str, bytes]] = []
        regular: list[tuple[str, bytes]] = []
        for position, (channel, value) in enumerate(writes):
            idx = WRITES_IDX_MAP.get(channel, position)
            record = {"task_id": task_id, "channel": channel, "value": value}
            record |= {"task_path": task_path, "idx": idx}
            item = (_key(ns, "w", cid, task_id, str(idx)), self._dump(record))
            (special if channel in WRITES_IDX_MAP else regular).append(item)
        if special:
            self.store.put_checkpoint_items(thread_id, special, overwrite=True)
        if regular:
            self.store.put_checkpoint_items(thread_id, regular, overwrite=False)

    def delete_thread(self, thread_id: str) -> None:
        """Forget every checkpoint and write of ``thread_id``."""
        self.store.delete_checkpoint_items(thread_id)

    def copy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        """Copy every checkpoint and write of one thread to another."""
        items = self.store.get_checkpoint_items(source_thread_id)
        self.store.put_checkpoint_items(target_thread_id, items)

    # -- async (the stores are synchronous and local; these call straight through) ----

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        """See :meth:`get_tuple`."""
        return self.get_tuple(config)

    async def alist(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[CheckpointTuple]:
        """See :meth:`list`."""
        for entry in self.list(config, filter=filter, before=before, limit=limit):
            yield entry

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        """See :meth:`put`."""
        return self.put(config, checkpoint, metadata, new_versions)

    async def aput_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        """See :meth:`put_writes`."""
        self.put_writes(config, writes, task_id, task_path)

    async def adelete_thread(self, thread_id: str) -> None:
        """See :meth:`delete_thread`."""
        self.delete_thread(thread_id)

    async def acopy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        """See :meth:`copy_thread`."""
        self.copy_thread(source_thread_id, target_thread_id)


def _key(ns: str, *parts: str) -> str:
    return _SEP.join((ns, *parts))


def _thread(config: RunnableConfig) -> str:
    try:
        return str(config["configurable"]["thread_id"])
    except KeyError:
        raise ValueError("a checkpointed graph needs config['configurable']['thread_id']") from None


def _ns(config: RunnableConfig) -> str:
    return str(config["configurable"].get("checkpoint_ns", ""))


def _config(thread_id: str, ns: str, checkpoint_id: str) -> RunnableConfig:
    return {
        "configurable": {
            "thread_id": thread_id,
            "checkpoint_ns": ns,
            "checkpoint_id": checkpoint_id,
        }
    }


def _scrub_record(record: dict[str, Any]) -> dict[str, Any]:
    """A stored record with the secrets in its values redacted (LangGraph's own bookkeeping,
    such as channel versions keyed by channel name, is kept as it is)."""
    if "checkpoint" not in record:  # a pending write
        return {**record, "value": _scrub(record["value"])}
    checkpoint = record["checkpoint"]
    values = _scrub(checkpoint["channel_values"])
    return {**record, "checkpoint": {**checkpoint, "channel_values": values}}


def _scrub(value: Any) -> Any:
    """``value`` with secrets redacted, also inside messages and other Pydantic objects."""
    if isinstance(value, str):
        return redact_text(value)
    if isinstance(value, dict):
        return {k: REDACTED if _secret_key(k) else _scrub(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_scrub(item) for item in value]
    if isinstance(value, tuple):
        items = [_scrub(item) for item in value]
        return type(value)(*items) if hasattr(value, "_fields") else tuple(items)
    if isinstance(value, BaseModel):
        fields = type(value).model_fields
        return value.model_copy(update={name: _scrub(getattr(value, name)) for name in fields})
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields_ = [f.name for f in dataclasses.fields(value) if f.init]
        return dataclasses.replace(
            value, **{name: _scrub(getattr(value, name)) for name in fields_}
        )
    return value


def _secret_key(key: object) -> bool:
    """Whether ``redact`` treats ``key`` as naming a secret (one rule for every store)."""
    return isinstance(key, str) and redact({key: 0})[key] == REDACTED
