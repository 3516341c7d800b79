"""Any context key is safe: it reaches the handlers' state and never clashes with the
executor's or the template manager's own argument names."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.runnables import RunnableConfig
from react_helpers import MakeExecutor, system_text, xml

from deskwork.graph.react import TerminalActionResult


@pytest.mark.parametrize(
    "key",
    [
        "agent_name",
        "self",
        "user_input",
        "context",
        "config",
        "request_id",
        "cancel_event",
        "kwargs",
        "slot_name",
        "bad key",
        "",
        1,
        ("a", "tuple"),
    ],
)
async def test_context_key_reaches_the_handler(make_executor: MakeExecutor, key: Any) -> None:
    seen: dict[Any, Any] = {}

    async def decide(
        params: dict[str, Any], state: dict[str, Any], config: RunnableConfig | None = None
    ) -> tuple[str, dict[str, Any]]:
        seen.update(state)
        raise TerminalActionResult({"next_agent": "billing"})

    executor, _ = make_executor([xml("decide", next_agent="billing")], handlers={"decide": decide})
    result = await executor.execute("hi", {key: "value"})
    assert result["next_agent"] == "billing"
    assert seen[key] == "value"


async def test_agent_name_in_context_fills_the_prompt_placeholder(
    make_executor: MakeExecutor,
) -> None:
    executor, llm = make_executor([xml("decide", next_agent="billing")])
    await executor.execute("hi", {"agent_name": "Router", 7: "ignored by the prompt"})
    assert system_text(llm, 0).startswith("You are Router.")
