"""Pause and resume: confirmation, user input, mixed turns, resume paths, new process."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from deskwork import Desk, EventLoopRunningError, Job, Report, RunnerNotRegisteredError, Worker
from deskwork.store import InMemoryRunStore, RunStore
from deskwork.testing import ScriptedAdapter, call_tool, call_tools, reply
from deskwork.tools import Tool, tool

MODEL = "scripted/model"
DECLINED = "Tool execution declined"


def _counting_tools(log: list[str]) -> list[Tool]:
    @tool()
    def record(tag: str) -> str:
        log.append(f"record:{tag}")
        return f"recorded {tag}"

    @tool(requires_confirmation=True)
    def delete(path: str) -> str:
        log.append(f"delete:{path}")
        return f"deleted {path}"

    @tool(requires_user_input=True)
    def ask(question: str, user_input: str) -> str:
        log.append(f"ask:{user_input}")
        return f"answer={user_input}"

    @tool(requires_user_input=True, input_key="answer", user_input_prompt="Your answer?")
    def ask_keyed(question: str, answer: str) -> str:
        log.append(f"ask_keyed:{answer}")
        return f"keyed={answer}"

    return [record, delete, ask, ask_keyed]


def _echo(messages: list[dict[str, Any]], tools: Any) -> str:
    return " | ".join(str(m["content"]) for m in messages if m["role"] == "tool")


def _desk(*turns: Any, store: RunStore | None = None, tmp: Path | None = None) -> Desk:
    return Desk(
        model=MODEL,
        adapter=ScriptedAdapter(turns),
        run_store=store or InMemoryRunStore(),
        storage_dir=tmp or ".deskwork-unused",
    )


def _types(report: Report) -> list[str]:
    return [e.type for e in report.events]


# --------------------------------------------------------------------------- confirmation


@pytest.mark.parametrize("decision", [True, "yes", "approve", "confirm", "Sure, go ahead"])
def test_confirmation_approvals_execute_the_tool(decision: Any) -> None:
    log: list[str] = []
    desk = _desk(call_tool("delete", path="a.txt"), _echo)
    worker = Worker(name="Ops", tools=_counting_tools(log))
    paused = desk.run(worker, Job(input="delete a.txt"))
    assert paused.status == "paused" and log == []
    done = desk.resume(paused, decision)
    assert done.status == "completed" and done.content == "deleted a.txt"
    assert log == ["delete:a.txt"]


@pytest.mark.parametrize(
    "decision", [False, None, "", "   ", "no", "NO", "decline", "deny", "cancel"]
)
def test_confirmation_declines_skip_the_tool(decision: Any) -> None:
    log: list[str] = []
    desk = _desk(call_tool("delete", path="a.txt"), _echo)
    paused = desk.run(Worker(name="Ops", tools=_counting_tools(log)), Job(input="go"))
    done = desk.resume(paused, decision)
    assert log == []
    assert done.status == "completed" and done.content == f"Error: {DECLINED}"
    failed = [e for e in done.events if e.type == "tool.failed"]
    assert len(failed) == 1 and failed[0].payload["error"] == DECLINED
    assert failed[0].source == "delete"
    assert failed[0].payload["tool_call_id"] == paused.pending_action.tool_call.id  # type: ignore[union-attr]
    assert done.tool_calls[0].result is not None and done.tool_calls[0].result.error == DECLINED


def test_paused_report_and_events() -> None:
    desk = _desk(call_tool("delete", path="x"), reply("ok"))
    report = desk.run(Worker(name="Ops", tools=_counting_tools([])), Job(input="go"))
    action = report.pending_action
    assert report.status == "paused" and action is not None
    assert action.type == "confirmation" and action.options == ["approve", "decline"]
    assert action.tool_call.name == "delete" and action.tool_call.arguments == {"path": "x"}
    assert action.prompt == "Confirm delete (x)" and action.metadata["tool"] == "delete"
    types = _types(report)
    assert types[-3:] == ["tool.confirmation_requested", "worker.paused", "run.paused"]
    assert "worker.completed" not in types
    paused_event = next(e for e in report.events if e.type == "worker.paused")
    assert paused_event.payload == {"pending_action_type": "confirmation"}
    assert report.events[-1].payload == {}
    record = desk.run_store.get_run(report.run_id)
    assert record is not None and record.status == "paused" and record.state is not None
    assert record.state.pending_action is not None
    resumed = desk.resume(report, True)
    new = _types(resumed)[len(types) :]
    assert new[:2] == ["run.resumed", "worker.started"] and new[-1] == "run.completed"


def test_custom_confirmation_prompt() -> None:
    @tool(requires_confirmation=True, confirmation_prompt="Proceed?")
    def act() -> str:
        return "x"

    report = _desk(call_tool("act")).run(Worker(name="w", tools=[act]), Job(input="go"))
    assert report.pending_action is not None and report.pending_action.prompt == "Proceed?"


# --------------------------------------------------------------------------- user input


def test_user_input_goes_into_the_default_key() -> None:
    log: list[str] = []
    desk = _desk(call_tool("ask", question="Your name?"), _echo)
    paused = desk.run(Worker(name="w", tools=_counting_tools(log)), Job(input="go"))
    action = paused.pending_action
    assert action is not None and action.type == "user_input"
    assert action.metadata["input_key"] == "user_input" and action.options is None
    assert "tool.user_input_requested" in _types(paused)
    done = desk.resume(paused, "Ada")
    assert done.content == "answer=Ada" and log == ["ask:Ada"]


def test_user_input_goes_into_input_key() -> None:
    log: list[str] = []
    desk = _desk(call_tool("ask_keyed", question="Color?"), _echo)
    paused = desk.run(Worker(name="w", tools=_counting_tools(log)), Job(input="go"))
    assert paused.pending_action is not None and paused.pending_action.prompt == "Your answer?"
    assert paused.pending_action.metadata["input_key"] == "answer"
    done = desk.resume(paused.run_id, "blue")
    assert done.content == "keyed=blue" and log == ["ask_keyed:blue"]


def test_user_input_none_declines() -> None:
    log: list[str] = []
    desk = _desk(call_tool("ask", question="q"), _echo)
    paused = desk.run(Worker(name="w", tools=_counting_tools(log)), Job(input="go"))
    done = desk.resume(paused, None)
    assert log == [] and done.content == f"Error: {DECLINED}"


# --------------------------------------------------------------------------- mixed turns


def test_pending_call_in_the_middle_of_a_turn() -> None:
    log: list[str] = []
    turn = call_tools(
        ("record", {"tag": "first"}),
        ("delete", {"path": "mid"}),
        ("record", {"tag": "last"}),
    )
    desk = _desk(turn, _echo)
    paused = desk.run(Worker(name="w", tools=_counting_tools(log)), Job(input="go"))
    assert paused.status == "paused" and log == ["record:first"]
    assert paused.pending_action is not None and paused.pending_action.tool_call.name == "delete"
    done = desk.resume(paused, True)
    assert log == ["record:first", "delete:mid"]  # nothing ran twice, "last" never ran
    parts = (done.content or "").split(" | ")
    assert parts[0] == "recorded first" and parts[1] == "deleted mid"
    assert parts[2].startswith("Error: Tool call skipped")
    tool_ids = [m.tool_call_id for m in done.messages if m.role == "tool"]
    assert tool_ids == ["call_0", "call_1", "call_2"]


def test_two_pauses_in_one_run() -> None:
    log: list[str] = []
    desk = _desk(call_tool("delete", path="1"), call_tool("ask", question="q"), _echo)
    worker = Worker(name="w", tools=_counting_tools(log))
    first = desk.run(worker, Job(input="go"))
    second = desk.resume(first, True)
    assert second.status == "paused" and second.run_id == first.run_id
    assert second.pending_action is not None and second.pending_action.type == "user_input"
    done = desk.resume(second, "input!")
    assert done.status == "completed" and log == ["delete:1", "ask:input!"]


def test_handoff_pauses_without_a_tool_request_event() -> None:
    @tool(requires_handoff=True)
    def hand_off(agent_name: str, context: str = "") -> str:
        return f"to {agent_name}"

    desk = _desk(call_tool("hand_off", agent_name="Writer", context="draft it"))
    report = desk.run(Worker(name="Researcher", tools=[hand_off]), Job(input="go"))
    assert report.status == "paused"
    assert report.pending_action is not None and report.pending_action.type == "handoff"
    types = _types(report)
    assert "tool.confirmation_requested" not in types and "tool.user_input_requested" not in types
    paused = next(e for e in report.events if e.type == "worker.paused")
    assert paused.payload["pending_action_type"] == "handoff"


# --------------------------------------------------------------------------- resume paths


def test_resume_twice_and_resume_non_paused_runs_fail() -> None:
    log: list[str] = []
    desk = _desk(call_tool("delete", path="x"), reply("done"), reply("plain"))
    worker = Worker(name="w", tools=_counting_tools(log))
    paused = desk.run(worker, Job(input="go"))
    assert desk.resume(paused, True).status == "completed"
    again = desk.resume(paused, True)
    assert again.status == "failed" and "not paused" in again.errors[0]
    assert log == ["delete:x"]
    completed = desk.run(worker, Job(input="no tools needed"))
    assert completed.status == "completed"
    not_paused = desk.resume(completed, True)
    assert not_paused.status == "failed" and "completed" in not_paused.errors[0]
    unknown = desk.resume("no-such-run", True)
    assert unknown.status == "failed" and "unknown run" in unknown.errors[0]


async def test_concurrent_resumes_claim_the_pause_once(tmp_path: Path) -> None:
    log: list[str] = []

    @tool(requires_confirmation=True)
    async def slow_delete(path: str) -> str:
        log.append(path)
        await asyncio.sleep(0.05)
        return "deleted"

    desk = Desk(
        model=MODEL,
        adapter=ScriptedAdapter([call_tool("slow_delete", path="p")], default=reply("ok")),
        storage_dir=tmp_path,
    )
    paused = await desk.arun(Worker(name="w", tools=[slow_delete]), Job(input="go"))
    results = await asyncio.gather(desk.aresume(paused, True), desk.aresume(paused, True))
    statuses = sorted(r.status for r in results)
    assert statuses == ["completed", "failed"] and log == ["p"]


def test_runner_not_registered_in_a_new_desk(tmp_path: Path) -> None:
    log: list[str] = []
    tools = _counting_tools(log)
    first = Desk(
        model=MODEL, adapter=ScriptedAdapter([call_tool("delete", path="z")]), storage_dir=tmp_path
    )
    paused = first.run(Worker(name="Ops", tools=tools), Job(input="go"))
    second = Desk(model=MODEL, adapter=ScriptedAdapter([reply("finished")]), storage_dir=tmp_path)
    with pytest.raises(RunnerNotRegisteredError):
        second.resume(paused.run_id, True)
    # the failed attempt did not consume the pause
    second.register(Worker(name="Ops", tools=tools))
    done = second.resume(paused.run_id, True)
    assert done.status == "completed" and done.content == "finished" and log == ["delete:z"]


def test_resume_that_fails_to_start_keeps_the_pause(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log: list[str] = []
    tools = _counting_tools(log)
    first = Desk(
        model=MODEL, adapter=ScriptedAdapter([call_tool("delete", path="z")]), storage_dir=tmp_path
    )
    paused = first.run(Worker(name="Ops", tools=tools), Job(input="go"))
    # a new process whose default adapter cannot be built (say, a missing extra)
    from deskwork.adapters import litellm

    def broken(self: Any, **kwargs: Any) -> None:
        raise ImportError("litellm is not installed")

    monkeypatch.setattr(litellm.LiteLLMAdapter, "__init__", broken)
    second = Desk(model=MODEL, storage_dir=tmp_path)
    second.register(Worker(name="Ops", tools=tools))
    with pytest.raises(ImportError):
        second.resume(paused.run_id, True)
    record = second.run_store.get_run(paused.run_id)
    assert record is not None and record.status == "paused"  # not stuck in "running"
    third = Desk(model=MODEL, adapter=ScriptedAdapter([reply("finished")]), storage_dir=tmp_path)
    done = third.resume(paused.run_id, True, runner=Worker(name="Ops", tools=tools))
    assert done.status == "completed" and log == ["delete:z"]


async def test_sync_run_and_resume_inside_a_running_loop_raise() -> None:
    desk = _desk(reply("x"))
    with pytest.raises(EventLoopRunningError, match="arun"):
        desk.run(Worker(name="w"), Job(input="go"))
    with pytest.raises(EventLoopRunningError, match="aresume"):
        desk.resume("some-run", True)


# --------------------------------------------------------------------------- new process

_CHILD = textwrap.dedent(
    """
    import json, sys
    from pathlib import Path
    from deskwork import Desk, Worker
    from deskwork.testing import ScriptedAdapter
    from deskwork.tools import tool

    storage, counter, run_id, decision = sys.argv[1], Path(sys.argv[2]), sys.argv[3], sys.argv[4]

    def note(line):
        with counter.open("a") as f:
            f.write(line + "\\n")

    @tool()
    def record(tag: str) -> str:
        note("record:" + tag)
        return "recorded " + tag

    @tool(requires_confirmation=True)
    def delete(path: str) -> str:
        note("delete:" + path)
        return "deleted " + path

    def echo(messages, tools):
        return " | ".join(m["content"] for m in messages if m["role"] == "tool")

    desk = Desk(model="scripted/model", adapter=ScriptedAdapter([echo]), storage_dir=storage)
    worker = Worker(name="Ops", tools=[record, delete])  # the same name as the paused one
    report = desk.resume(run_id, json.loads(decision), runner=worker)
    print(json.dumps({"status": report.status, "content": report.content,
                      "errors": report.errors, "types": [e.type for e in report.events]}))
    """
)


def _parent_tools(counter: Path) -> list[Tool]:
    def note(line: str) -> None:
        with counter.open("a") as f:
            f.write(line + "\n")

    @tool()
    def record(tag: str) -> str:
        note("record:" + tag)
        return "recorded " + tag

    @tool(requires_confirmation=True)
    def delete(path: str) -> str:
        note("delete:" + path)
        return "deleted " + path

    return [record, delete]


def _child(tmp_path: Path, counter: Path, run_id: str, decision: Any) -> dict[str, Any]:
    script = tmp_path / "child.py"
    script.write_text(_CHILD)
    out = subprocess.run(
        [
            sys.executable,
            str(script),
            str(tmp_path / "store"),
            str(counter),
            run_id,
            json.dumps(decision),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def test_resume_in_a_new_process_never_repeats_completed_calls(tmp_path: Path) -> None:
    counter = tmp_path / "executions.log"
    turn = call_tools(("record", {"tag": "before"}), ("delete", {"path": "db"}))
    desk = Desk(model=MODEL, adapter=ScriptedAdapter([turn]), storage_dir=tmp_path / "store")
    paused = desk.run(Worker(name="Ops", tools=_parent_tools(counter)), Job(input="clean up"))
    assert paused.status == "paused"
    assert counter.read_text().splitlines() == ["record:before"]

    result = _child(tmp_path, counter, paused.run_id, True)
    assert result["status"] == "completed", result
    assert result["content"] == "recorded before | deleted db"
    assert counter.read_text().splitlines() == ["record:before", "delete:db"]
    assert result["types"][0] == "run.started" and "run.resumed" in result["types"]

    # the parent sees the final state written by the child
    record = desk.run_store.get_run(paused.run_id)
    assert record is not None and record.status == "completed"
    assert record.output == "recorded before | deleted db"
    # and a second resume (from any process) is refused
    again = _child(tmp_path, counter, paused.run_id, True)
    assert again["status"] == "failed"
    assert counter.read_text().splitlines() == ["record:before", "delete:db"]


def test_decline_in_a_new_process(tmp_path: Path) -> None:
    counter = tmp_path / "executions.log"
    desk = Desk(
        model=MODEL,
        adapter=ScriptedAdapter([call_tool("delete", path="db")]),
        storage_dir=tmp_path / "store",
    )
    paused = desk.run(Worker(name="Ops", tools=_parent_tools(counter)), Job(input="go"))
    result = _child(tmp_path, counter, paused.run_id, "no")
    assert result["status"] == "completed" and result["content"] == f"Error: {DECLINED}"
    assert not counter.exists()
