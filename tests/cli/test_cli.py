"""The deskwork command line: demo (with and without a terminal) and runs."""

from __future__ import annotations

import os
import pty
import select
import subprocess
import sys
import time
from pathlib import Path

from deskwork.cli import main
from deskwork.store import SQLiteRunStore


def _deskwork(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "deskwork.cli", *args],
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_demo_without_terminal_answers_itself_and_exits_zero(tmp_path: Path) -> None:
    done = _deskwork("demo", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "no terminal to ask" in done.stdout
    assert '"approved": true' in done.stdout
    assert "[run.paused]" in done.stdout and "[run.resumed]" in done.stdout
    assert "handoff front_desk → stockroom" in done.stdout
    assert "team answer: Oat milk: 30 in stock" in done.stdout
    store = SQLiteRunStore(tmp_path / ".deskwork" / "deskwork.db")
    team, single = store.list_runs()
    assert single.status == "completed" and team.status == "completed"
    assert single.output_json["ordered"] == 38
    events = [e.type for e in store.get_events(team.run_id)]
    assert "workforce.handoff" in events and events[-1] == "run.completed"


def _read_until(fd: int, needle: bytes, timeout: float = 60.0) -> bytes:
    seen = b""
    deadline = time.monotonic() + timeout
    while needle not in seen and time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.5)
        if ready:
            try:
                chunk = os.read(fd, 4096)
            except OSError:
                break
            if not chunk:
                break
            seen += chunk
    return seen


def test_demo_in_a_terminal_asks_the_person(tmp_path: Path) -> None:
    primary, secondary = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "deskwork.cli", "demo"],
        cwd=tmp_path,
        stdin=secondary,
        stdout=secondary,
        stderr=secondary,
    )
    os.close(secondary)
    try:
        before = _read_until(primary, b"[y/N]")
        assert b"[y/N]" in before, before.decode(errors="replace")
        os.write(primary, b"n\n")
        after = _read_until(primary, b"deskwork runs show")
        assert proc.wait(timeout=300) == 0
    finally:
        os.close(primary)
        proc.kill()
    text = after.decode(errors="replace")
    assert "Tool execution declined" in text
    assert '"approved": false' in text


def test_runs_lists_and_shows_runs(tmp_path: Path, capsys: object) -> None:
    assert _deskwork("demo", cwd=tmp_path).returncode == 0
    listing = _deskwork("runs", cwd=tmp_path)
    assert listing.returncode == 0
    run_id = listing.stdout.splitlines()[2].split()[0]  # the single-worker run (older)
    shown = _deskwork("runs", "show", run_id, cwd=tmp_path)
    assert shown.returncode == 0
    assert "status=completed" in shown.stdout
    assert "check_stock" in shown.stdout and "-> 12" in shown.stdout
    assert "tool.confirmation_requested" in shown.stdout
    assert "[user] We are low on espresso beans." in shown.stdout


def test_runs_show_unknown_run_fails(tmp_path: Path) -> None:
    assert _deskwork("demo", cwd=tmp_path).returncode == 0
    assert main(["--storage-dir", str(tmp_path / ".deskwork"), "runs", "show", "nope"]) == 1
    assert main(["--storage-dir", str(tmp_path / "missing"), "runs"]) == 1
