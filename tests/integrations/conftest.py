"""Fixtures for the integration tests: real MCP servers started on this machine."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from mcpkit import TOKEN, HTTPServer, start_http_server, stop_http_server


@pytest.fixture(scope="session")
def http_server() -> Iterator[HTTPServer]:
    """An open MCP server (streamable HTTP at /mcp, SSE at /sse), shared by the session."""
    server = start_http_server()
    yield server
    stop_http_server(server)


@pytest.fixture(scope="session")
def secured_server() -> Iterator[HTTPServer]:
    """An MCP server that requires ``Authorization: Bearer TOKEN`` on every request."""
    server = start_http_server(TOKEN)
    yield server
    stop_http_server(server)


@pytest.fixture
def own_http_server() -> Iterator[HTTPServer]:
    """A server for one test (for tests that kill it)."""
    server = start_http_server()
    yield server
    if server.process.poll() is None:
        stop_http_server(server)
