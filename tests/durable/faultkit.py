"""Helpers of the fault tests: run ``durable_faults_app.py`` (or a copy of it) in a
subprocess, to completion or until it is killed; a TCP proxy that cuts the database off."""

from __future__ import annotations

import contextlib
import json
import signal
import socket
import subprocess
import threading
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from durablekit import HERE, PYTHON, app_env, lines, wait_for

APP = HERE / "durable_faults_app.py"


def run_faults_app(directory: Path, *args: str, app: Path | str = APP, **env: str) -> Any:
    """Run the application with ``ARGS`` to completion; the JSON of its last output line."""
    done = subprocess.run(
        [PYTHON, str(app), *args],
        env=app_env(directory, **env),
        capture_output=True,
        text=True,
        timeout=90,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def kill_during(
    directory: Path, marker: str, *args: str, app: Path | str = APP, **env: str
) -> None:
    """Start the application with ``ARGS`` and ``kill -9`` it once the side-effect file
    ``marker`` has a line (the call that hangs has started)."""
    proc = subprocess.Popen(
        [PYTHON, str(app), *args],
        env=app_env(directory, **env),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        wait_for(
            lambda: lines(directory / marker) != [] or proc.poll() is not None,
            timeout=60,
            what=f"{marker} to start",
        )
        assert proc.poll() is None, proc.stderr.read().decode()[-3000:] if proc.stderr else ""
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)


class Proxy:
    """A TCP proxy from ``127.0.0.1:port`` to ``target``, in threads: :meth:`cut` drops every
    connection and refuses new ones (the database is unreachable), :meth:`restore` listens
    again on the same port."""

    def __init__(self, target: tuple[str, int]) -> None:
        self.target = target
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port: int = self._listener.getsockname()[1]
        self._open: list[socket.socket] = []
        self._lock = threading.Lock()
        self._refusing = False
        self._serve()

    def url(self, database_url: str) -> str:
        """``database_url`` (on ``target``) through this proxy."""
        parts = urlsplit(database_url)
        netloc = parts.netloc.rsplit("@", 1)
        host = f"127.0.0.1:{self.port}"
        return urlunsplit(parts._replace(netloc=f"{netloc[0]}@{host}" if len(netloc) > 1 else host))

    def _serve(self) -> None:
        threading.Thread(target=self._accept, args=(self._listener,), daemon=True).start()

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                client, _ = listener.accept()
                if self._refusing:
                    client.close()
                    continue
                upstream = socket.create_connection(self.target)
            except OSError:
                return
            with self._lock:
                if listener is not self._listener or listener.fileno() == -1:  # cut meanwhile
                    client.close()
                    upstream.close()
                    return
                self._open += [client, upstream]
            for source, sink in ((client, upstream), (upstream, client)):
                threading.Thread(target=_pump, args=(source, sink), daemon=True).start()

    def cut(self) -> None:
        with self._lock:
            self._listener.close()
            for sock in self._open:
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)
                sock.close()
            self._open.clear()

    def refuse(self) -> None:
        """Refuse new connections; the open ones go on (a process keeps what it has)."""
        self._refusing = True

    def restore(self) -> None:
        with self._lock:
            if self._refusing:  # still listening: accept again
                self._refusing = False
                return
            self._listener = socket.create_server(("127.0.0.1", self.port))
        self._serve()


def _pump(source: socket.socket, sink: socket.socket) -> None:
    with contextlib.suppress(OSError):
        while data := source.recv(65536):
            sink.sendall(data)
    with contextlib.suppress(OSError):
        sink.shutdown(socket.SHUT_RDWR)
