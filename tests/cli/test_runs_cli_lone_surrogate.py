"""``deskwork runs`` shows a run whose texts hold a lone surrogate (``"\\ud800"``: a model's
JSON with a cut emoji gives one; the stores keep it, UTF-8 cannot encode it) escaped, with
exit code 0, instead of a ``UnicodeEncodeError`` traceback that hid every run of the
listing; ordinary non-ASCII text prints as it is."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from deskwork import Desk, Job, Worker
from deskwork.cli import main
from deskwork.testing import ScriptedAdapter, call_tool, reply
from deskwork.tools.base import tool

CUT = "fin\ud800al"  # a lone high surrogate
TOOL_TEXT = "res\udc80ult"  # a lone low surrogate (the range surrogateescape writes as a byte)
PLAIN = "café 😀 中文"


@tool(description="Give back a text")
def give(text: str) -> str:
    return TOOL_TEXT


def _store(tmp_path: Path) -> tuple[str, str, str]:
    """A SQLite store with a run whose answer and tool result hold a lone surrogate, and a
    later run of ordinary non-ASCII text: its directory and the two run ids."""
    storage = str(tmp_path / ".deskwork")
    turns = [call_tool("give", text="x"), reply(CUT), reply(PLAIN)]
    desk = Desk(model="scripted/test", adapter=ScriptedAdapter(turns), storage_dir=storage)
    try:
        cut = desk.run(Worker(name="w", tools=[give], instructions="Give."), Job(input=PLAIN))
        plain = desk.run(Worker(name="p", instructions="Say."), Job(input="hi"))
    finally:
        desk.close()
    assert cut.status == plain.status == "completed" and cut.content == CUT
    return storage, cut.run_id, plain.run_id


def _out(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    before = sys.stdout.errors
    assert main(list(args)) == 0
    assert sys.stdout.errors == before  # the output's handler is the caller's again
    return capsys.readouterr().out


def test_the_listing_shows_the_run_escaped_and_every_other_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    storage, cut, plain = _store(tmp_path)
    out = _out(capsys, "runs", "--storage-dir", storage)
    assert cut in out and plain in out
    assert "fin\\ud800al" in out and PLAIN in out

    rows = json.loads(_out(capsys, "runs", "--json", "--storage-dir", storage))
    assert {r["run_id"]: r["output"] for r in rows} == {cut: CUT, plain: PLAIN}
    assert PLAIN in _out(capsys, "runs", "--json", "--storage-dir", storage)  # not escaped


def test_show_prints_the_run_escaped_and_its_json_gives_the_texts_back(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    storage, cut, _ = _store(tmp_path)
    out = _out(capsys, "runs", "show", cut, "--storage-dir", storage)
    assert "[assistant] fin\\ud800al" in out and "-> res\\udc80ult" in out
    assert f"[user] {PLAIN}" in out and "\noutput: fin\\ud800al\n" in out

    text = _out(capsys, "runs", "show", cut, "--json", "--storage-dir", storage)
    shown = json.loads(text)
    assert shown["output"] == CUT and shown["input"]["input"] == PLAIN
    assert [m["content"] for m in shown["state"]["messages"]][-1] == CUT
    assert shown["state"]["tool_calls"][0]["result"]["content"] == TOOL_TEXT
    assert f'"input": "{PLAIN}"' in text


@pytest.mark.parametrize("encoding", [None, "ascii"])
def test_the_console_script_writes_json_its_reader_takes(
    tmp_path: Path, encoding: str | None
) -> None:
    """Through a real stdout: Python's own handler (``surrogateescape`` in this locale,
    ``strict`` in others), and an encoding without the run's characters."""
    storage, cut, _ = _store(tmp_path)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONIOENCODING"}
    if encoding is not None:
        env["PYTHONIOENCODING"] = encoding
    command = [sys.executable, "-m", "deskwork", "runs", "show", cut, "--json"]
    done = subprocess.run(
        [*command, "--storage-dir", storage], capture_output=True, env=env, timeout=300
    )
    assert done.returncode == 0, done.stderr.decode(errors="replace")
    shown = json.loads(done.stdout.decode(encoding or "utf-8"))
    assert shown["output"] == CUT and shown["input"]["input"] == PLAIN
    assert shown["state"]["tool_calls"][0]["result"]["content"] == TOOL_TEXT
