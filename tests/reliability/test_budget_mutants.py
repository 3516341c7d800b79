"""Behaviour of ``deskwork.runtime._budget`` that surviving mutants showed was unpinned: the
estimate of a call from the price table, and where exactly a budget stops a call."""

from __future__ import annotations

import json
import math

import pytest

from deskwork.runtime._budget import Budget, BudgetExceededError, estimate_call_cost

pytestmark = pytest.mark.reliability

MESSAGES = [{"role": "user", "content": "How many tokens is this prompt?"}]
IN, OUT = 1.5e-07, 6e-07  # gpt-4o-mini in LiteLLM's price table


def test_a_call_is_estimated_as_its_prompt_plus_max_tokens_of_output() -> None:
    prompt_tokens = math.ceil(len(json.dumps(MESSAGES)) / 4)
    assert estimate_call_cost("gpt-4o-mini", MESSAGES, 1000) == pytest.approx(
        IN * prompt_tokens + OUT * 1000
    )
    assert estimate_call_cost("openai/gpt-4o-mini", MESSAGES, None) == pytest.approx(
        IN * prompt_tokens
    )
    assert estimate_call_cost("no-such/model-x", MESSAGES, 1000) == 0.0


def test_a_budget_stops_a_call_that_would_pass_its_limit_and_no_other() -> None:
    budget = Budget(1.0)
    assert budget.spent == 0.0
    budget.check("m", 1.0)  # reaching the limit exactly is allowed
    budget.charge(0.25)
    budget.check("m", 0.75)
    with pytest.raises(BudgetExceededError) as caught:
        budget.check("m", 0.76)
    assert str(caught.value) == (
        "budget exceeded: spent $0.250000 of max_cost_usd $1.000000;"
        " the next call to 'm' would cost about $0.760000"
    )
    budget.charge(0.75)
    with pytest.raises(BudgetExceededError):
        budget.check("m", 0.0)  # nothing is left, even for a free call


def test_a_child_without_a_limit_is_stopped_by_its_parent() -> None:
    parent = Budget(1.0, spent=0.9)
    child = Budget(None, parent=parent)
    with pytest.raises(BudgetExceededError, match=r"max_cost_usd \$1\.000000"):
        child.check("m", 0.2)
    child.charge(0.05)
    assert (child.spent, parent.spent) == (pytest.approx(0.05), pytest.approx(0.95))


def test_a_model_whose_input_is_free_is_charged_for_its_output_only(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    prices = {"input_cost_per_token": 0.0, "output_cost_per_token": OUT}
    monkeypatch.setattr("deskwork.adapters.cost.get_model_pricing", lambda model: prices)
    assert estimate_call_cost("local/free-prompt", MESSAGES, 10) == pytest.approx(OUT * 10)
