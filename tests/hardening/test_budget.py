"""Spending limits (Desk/Job max_cost_usd) and per-model cost and token totals."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from deskwork import Desk, Job, Worker, Workforce
from deskwork.store import InMemoryRunStore
from deskwork.testing import ScriptedAdapter, Turn, call_tool, reply, structured
from deskwork.tools import tool


def _priced(turn: Turn, cost: float) -> Turn:
    turn.cost = cost
    return turn


@tool
def noop() -> str:
    """Does nothing."""
    return "ok"


def _desk(adapter: ScriptedAdapter, **kwargs: Any) -> Desk:
    return Desk(model="scripted/m", adapter=adapter, run_store=InMemoryRunStore(), **kwargs)


def test_a_run_fails_with_a_budget_error_once_its_spending_reaches_the_limit() -> None:
    adapter = ScriptedAdapter(
        [
            _priced(call_tool("noop"), 0.03),
            _priced(call_tool("noop"), 0.03),
            _priced(reply("never"), 0.03),
        ]
    )
    report = _desk(adapter, max_cost_usd=0.05).run(Worker(name="w", tools=[noop]), "go")
    assert report.status == "failed"
    assert report.errors[0].startswith("budget exceeded: spent $0.060000 of max_cost_usd")
    assert len(adapter.calls) == 2  # the third call was never made
    assert report.metrics["cost"] == pytest.approx(0.06)


def test_the_job_limit_applies_and_the_lower_limit_wins() -> None:
    adapter = ScriptedAdapter([_priced(call_tool("noop"), 0.02), _priced(reply("no"), 0.02)])
    desk = _desk(adapter, max_cost_usd=1.0)
    report = desk.run(Worker(name="w", tools=[noop]), Job(input="go", max_cost_usd=0.01))
    assert report.status == "failed" and "budget exceeded" in report.errors[0]
    assert len(adapter.calls) == 1


def test_a_call_estimated_above_the_limit_is_not_made() -> None:
    """The estimate comes from the price table (gpt-4o: input and output are priced)."""
    adapter = ScriptedAdapter([reply("never")])
    desk = Desk(model="openai/gpt-4o", adapter=adapter, run_store=InMemoryRunStore())
    big = "word " * 20_000  # about 25k tokens: far more than a tenth of a cent
    report = desk.run(Worker(name="w"), Job(input=big, max_cost_usd=0.001))
    assert report.status == "failed"
    assert "the next call to 'openai/gpt-4o' would cost about $0.0" in report.errors[0]
    assert adapter.calls == []


def test_a_run_under_its_limit_completes() -> None:
    adapter = ScriptedAdapter([_priced(call_tool("noop"), 0.01), _priced(reply("done"), 0.01)])
    report = _desk(adapter, max_cost_usd=0.05).run(Worker(name="w", tools=[noop]), "go")
    assert (report.status, report.content) == ("completed", "done")


def test_workforce_members_share_the_runs_budget() -> None:
    adapter = ScriptedAdapter(
        [
            _priced(structured({"worker": "doer"}), 0.04),  # the manager's choice
            _priced(call_tool("noop"), 0.02),  # the member: now over the limit
            _priced(reply("never"), 0.01),
        ]
    )
    team = Workforce([Worker(name="doer", tools=[noop])], name="team")
    report = _desk(adapter, max_cost_usd=0.05).run(team, "go")
    assert report.status == "failed"
    assert any("budget exceeded" in error for error in report.errors)
    assert len(adapter.calls) == 2


def _child_desk(parent_turns: list[Turn], child_cost: float, **kwargs: Any) -> tuple[Desk, Any]:
    adapter = ScriptedAdapter(parent_turns)
    desk = _desk(adapter, **kwargs)
    child_adapter = ScriptedAdapter([_priced(reply("child done"), child_cost)])

    @tool
    async def delegate() -> str:
        """Runs a child worker on another model."""
        child = Worker(name="child", model="scripted/child")
        desk_for_child = desk  # the same desk: the child run nests inside this one
        saved = desk_for_child._adapter
        desk_for_child._adapter = child_adapter
        try:
            report = await desk_for_child.arun(child, "sub task")
        finally:
            desk_for_child._adapter = saved
        return f"{report.status}: {report.content}"

    return desk, delegate


def test_child_runs_charge_the_parents_budget() -> None:
    turns = [_priced(call_tool("delegate"), 0.02), _priced(reply("never"), 0.01)]
    desk, delegate = _child_desk(turns, child_cost=0.04, max_cost_usd=0.05)
    report = desk.run(Worker(name="boss", tools=[delegate]), "go")
    assert report.status == "failed"
    assert "spent $0.060000" in report.errors[0]


def test_metrics_total_cost_and_tokens_per_model_including_child_runs() -> None:
    turns = [_priced(call_tool("delegate"), 0.02), _priced(reply("all done"), 0.01)]
    desk, delegate = _child_desk(turns, child_cost=0.04)
    report = desk.run(Worker(name="boss", tools=[delegate]), "go")
    assert report.status == "completed", report.errors
    by_model = report.metrics["by_model"]
    assert set(by_model) == {"scripted/m", "scripted/child"}
    assert by_model["scripted/m"]["llm_calls"] == 2
    assert by_model["scripted/m"]["cost"] == pytest.approx(0.03)
    assert by_model["scripted/child"]["llm_calls"] == 1
    assert by_model["scripted/child"]["cost"] == pytest.approx(0.04)
    assert by_model["scripted/child"]["total_tokens"] > 0
    assert report.metrics["cost"] == pytest.approx(0.07)
    tokens = sum(m["total_tokens"] for m in by_model.values())
    assert report.metrics["total_tokens"] == tokens


def test_workforce_metrics_total_per_model() -> None:
    adapter = ScriptedAdapter([_priced(structured({"worker": "doer"}), 0.01), reply("done")])
    manager = Worker(name="boss", model="scripted/big")
    team = Workforce([Worker(name="doer", model="scripted/small")], manager=manager)
    report = _desk(adapter).run(team, "go")
    assert report.status == "completed", report.errors
    by_model = report.metrics["by_model"]
    assert set(by_model) == {"scripted/big", "scripted/small"}
    assert by_model["scripted/big"]["cost"] == pytest.approx(0.01)
    assert by_model["scripted/small"]["llm_calls"] == 1


@pytest.mark.parametrize("bad", [0, -1.0])
def test_limits_must_be_positive(bad: float) -> None:
    with pytest.raises(ValueError, match="max_cost_usd"):
        Desk(model="m", max_cost_usd=bad)
    with pytest.raises(ValidationError):
        Job(input="x", max_cost_usd=bad)
