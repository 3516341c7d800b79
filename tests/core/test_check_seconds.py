"""``check_seconds``: one rule for every limit in seconds a user gives (a graph LLM call's
timeout, a ReAct request's, a durable queue's): ``None`` or a finite number above 0."""

from __future__ import annotations

import math
from typing import Any

import pytest

from deskwork import ConfigurationError
from deskwork.utils import check_seconds


@pytest.mark.parametrize("value", [None, 0.5, 30, 1e9])
def test_none_or_a_finite_number_above_zero_is_kept_as_given(value: Any) -> None:
    kept = check_seconds(value, "timeout")
    assert kept == value and type(kept) is type(value)


@pytest.mark.parametrize("value", [0, -1, math.nan, math.inf, True, "5", [1]])
def test_anything_else_is_refused_naming_the_limit(value: Any) -> None:
    with pytest.raises(ConfigurationError) as raised:
        check_seconds(value, "agent_timeout")
    assert str(raised.value) == (
        f"agent_timeout must be a number of seconds above 0, or None for no limit, got {value!r}"
    )
    assert isinstance(raised.value, ValueError)  # as the checks it replaces raised


@pytest.mark.parametrize("value", [math.inf, True, "5"])
async def test_a_graph_llm_call_refuses_such_a_timeout_before_calling(value: Any) -> None:
    pytest.importorskip("langchain_core")
    from deskwork.graph.core.llm_utils import ainvoke_with_timeout

    class Model:
        calls = 0

        async def ainvoke(self, *_: Any, **__: Any) -> str:
            Model.calls += 1
            return "answer"

    with pytest.raises(ConfigurationError, match="timeout_seconds must be a number"):
        await ainvoke_with_timeout(Model(), [], timeout_seconds=value)  # type: ignore[arg-type]
    assert Model.calls == 0  # True ran the call with a 1 s limit; "5" raised a TypeError
