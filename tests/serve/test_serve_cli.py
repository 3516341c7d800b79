"""``deskwork serve`` and ``deskwork demo --serve`` as real processes."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

HERE = Path(__file__).parent


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@contextmanager
def _process(args: list[str], cwd: Path, env: dict[str, str] | None = None) -> Iterator[str]:
    for _attempt in range(3):  # a port found free may be taken before the server binds it
        port = _free_port()
        proc = subprocess.Popen(
            [sys.executable, "-m", "deskwork", *args, "--port", str(port)],
            cwd=cwd,
            env={**os.environ, "PYTHONPATH": str(HERE), **(env or {})},
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        url = f"http://127.0.0.1:{port}"
        try:
            if _started(proc, url):
                yield url
                return
        finally:
            proc.terminate()
            proc.wait(timeout=10)
    raise AssertionError("the server found its port taken three times")


def _started(proc: subprocess.Popen[str], url: str) -> bool:
    """Whether the server answers at ``url``; ``False`` if it could not bind its port."""
    deadline = time.monotonic() + 120  # a loaded CI machine starts Python slowly
    while True:
        if proc.poll() is not None:
            output = proc.stdout.read() if proc.stdout else ""
            assert "address already in use" in output.lower(), output
            return False
        try:
            httpx.get(url + "/openapi.json", timeout=1)
            return True
        except httpx.TransportError:
            assert time.monotonic() < deadline, "server did not start"
            time.sleep(0.1)


def test_serve_module_attr_with_a_token_from_the_environment(tmp_path: Path) -> None:
    env = {"DESKWORK_SERVE_TOKEN": "tok-123"}
    with _process(["serve", "serve_support:make_desk"], tmp_path, env) as url:
        assert httpx.get(url + "/runners").status_code == 401
        auth = {"Authorization": "Bearer tok-123"}
        report = httpx.post(
            url + "/runs?wait=true",
            json={"runner": "echo", "job": {"input": "hi"}},
            headers=auth,
            timeout=10,
        ).json()
        assert report["content"] == "echo: hi"


def test_serve_refuses_a_public_address_without_a_token(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "deskwork", "serve", "serve_support:make_desk", "--host", "0.0.0.0"],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(HERE), "DESKWORK_SERVE_TOKEN": ""},
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode == 2
    assert "token" in done.stderr


def test_demo_serve_starts_the_demo_behind_the_viewer(tmp_path: Path) -> None:
    with _process(["demo", "--serve", "--storage-dir", str(tmp_path / "store")], tmp_path) as url:
        assert "deskwork" in httpx.get(url + "/").text
        runs = httpx.get(url + "/runs").json()["runs"]
        assert sorted(r["status"] for r in runs) == ["completed", "paused"]
        paused = next(r for r in runs if r["status"] == "paused")
        done = httpx.post(
            f"{url}/runs/{paused['run_id']}/resume?wait=true", json={"decision": True}, timeout=10
        ).json()
        assert done["status"] == "completed"
        assert "ordered 38 x espresso beans" in done["content"]


def test_without_the_extra_the_error_names_it(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import deskwork.serve
    from deskwork.cli import main
    from deskwork.exceptions import MissingExtraError

    monkeypatch.setitem(sys.modules, "fastapi", None)
    with pytest.raises(MissingExtraError, match=r"deskwork\[serve\]"):
        deskwork.serve.create_app  # noqa: B018 - the lazy attribute is the point
    assert main(["serve", "serve_support:make_desk"]) == 2
    assert "deskwork[serve]" in capsys.readouterr().err


def test_serve_tunes_the_process_before_uvicorn_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    """Objects made before the server runs are out of the garbage collector's reach (a full
    collection while events fan out scans only what the server made since), and a busy
    thread keeps the GIL from the loop's thread for at most 1 ms, not 5."""
    import gc

    import uvicorn
    from serve_support import make_desk

    from deskwork.serve import serve

    seen: list[tuple[int, float]] = []

    def run(app: object, **options: object) -> None:
        seen.append((gc.get_freeze_count(), sys.getswitchinterval()))

    monkeypatch.setattr(uvicorn, "run", run)
    before, interval = gc.get_freeze_count(), sys.getswitchinterval()
    try:
        serve(make_desk(), port=_free_port())
    finally:
        gc.unfreeze()
        sys.setswitchinterval(interval)
    ((frozen, switch),) = seen
    assert frozen > before and switch <= 0.001


def test_serve_leaves_the_process_alone_when_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    import gc

    import uvicorn
    from serve_support import make_desk

    from deskwork.serve import serve

    seen: list[tuple[int, float]] = []

    def run(app: object, **options: object) -> None:
        seen.append((gc.get_freeze_count(), sys.getswitchinterval()))

    monkeypatch.setattr(uvicorn, "run", run)
    before, interval = gc.get_freeze_count(), sys.getswitchinterval()
    serve(make_desk(), port=_free_port(), tune=False)
    assert seen == [(before, interval)]
