"""Helpers for the MCP integration tests: start the real test server (stdio or HTTP)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

SERVER_SCRIPT = Path(__file__).with_name("mcp_test_server.py")
TOKEN = "tok-integration-7f3a9c2e51"
STDIO_LABEL = f"stdio:{Path(sys.executable).name}"
"""How the provider names the stdio test server in messages and metadata."""


@dataclass(frozen=True)
class HTTPServer:
    """A running ``mcp_test_server.py http`` process."""

    base_url: str
    process: subprocess.Popen[bytes]

    @property
    def mcp_url(self) -> str:
        return f"{self.base_url}/mcp"

    @property
    def sse_url(self) -> str:
        return f"{self.base_url}/sse"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_http_server(token: str | None = None, timeout: float = 120.0) -> HTTPServer:
    """Start the test server over HTTP on a free port and wait until it accepts connections
    (a generous ``timeout``: a loaded CI machine took more than 20 s to start it)."""
    port = _free_port()
    argv = [sys.executable, str(SERVER_SCRIPT), "http", str(port)]
    if token is not None:
        argv.append(token)
    process = subprocess.Popen(argv, env={**os.environ, "MCP_TEST_PREFIX": ""})
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"MCP test server exited with {process.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return HTTPServer(f"http://127.0.0.1:{port}", process)
        except OSError:
            time.sleep(0.05)
    process.kill()
    process.wait(timeout=10)
    raise RuntimeError("MCP test server did not start listening in time")


def stop_http_server(server: HTTPServer) -> None:
    server.process.terminate()
    try:
        server.process.wait(timeout=5)
    except subprocess.TimeoutExpired:
        server.process.kill()
        server.process.wait(timeout=5)


def stdio_args(mode: str = "stdio") -> tuple[str, list[str]]:
    """``command, args`` that start the test server over stdio."""
    return sys.executable, [str(SERVER_SCRIPT), mode]
