"""Spending limits: ``Desk(max_cost_usd=...)`` and ``Job(max_cost_usd=...)``.

One :class:`Budget` serves a whole run: the members of a workforce share the run's config, and
runs started inside it (subworkers, a tool calling ``desk.arun``) charge their parent's budget
too. Before each model call the worker checks the budget against an estimate from the price
table; after each call it charges the actual cost.
"""

from __future__ import annotations

import math
import threading
from contextvars import ContextVar
from typing import Any

from deskwork.exceptions import DeskworkError

__all__ = ["Budget", "BudgetExceededError", "current_budget", "estimate_call_cost"]


class BudgetExceededError(DeskworkError):
    """The next model call would exceed the run's spending limit."""


class Budget:
    """A spending limit in USD and what was spent against it (thread-safe)."""

    def __init__(
        self, limit: float | None, *, spent: float = 0.0, parent: Budget | None = None
    ) -> None:
        self.limit = limit
        self.spent = spent
        self.parent = parent
        self._lock = threading.Lock()

    @classmethod
    def open(
        cls, *limits: float | None, parent: Budget | None = None, spent: float = 0.0
    ) -> Budget | None:
        """The budget of a new run: the tightest of ``limits``, inside ``parent`` (if any)."""
        given = [limit for limit in limits if limit is not None]
        if not given:
            return parent  # a child run without its own limit charges its parent's budget
        return cls(min(given), spent=spent, parent=parent)

    def _chain(self) -> list[Budget]:
        chain: list[Budget] = []
        budget: Budget | None = self
        while budget is not None:
            chain.append(budget)
            budget = budget.parent
        return chain

    def check(self, model: str, estimate: float) -> None:
        """Raise before a call to ``model`` estimated at ``estimate`` USD that would exceed
        this budget (or an enclosing one)."""
        for budget in self._chain():
            if budget.limit is None:
                continue
            with budget._lock:
                spent = budget.spent
            if spent >= budget.limit or spent + estimate > budget.limit:
                raise BudgetExceededError(
                    f"budget exceeded: spent ${spent:.6f} of max_cost_usd ${budget.limit:.6f};"
                    f" the next call to {model!r} would cost about ${estimate:.6f}"
                )

    def charge(self, cost: float) -> None:
        """Count the actual cost of a call (here and in every enclosing budget)."""
        for budget in self._chain():
            with budget._lock:
                budget.spent += cost


current_budget: ContextVar[Budget | None] = ContextVar("deskwork_budget", default=None)
"""The budget of the run being driven in this context (child runs charge it)."""

CHARS_PER_TOKEN = 4


def estimate_call_cost(model: str, messages: list[dict[str, Any]], max_tokens: int | None) -> float:
    """USD estimate of one call from the price table: the prompt (about four characters a
    token) plus ``max_tokens`` of output; ``0.0`` for a model without a known price."""
    from deskwork.adapters.cost import get_model_pricing

    try:
        pricing = get_model_pricing(model)
    except Exception:  # LiteLLM not installed: no price table
        pricing = None
    if not pricing:
        return 0.0
    import json  # with the first priced estimate, not with deskwork

    prompt_tokens = math.ceil(len(json.dumps(messages, default=str)) / CHARS_PER_TOKEN)
    prompt = float(pricing.get("input_cost_per_token") or 0.0) * prompt_tokens
    completion = float(pricing.get("output_cost_per_token") or 0.0) * (max_tokens or 0)
    return prompt + completion
