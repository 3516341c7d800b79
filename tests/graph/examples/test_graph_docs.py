"""The README's graph section runs offline and prints what its comments say."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import structlog.testing

pytest.importorskip("langgraph")

DOC = Path(__file__).resolve().parents[3] / "README.md"


def _python_blocks(text: str) -> list[str]:
    return re.findall(r"^```python\n(.*?)^```", text, flags=re.MULTILINE | re.DOTALL)


def _expected_prints(code: str) -> list[str]:
    """The ``# ...`` comment after each ``print(...)``: what that line prints."""
    return re.findall(r"^print\(.*\)\s+# (.+)$", code, flags=re.MULTILINE)


def test_graph_section_runs_and_prints_what_its_comments_say(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    blocks = [b for b in _python_blocks(DOC.read_text(encoding="utf-8")) if "GraphRunner(" in b]
    assert blocks, "the README's graph section has no python example"
    monkeypatch.chdir(tmp_path)  # the desk stores its runs under ./.deskwork
    namespace: dict[str, Any] = {}
    for index, code in enumerate(blocks):
        expected = _expected_prints(code)
        assert expected, f"block {index} documents no output"
        namespace = {"__name__": "__main__"}
        with structlog.testing.capture_logs():
            exec(compile(code, f"{DOC}:block{index}", "exec"), namespace)
        assert capsys.readouterr().out.splitlines() == expected
    assert (tmp_path / ".deskwork").is_dir()
    # the event types the prose names are in the stored run
    events = namespace["desk"].run_store.get_events(namespace["report"].run_id)
    named = re.findall(r"`((?:graph|llm)\.[a-z.]+)`", DOC.read_text(encoding="utf-8"))
    assert named and set(named) <= {event.type for event in events}
