"""The memory store port."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, ClassVar

__all__ = ["ExternalMemoryStore", "MemoryStore"]


class MemoryStore(ABC):
    """Key/value memory in named scopes (for example ``worker:Analyst`` or ``desk``).

    After :meth:`close`, every call raises :class:`~deskwork.exceptions.StoreError` ("... is
    closed"), on every built-in store (as a :class:`~deskwork.store.RunStore` does), and a
    second :meth:`close` does nothing; what was written before stays (a store on disk
    reopened shows it).
    """

    blocking: ClassVar[bool] = False
    """Whether a write takes long enough to stall an event loop (an embedding model, a
    remote service): the runtime then makes its own writes (a worker's last output) on a
    thread. ``False``: a write as quick as a run store's, made on the loop."""

    @abstractmethod
    def write(self, key: str, value: Any, scope: str) -> None:
        """Store ``value`` under ``key`` in ``scope``."""

    @abstractmethod
    def read(self, key: str, scope: str) -> Any | None:
        """The value, or ``None``."""

    @abstractmethod
    def search(self, query: str, scope: str) -> list[tuple[str, Any]]:
        """``(key, value)`` pairs in ``scope`` matching ``query``."""

    @abstractmethod
    def reset(self, scope: str) -> None:
        """Forget everything in ``scope``."""

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release resources (database connections); a no-op by default (see the class: a
        closed store)."""


class ExternalMemoryStore(MemoryStore):
    """A stub to subclass when integrating another storage system.

    Every method raises ``NotImplementedError`` until you implement it.
    """

    def write(self, key: str, value: Any, scope: str) -> None:
        raise NotImplementedError("ExternalMemoryStore.write: implement it in a subclass")

    def read(self, key: str, scope: str) -> Any | None:
        raise NotImplementedError("ExternalMemoryStore.read: implement it in a subclass")

    def search(self, query: str, scope: str) -> list[tuple[str, Any]]:
        raise NotImplementedError("ExternalMemoryStore.search: implement it in a subclass")

    def reset(self, scope: str) -> None:
        raise NotImplementedError("ExternalMemoryStore.reset: implement it in a subclass")
