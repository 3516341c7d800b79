"""A paused tool call whose arguments held a secret, resumed from the run store (a new desk, a
restart), fails clearly instead of running with the ``<redacted>`` placeholder."""

from __future__ import annotations

from pathlib import Path

import pytest

from deskwork import Desk, Job, Worker
from deskwork.testing import ScriptedAdapter, call_tool, reply
from deskwork.tools import tool

SECRET = "sk-proj-ABCDEF1234567890abcdefghijklmnopqrstuvwx"


def _desk(storage: Path, *turns: object) -> Desk:
    return Desk(model="scripted/m", adapter=ScriptedAdapter(list(turns)), storage_dir=storage)


@pytest.mark.parametrize("kind", ["confirmation", "user_input"])
def test_a_call_that_lost_a_secret_to_the_store_is_not_run(tmp_path: Path, kind: str) -> None:
    received: list[str] = []

    @tool(requires_confirmation=kind == "confirmation", requires_user_input=kind == "user_input")
    def deploy(token: str, user_input: str = "") -> str:
        received.append(token)
        return "deployed"

    worker = Worker(name="ops", tools=[deploy])
    first = _desk(tmp_path, call_tool("deploy", token=SECRET))
    paused = first.run(worker, Job(input="deploy it"))
    assert paused.status == "paused"
    first.close()

    second = _desk(tmp_path, reply("could not deploy"))
    report = second.resume(paused.run_id, True if kind == "confirmation" else "go", runner=worker)

    assert received == []  # never called with "<redacted>" as the token
    assert report.status == "completed"
    result = report.tool_calls[0].result
    assert result is not None and result.exception_type == "RedactedArguments"
    assert "held a secret" in (result.error or "")
    failed = [e for e in second.run_store.get_events(report.run_id) if e.type == "tool.failed"]
    assert failed and failed[-1].payload["exception_type"] == "RedactedArguments"
    second.close()


def test_the_desk_that_paused_resumes_with_the_secret(tmp_path: Path) -> None:
    received: list[str] = []

    @tool(requires_confirmation=True)
    def deploy(token: str) -> str:
        received.append(token)
        return "deployed"

    desk = _desk(tmp_path, call_tool("deploy", token=SECRET), reply("done"))
    paused = desk.run(Worker(name="ops", tools=[deploy]), Job(input="deploy it"))
    report = desk.resume(paused, True)

    assert report.status == "completed" and received == [SECRET]
    desk.close()


def test_arguments_that_only_quote_the_placeholder_still_run(tmp_path: Path) -> None:
    """A model that echoes a redacted history (a log line, a config file) sends the
    placeholder's text with no secret: its approved call runs, resumed from the store too."""
    received: list[str] = []

    @tool(requires_confirmation=True)
    def write_file(content: str) -> str:
        received.append(content)
        return "written"

    worker = Worker(name="ops", tools=[write_file])
    text = "OPENAI_API_KEY=<redacted>\nDEBUG=1"
    first = _desk(tmp_path, call_tool("write_file", content=text))
    paused = first.run(worker, Job(input="save the config"))
    first.close()
    second = _desk(tmp_path, reply("saved"))
    report = second.resume(paused.run_id, True, runner=worker)
    assert received == [text]
    assert report.status == "completed" and report.content == "saved"
