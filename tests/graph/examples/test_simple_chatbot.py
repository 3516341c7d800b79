"""examples/simple_chatbot (the guide's minimal example, 1.2) runs offline through a desk."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from deskwork import Desk

pytest.importorskip("langgraph")

MAIN = Path(__file__).resolve().parents[3] / "examples" / "simple_chatbot" / "main.py"


def test_simple_chatbot_greets_and_stores_the_conversation(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(MAIN), "--data-dir", str(tmp_path), "Hi, I'm Alice"],
        capture_output=True,
        text=True,
        timeout=60,
        env=dict(os.environ),
        check=False,
    )
    assert done.returncode == 0, done.stderr
    *chat, footer = done.stdout.splitlines()
    assert chat == [
        "user: Hi, I'm Alice",
        "supervisor: Routing to greeter.",
        "greeter: Hello! This is greeting #1. You said: Routing to greeter.",
        "supervisor: The greeter said hello.",
    ]
    run_id = footer.removeprefix("[run ").removesuffix(": completed]")
    store = Desk(storage_dir=tmp_path).run_store
    record = store.get_run(run_id)
    assert record is not None and record.status == "completed"
    agents = [e.source for e in store.get_events(run_id) if e.type == "graph.agent.completed"]
    assert agents == ["supervisor", "greeter", "supervisor"]
