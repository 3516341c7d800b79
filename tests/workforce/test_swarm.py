"""Swarm mode: handoffs in one run, allowlist/membership checks, the cap, pause/resume."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from wfkit import Model, assert_metrics_match_llm_events, deploy, make_desk, of_type, worker

from deskwork import Job, Worker, Workforce
from deskwork.exceptions import ConfigurationError
from deskwork.testing import call_tool
from deskwork.tools import Tool, transfer_to_agent_tool

SECRET = "SECRET-CODER-RULES"


def coder(*tools: Tool) -> Worker:
    return Worker(name="coder", instructions=f"coder\n{SECRET}", tools=list(tools))


def handoff(agent: str | None = None, context: str = "") -> Any:
    args = {"context": context} if agent is None else {"agent_name": agent, "context": context}
    return call_tool("transfer_to_agent", **args)


def swarm(*workers: Worker, max_handoffs: int = 10) -> Workforce:
    return Workforce(list(workers), mode="swarm", name="swarm", max_handoffs=max_handoffs)


def pair() -> Workforce:
    return swarm(coder(transfer_to_agent_tool(["reviewer"])), worker("reviewer", deploy))


async def test_handoff_switches_worker_in_the_same_run_without_system_leakage() -> None:
    model = Model(coder=[handoff("reviewer", "please review")], reviewer=["LGTM"])
    desk = make_desk(model)
    report = await desk.arun(pair(), Job(input="build it"))

    assert report.status == "completed" and report.content == "LGTM"
    assert model.order() == ["coder", "reviewer"]
    (messages,) = model.messages_of("reviewer")
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "tool", "user"]
    assert messages[0]["content"] == "reviewer"
    assert all(SECRET not in str(m["content"]) for m in messages)
    assert messages[1]["content"] == "build it"
    assert messages[3]["content"] == "Transferred to reviewer"
    assert messages[4]["content"] == "Handoff from coder to reviewer.\nContext: please review"

    (event,) = of_type(report, "workforce.handoff")
    assert event.source == "swarm"
    assert event.payload == {
        "from": "coder", "to": "reviewer", "context": "please review", "handoffs": 1,
    }  # fmt: skip
    stored = [(e.type, e.source) for e in desk.run_store.get_events(report.run_id)]
    at = stored.index(("workforce.handoff", "swarm"))
    assert stored[at - 2 : at + 2] == [
        ("worker.paused", "coder"),
        ("tool.completed", "transfer_to_agent"),
        ("workforce.handoff", "swarm"),
        ("worker.started", "reviewer"),
    ]
    assert_metrics_match_llm_events(report)


async def test_target_outside_the_allowlist_gets_an_error_and_the_worker_continues() -> None:
    model = Model(coder=[handoff("editor"), "I will do it myself"])
    wf = swarm(coder(transfer_to_agent_tool(["reviewer"])), worker("reviewer"), worker("editor"))
    report = await make_desk(model).arun(wf, Job(input="go"))

    assert report.status == "completed" and report.content == "I will do it myself"
    assert model.order() == ["coder", "coder"]
    assert not of_type(report, "workforce.handoff")
    (warning,) = of_type(report, "workforce.warning")
    assert warning.payload["reason"] == "handoff_rejected"
    assert warning.payload["target"] == "editor" and warning.payload["worker"] == "coder"
    answer = model.messages_of("coder")[1][-1]
    assert answer["role"] == "tool"
    assert answer["content"] == "Error: agent 'editor' is not allowed; choose one of ['reviewer']"
    assert of_type(report, "tool.failed")[0].source == "transfer_to_agent"


async def test_target_outside_the_workforce_is_rejected() -> None:
    model = Model(coder=[handoff("ghost"), "fine"])
    report = await make_desk(model).arun(
        swarm(coder(transfer_to_agent_tool()), worker("reviewer")), Job(input="go")
    )
    assert report.content == "fine"
    detail = of_type(report, "workforce.warning")[0].payload["detail"]
    assert detail == "agent 'ghost' is not in this workforce; members: ['coder', 'reviewer']"


async def test_missing_agent_name_is_rejected() -> None:
    model = Model(coder=[handoff(None, "no target"), "fine"])
    report = await make_desk(model).arun(
        swarm(coder(transfer_to_agent_tool()), worker("reviewer")), Job(input="go")
    )
    assert report.content == "fine"
    assert "needs an agent_name" in model.messages_of("coder")[1][-1]["content"]


async def test_allowlist_is_enforced_for_tools_from_the_job_override() -> None:
    model = Model(coder=[handoff("editor"), handoff("reviewer", "ok")], reviewer=["reviewed"])
    wf = swarm(coder(), worker("reviewer"), worker("editor"))
    job = Job(input="go", tools_override=[transfer_to_agent_tool(["reviewer"])])
    report = await make_desk(model).arun(wf, job)

    assert report.content == "reviewed"
    assert model.order() == ["coder", "coder", "reviewer"]
    assert [w.payload["target"] for w in of_type(report, "workforce.warning")] == ["editor"]
    assert [h.payload["to"] for h in of_type(report, "workforce.handoff")] == ["reviewer"]


async def test_an_empty_allowlist_allows_no_target() -> None:
    model = Model(coder=[handoff("reviewer"), "on my own"])
    report = await make_desk(model).arun(
        swarm(coder(transfer_to_agent_tool([])), worker("reviewer")), Job(input="go")
    )

    assert report.status == "completed" and report.content == "on my own"
    assert model.order() == ["coder", "coder"]
    assert not of_type(report, "workforce.handoff")
    assert of_type(report, "workforce.warning")[0].payload["target"] == "reviewer"


async def test_exceeding_max_handoffs_fails_the_run() -> None:
    tool = transfer_to_agent_tool()
    model = Model(a=[handoff("b"), handoff("b")], b=[handoff("a")])
    wf = swarm(worker("a", tool), worker("b", tool), max_handoffs=2)
    report = await make_desk(model).arun(wf, Job(input="go"))

    assert report.status == "failed" and report.errors == ["max_handoffs exceeded (2)"]
    assert len(of_type(report, "workforce.handoff")) == 2
    assert model.order() == ["a", "b", "a"]
    assert report.metrics["llm_calls"] == 3
    assert of_type(report, "workforce.completed")[0].payload == {"status": "failed"}


async def test_max_handoffs_zero_fails_the_first_handoff() -> None:
    model = Model(coder=[handoff("reviewer")])
    report = await make_desk(model).arun(
        swarm(coder(transfer_to_agent_tool()), worker("reviewer"), max_handoffs=0),
        Job(input="go"),
    )
    assert report.status == "failed" and report.errors == ["max_handoffs exceeded (0)"]


async def test_pause_after_a_handoff_resumes_the_active_worker() -> None:
    model = Model(
        coder=[handoff("reviewer", "ship it")],
        reviewer=[call_tool("deploy", target="prod"), "deployed"],
    )
    desk = make_desk(model)
    paused = await desk.arun(pair(), Job(input="go"))

    assert paused.status == "paused" and paused.pending_action is not None
    assert paused.pending_action.type == "confirmation"
    record = desk.run_store.get_run(paused.run_id)
    assert record is not None and record.state is not None
    payload = record.state.payload
    assert payload["worker"] == "reviewer" and payload["handoffs"] == 1
    assert payload["metrics"]["llm_calls"] == 1  # the coder's share

    done = await desk.aresume(paused, True)
    assert done.status == "completed" and done.content == "deployed"
    assert model.order() == ["coder", "reviewer", "reviewer"]
    assert_metrics_match_llm_events(done)
    assert done.metrics["llm_calls"] == 3


async def test_swarm_resumes_the_exact_worker_in_a_new_process(tmp_path: Path) -> None:
    model = Model(coder=[handoff("reviewer")], reviewer=[call_tool("deploy", target="prod")])
    paused = await make_desk(model, tmp_path).arun(pair(), Job(input="go"))

    model2 = Model(reviewer=["deployed after restart"])
    done = await make_desk(model2, tmp_path).aresume(paused.run_id, True, runner=pair())
    assert done.status == "completed" and done.content == "deployed after restart"
    assert model2.order() == ["reviewer"]
    (messages,) = model2.messages_of("reviewer")
    assert all(SECRET not in str(m["content"]) for m in messages)
    assert messages[-1]["role"] == "tool" and messages[-1]["content"] == "deployed prod"
    assert done.metrics["llm_calls"] == 3


async def test_resume_without_the_paused_worker_is_refused_and_the_run_stays_paused(
    tmp_path: Path,
) -> None:
    model = Model(coder=[handoff("reviewer")], reviewer=[call_tool("deploy", target="prod")])
    paused = await make_desk(model, tmp_path).arun(pair(), Job(input="go"))

    desk = make_desk(Model(reviewer=["deployed"]), tmp_path)
    without = swarm(coder(transfer_to_agent_tool(["reviewer"])))
    with pytest.raises(ConfigurationError, match="swarm worker 'reviewer' is not a member"):
        await desk.aresume(paused.run_id, True, runner=without)
    record = desk.run_store.get_run(paused.run_id)
    assert record is not None and record.status == "paused"
    done = await desk.aresume(paused.run_id, True, runner=pair())
    assert done.status == "completed" and done.content == "deployed"
