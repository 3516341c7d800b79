"""Fixtures of the serve tests: real servers (see ``serve_support``)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")

import uvicorn
from serve_support import Live, start_server


@pytest.fixture
def live_factory() -> Iterator[Any]:
    servers: list[tuple[uvicorn.Server, threading.Thread]] = []

    def start(desk: Any = None, **options: Any) -> Live:
        live, thread = start_server(desk, **options)
        servers.append((live.server, thread))
        return live

    yield start
    for server, thread in servers:
        server.should_exit = True
        thread.join(timeout=10)


@pytest.fixture
def live(live_factory: Any) -> Live:
    result: Live = live_factory()
    return result
