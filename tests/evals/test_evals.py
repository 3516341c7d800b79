"""deskwork.evals: cases run as stored runs, built-in scorers, the LLM judge, aggregates."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from pydantic import BaseModel

from deskwork import Desk, Job, Worker
from deskwork.core.event import EventType
from deskwork.evals import (
    EvalCase,
    Score,
    aevaluate,
    contains,
    evaluate,
    exact,
    json_schema,
    llm_judge,
    regex,
    tool_called,
)
from deskwork.exceptions import ConfigurationError
from deskwork.store import InMemoryRunStore
from deskwork.testing import ScriptedAdapter, Turn, call_tool, reply, structured
from deskwork.tools import tool
from gatekit import GatedAdapter


def _last_user(messages: list[dict[str, Any]]) -> str:
    return next(str(m["content"]) for m in reversed(messages) if m["role"] == "user")


def _echo_upper(messages: list[dict[str, Any]], tools: Any) -> Turn:
    """A model that answers each question by shouting it back (order-independent)."""
    return reply(_last_user(messages).upper())


def _desk(adapter: ScriptedAdapter) -> Desk:
    return Desk(model="scripted/m", adapter=adapter, run_store=InMemoryRunStore())


def test_each_case_is_a_stored_run_and_scored_by_default_exact() -> None:
    desk = _desk(ScriptedAdapter(default=_echo_upper))
    cases = [
        EvalCase(input="hello", expected="HELLO", name="greets"),
        EvalCase(input="bye", expected="see you"),
    ]
    result = evaluate(Worker(name="shouter"), cases, desk=desk)

    ok, bad = result.cases
    assert (ok.name, ok.passed, ok.output, ok.status) == ("greets", True, "HELLO", "completed")
    assert bad.name == "case-2" and not bad.passed
    assert bad.scores[0].name == "exact" and "'see you'" in (bad.scores[0].reason or "")
    assert (result.total, result.passed, result.pass_rate) == (2, 1, 0.5)
    assert result.mean_scores() == {"exact": 0.5}
    for case in result.cases:  # the run id opens the stored run and its events
        assert case.run_id is not None
        record = desk.run_store.get_run(case.run_id)
        assert record is not None and record.status == "completed"
        types = [e.type for e in desk.run_store.get_events(case.run_id)]
        assert types[0] == EventType.RUN_STARTED and types[-1] == EventType.RUN_COMPLETED
    table = result.table()
    assert "greets" in table and "PASS" in table and "FAIL" in table
    assert "1/2 passed (50%)" in table and ok.run_id is not None and ok.run_id in table
    assert "✗ case-2: exact: expected 'see you'" in table


def test_text_scorers() -> None:
    desk = _desk(ScriptedAdapter(default=_echo_upper))
    cases = [EvalCase(input="order 1234 shipped", expected="Order 1234")]
    scorers = [
        contains(),
        contains("shipped", ignore_case=False, name="contains:shipped"),
        regex(r"ORDER \d{4}"),
        regex(r"^\d+$", flags=re.M, name="digits only"),
        exact(ignore_case=True),
    ]
    result = evaluate(Worker(name="w"), cases, desk=desk, scorers=scorers)
    verdicts = [(s.name, s.passed) for s in result.cases[0].scores]
    assert verdicts == [
        ("contains", True),
        ("contains:shipped", False),  # case-sensitive: the model shouted
        ("regex", True),
        ("digits only", False),
        ("exact", False),  # the whole output differs, whatever the case
    ]
    assert not result.cases[0].passed
    with pytest.raises(re.error):
        regex("(unclosed")


class Invoice(BaseModel):
    number: str
    total: float


def test_structured_output_exact_data_and_json_schema() -> None:
    adapter = ScriptedAdapter(
        [structured({"number": "A-1", "total": 12.5}), reply('{"number": 7}')]
    )
    desk = _desk(adapter)
    schema = {
        "type": "object",
        "required": ["number", "total"],
        "properties": {"number": {"type": "string"}, "total": {"type": "number"}},
    }
    cases = [
        EvalCase(
            input=Job(input="invoice A-1", response_schema=Invoice),
            expected=Invoice(number="A-1", total=12.5),
            scorers=[exact(), json_schema(schema), json_schema(Invoice, name="invoice")],
        ),
        EvalCase(
            input="any invoice",
            scorers=[json_schema(schema), json_schema(Invoice, name="invoice")],
        ),
    ]
    result = evaluate(Worker(name="clerk"), cases, desk=desk)
    good, bad = result.cases
    assert good.output == {"number": "A-1", "total": 12.5}
    assert [s.passed for s in good.scores] == [True, True, True] and good.passed
    assert [s.passed for s in bad.scores] == [False, False]
    assert "'total' is a required property" in (bad.scores[0].reason or "")


def test_json_schema_rejects_a_broken_schema_and_non_json_output() -> None:
    with pytest.raises(Exception, match="is not valid under any of the given schemas"):
        json_schema({"type": "no-such-type"})
    desk = _desk(ScriptedAdapter([reply("not json at all")]))
    result = evaluate(Worker(name="w"), [EvalCase(input="x")], desk=desk,
                      scorers=[json_schema({"type": "object"})])  # fmt: skip
    assert "output is not JSON" in (result.cases[0].scores[0].reason or "")


@tool(requires_confirmation=True)
def restock(item: str, quantity: int) -> str:
    """Order more of an item."""
    return f"ordered {quantity} {item}"


@tool
def check_stock(item: str) -> int:
    """How many of an item are in stock."""
    return 3


def test_tool_called_and_a_case_that_expects_a_pause() -> None:
    adapter = ScriptedAdapter(
        [
            call_tool("check_stock", item="beans"),
            call_tool("restock", item="beans", quantity=20),
            call_tool("check_stock", item="milk"),
            reply("milk is fine"),
        ]
    )
    worker = Worker(name="stock", tools=[check_stock, restock])
    cases = [
        EvalCase(
            input="beans low?",
            status="paused",
            scorers=[
                tool_called("check_stock", arguments={"item": "beans"}, succeeded=True),
                tool_called("restock", arguments={"quantity": 20}),
            ],
        ),
        EvalCase(
            input="milk?",
            scorers=[
                tool_called("check_stock", times=2),
                tool_called("restock"),
                tool_called("check_stock", arguments={"item": "beans"}, name="beans checked"),
            ],
        ),
    ]
    result = evaluate(worker, cases, desk=_desk(adapter))
    paused, milk = result.cases
    assert paused.status == "paused" and paused.passed
    assert [s.passed for s in milk.scores] == [False, False, False]
    assert milk.scores[0].reason == "check_stock called 1x, wanted 2"
    assert [s.name for s in milk.scores] == ["tool_called:check_stock", "tool_called:restock",
                                            "beans checked"]  # fmt: skip


def test_failed_runs_broken_scorers_and_odd_answers_fail_only_their_case() -> None:
    adapter = ScriptedAdapter([reply("fine"), Turn(error=RuntimeError("provider down"))])
    desk = _desk(adapter)

    def boom(case: EvalCase, report: Any) -> bool:
        raise ValueError("bad scorer")

    def odd(case: EvalCase, report: Any) -> Any:
        return "yes"

    def half(case: EvalCase, report: Any) -> float:
        return 0.5

    result = evaluate(
        Worker(name="w"),
        [EvalCase(input="a", scorers=[boom, odd, half]), EvalCase(input="b", expected="x")],
        desk=desk,
    )
    scored, failed = result.cases
    boom_score, odd_score, half_score = scored.scores
    assert boom_score.reason == "scorer raised ValueError: bad scorer"
    assert odd_score.name == "odd" and "expected a Score" in (odd_score.reason or "")
    assert (half_score.value, half_score.passed) == (0.5, True)
    assert failed.status == "failed" and not failed.passed
    assert failed.errors[0] == "run ended failed, the case expects completed"
    assert any("provider down" in e for e in failed.errors)
    with pytest.raises(ConfigurationError):
        evaluate(Worker(name="w"), ["not a case"], desk=desk)  # type: ignore[list-item]
    with pytest.raises(ConfigurationError):
        evaluate(Worker(name="w"), [], desk=desk, concurrency=0)


async def test_concurrency_runs_cases_at_once_and_keeps_their_order() -> None:
    def answer(messages: list[dict[str, Any]], tools: Any) -> Turn:
        n = int(_last_user(messages)[1:])  # later cases answer first
        return Turn(content=_last_user(messages) + "!", latency=0.01 * (5 - n))

    # the five cases' model calls wait for one another: one after another, they would fail
    desk = _desk(GatedAdapter(5, default=answer))
    cases = [EvalCase(input=f"q{i}", expected=f"q{i}!") for i in range(5)]
    result = await aevaluate(Worker(name="w"), cases, desk=desk, concurrency=5)
    assert [c.output for c in result.cases] == [f"q{i}!" for i in range(5)]
    assert result.pass_rate == 1.0


def test_evaluate_refuses_to_run_inside_an_event_loop() -> None:
    import asyncio

    from deskwork.exceptions import EventLoopRunningError

    async def inside() -> None:
        evaluate(Worker(name="w"), [], desk=_desk(ScriptedAdapter()))

    with pytest.raises(EventLoopRunningError):
        asyncio.run(inside())


def _judge_reads(verdicts: dict[str, dict[str, Any]]) -> ScriptedAdapter:
    """A scripted judge that grades by what it was shown (so the prompt must carry it)."""

    def grade(messages: list[dict[str, Any]], tools: Any) -> Turn:
        shown = json.loads(_last_user(messages))
        assert shown["criteria"] == "answers politely"
        return structured(verdicts[shown["actual_output"]])

    return ScriptedAdapter(default=grade)


def test_llm_judge_through_any_adapter() -> None:
    judge_model = _judge_reads(
        {
            "THANK YOU": {"score": 0.9, "reason": "polite"},
            "GO AWAY": {"score": 0.1, "reason": "rude"},
        }
    )
    judge = llm_judge("answers politely", adapter=judge_model, threshold=0.7)
    desk = _desk(ScriptedAdapter(default=_echo_upper))
    cases = [EvalCase(input="thank you"), EvalCase(input="go away", metadata={"tone": "rude"})]
    result = evaluate(Worker(name="w"), cases, desk=desk, scorers=[judge])
    polite, rude = result.cases
    assert polite.scores == [Score(name="llm_judge", value=0.9, passed=True, reason="polite")]
    assert rude.scores == [Score(name="llm_judge", value=0.1, passed=False, reason="rude")]
    assert rude.metadata == {"tone": "rude"}
    assert result.mean_scores() == {"llm_judge": pytest.approx(0.5)}
    assert len(judge_model.calls) == 2  # the judge's runs are its own, not the eval desk's
    assert len(desk.run_store.list_runs()) == 2


def test_llm_judge_that_fails_scores_zero_with_the_reason() -> None:
    judge = llm_judge(
        "is correct", adapter=ScriptedAdapter(default=reply("I think it's fine")), name="judge"
    )
    desk = _desk(ScriptedAdapter(default=_echo_upper))
    result = evaluate(Worker(name="w"), [EvalCase(input="x")], desk=desk, scorers=[judge])
    score = result.cases[0].scores[0]
    assert (score.name, score.value, score.passed) == ("judge", 0.0, False)
    assert (score.reason or "").startswith("judge failed:")
    with pytest.raises(ConfigurationError):
        llm_judge("criteria")
    with pytest.raises(ConfigurationError):
        llm_judge(" ", adapter=ScriptedAdapter())
    with pytest.raises(ConfigurationError):
        llm_judge("c", adapter=ScriptedAdapter(), threshold=2)


def test_tool_called_sees_the_calls_of_flow_steps() -> None:
    from deskwork.workflow import Parallel, Step

    def by_worker(messages: list[dict[str, Any]], tools: Any) -> Turn:
        system = str(messages[0]["content"])
        done = any(m["role"] == "tool" for m in messages)
        if "stock keeper" in system and not done:
            return call_tool("check_stock", item="beans")
        return reply("3 in stock" if "stock keeper" in system else "noted")

    desk = _desk(ScriptedAdapter(default=by_worker))
    keeper = Worker(name="keeper", tools=[check_stock], instructions="You are the stock keeper.")
    scribe = Worker(name="scribe", instructions="You take notes.")
    flow = desk.flow([Parallel(Step(keeper), Step(scribe))])
    result = evaluate(
        flow,
        [
            EvalCase(
                input="beans?",
                scorers=[tool_called("check_stock", succeeded=True), tool_called("restock")],
            )
        ],
        desk=desk,
    )
    called, not_called = result.cases[0].scores
    assert called.passed and not not_called.passed
    assert result.cases[0].output == [  # a multi-step flow's output is its steps' data
        {"step": "keeper", "content": "3 in stock", "data": None},
        {"step": "scribe", "content": "noted", "data": None},
    ]
