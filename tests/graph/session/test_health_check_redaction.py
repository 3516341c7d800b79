"""A failing store's error text is redacted in the health check's answer."""

from __future__ import annotations

from typing import Any

from deskwork.graph.context.persistence import StoreSlotPersistence
from deskwork.graph.session.store import StoreSessionManager
from deskwork.memory import InMemoryMemoryStore

URL = "postgresql://app:hunter2secret@db.internal/app"


class BrokenStore(InMemoryMemoryStore):
    def read(self, key: str, scope: str) -> Any | None:
        raise ConnectionError(f"cannot reach {URL}")

    def search(self, query: str, scope: str) -> list[tuple[str, Any]]:
        raise ConnectionError(f"cannot reach {URL}")


async def test_session_manager_health_check_redacts_the_store_error() -> None:
    status = await StoreSessionManager(BrokenStore()).health_check()
    assert status["status"] == "error"
    assert (
        status["error"]
        == "ConnectionError: cannot reach postgresql://app:<redacted>@db.internal/app"
    )


async def test_slot_persistence_health_check_redacts_the_store_error() -> None:
    status = await StoreSlotPersistence(BrokenStore()).health_check()
    assert status["status"] == "error"
    assert "hunter2secret" not in status["error"] and "<redacted>" in status["error"]
