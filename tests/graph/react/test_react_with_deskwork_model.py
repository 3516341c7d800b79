"""The ReAct loop over deskwork's own model port (DeskworkChatModel + ScriptedAdapter).

Unlike MockLLM, this exercises LangChain's real ``with_structured_output`` machinery
(tool binding, tool-call parsing, ``include_raw``) and real usage metadata.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from react_helpers import decide, note, xml

from deskwork.graph import (
    FileSystemKnowledgeLoader,
    ReactExecutor,
    ReactTemplateManager,
    RetryConfig,
    SemaphoreRateLimiter,
    TimeoutConfig,
)
from deskwork.graph.core.exceptions import ReactConsecutiveErrorsError
from deskwork.graph.llm import DeskworkChatModel
from deskwork.testing.scripted import ScriptedAdapter, Turn, call_tool, reply

SCHEMA_TOOL = "ReactStructuredResponse"


def model(*turns: Turn | str) -> DeskworkChatModel:
    return DeskworkChatModel(adapter=ScriptedAdapter(list(turns)), model="scripted")


async def test_documented_example_runs(kb: Path) -> None:
    """The ReactExecutor example of the user guide, offline."""
    loader = FileSystemKnowledgeLoader(base_dir=kb)
    template_manager = ReactTemplateManager(
        agent_name="supervisor", base_dir=kb, loader=loader, max_loaded_tokens=8192
    )
    limiter = SemaphoreRateLimiter(max_concurrency=1)
    llm = model(
        reply(xml("request_slot", slot="routing_rules")),
        reply(xml("decide", next_agent="billing")),
    )
    executor = ReactExecutor(
        agent_name="supervisor",
        llm=llm,
        template_manager=template_manager,
        action_handlers={"note": note, "decide": decide},
        max_passes=5,
        retry_config=RetryConfig(max_attempts=3),
        timeout_config=TimeoutConfig(llm_call_seconds=30.0, total_request_seconds=120.0),
        max_history_tokens=2000,
        rate_limiter=limiter,
        use_structured_output=False,
    )
    result = await executor.execute(user_input="Hello", context={"key": "value"}, config={})
    assert result["next_agent"] == "billing"
    assert "routing_rules" in result["_loaded_slot_contents"]
    assert result["_token_usage"]["total_tokens"] > 0
    assert executor.structured_output_supported is None


async def test_structured_output_through_tool_calls(kb: Path) -> None:
    llm = model(
        call_tool(
            SCHEMA_TOOL,
            thought="rules first",
            action="request_slot",
            action_params={"slot": "escalation_policy"},
        ),
        # Malformed tool arguments: an observation, not a crash.
        Turn(tool_calls=[(SCHEMA_TOOL, '{"thought": "oops", "action": ')]),
        # The model answers in XML instead of the schema: accepted.
        reply(xml("note", text="xml is fine too")),
        call_tool(
            SCHEMA_TOOL, thought="done", action="decide", action_params={"next_agent": "ops"}
        ),
    )
    tm = ReactTemplateManager("supervisor", kb)
    executor = ReactExecutor(
        "supervisor", llm, tm, {"note": note, "decide": decide}, use_structured_output=True
    )
    result = await executor.execute("P1 outage", {})
    assert result["next_agent"] == "ops"
    assert list(result["_loaded_slot_contents"]) == ["routing_rules", "escalation_policy"]
    assert executor.structured_output_supported is True
    assert result["_token_usage"]["total_tokens"] > 0


async def test_prose_replies_hit_the_error_cap(kb: Path) -> None:
    llm = model(reply("I think billing."), reply("Billing!"))
    tm = ReactTemplateManager("supervisor", kb)
    executor = ReactExecutor("supervisor", llm, tm, {"decide": decide}, max_consecutive_errors=2)
    with pytest.raises(ReactConsecutiveErrorsError, match="2 invalid ReAct passes"):
        await executor.execute("hi", {})


async def test_concurrent_requests_share_one_executor(kb: Path) -> None:
    def answer(messages: list[dict[str, Any]], tools: Any) -> str:
        user = str(messages[-1]["content"]).split("User input:\n", 1)[1].split("\n", 1)[0]
        return xml("decide", next_agent=f"agent-{user}")

    llm = DeskworkChatModel(adapter=ScriptedAdapter([answer] * 5), model="scripted")
    executor = ReactExecutor(
        "supervisor", llm, ReactTemplateManager("supervisor", kb), {"decide": decide}
    )
    results = await asyncio.gather(*(executor.execute(str(i), {}) for i in range(5)))
    assert [r["next_agent"] for r in results] == [f"agent-{i}" for i in range(5)]
