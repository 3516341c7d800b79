"""Opt-in structured output: the cached capability probe and the fallback to XML."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.language_models import LanguageModelInput
from langchain_core.messages import AIMessage
from langchain_core.runnables import Runnable, RunnableLambda
from pydantic import BaseModel
from react_helpers import MakeExecutor, human_text, system_text, xml

from deskwork.graph.core.exceptions import ReactConsecutiveErrorsError
from deskwork.graph.react import ReactStructuredResponse
from deskwork.graph.testing import MockLLM


class ProbeCountingLLM(MockLLM):
    """Counts ``with_structured_output`` calls (the capability probe)."""

    probes: int = 0

    def with_structured_output(
        self, schema: dict[str, Any] | type, *, include_raw: bool = False, **kwargs: Any
    ) -> Runnable[LanguageModelInput, dict[str, Any] | BaseModel]:
        self.probes += 1
        return super().with_structured_output(schema, include_raw=include_raw, **kwargs)


def step(action: str, **params: Any) -> dict[str, Any]:
    return {"thought": f"about {action}", "action": action, "action_params": params}


async def test_structured_replies_drive_the_loop(make_executor: MakeExecutor) -> None:
    llm = ProbeCountingLLM(
        structured_responses=[
            step("request_slot", slot="routing_rules"),
            ReactStructuredResponse(
                thought="t", action="decide", action_params={"next_agent": "b"}
            ),
        ]
    )
    executor, _ = make_executor(llm=llm, use_structured_output=True)
    assert executor.structured_output_supported is None
    result = await executor.execute("hi", {})
    assert result["next_agent"] == "b"
    assert "routing_rules" in result["_loaded_slot_contents"]
    assert executor.structured_output_supported is True
    assert llm.call_count == 2
    assert "action_params" in system_text(llm, 0)  # the structured reply format
    assert "<action type=" not in system_text(llm, 0)


async def test_probe_is_cached_across_passes_and_calls(make_executor: MakeExecutor) -> None:
    llm = ProbeCountingLLM(
        structured_responses=[step("note", text="a"), step("decide", next_agent="x")] * 2
    )
    executor, _ = make_executor(llm=llm, use_structured_output=True)
    await executor.execute("one", {})
    await executor.execute("two", {})
    assert llm.call_count == 4
    assert llm.probes == 1


async def test_unsupported_model_falls_back_to_xml(make_executor: MakeExecutor) -> None:
    llm = ProbeCountingLLM(
        responses=[xml("note", text="a"), xml("decide", next_agent="x")]
    )  # no structured_responses: with_structured_output raises NotImplementedError
    executor, _ = make_executor(llm=llm, use_structured_output=True)
    result = await executor.execute("hi", {})
    assert result["next_agent"] == "x"
    assert executor.structured_output_supported is False
    assert llm.probes == 1  # not probed again on pass 2
    assert '<action type="ACTION_NAME">' in system_text(llm, 0)
    assert "output=xml (fallback)" in repr(executor)


async def test_model_without_the_method_falls_back(make_executor: MakeExecutor) -> None:
    class NoStructured(MockLLM):
        def __getattribute__(self, name: str) -> Any:
            if name == "with_structured_output":
                raise AttributeError(name)
            return super().__getattribute__(name)

    executor, _ = make_executor(
        llm=NoStructured(responses=[xml("decide", next_agent="x")]), use_structured_output=True
    )
    assert (await executor.execute("hi", {}))["next_agent"] == "x"
    assert executor.structured_output_supported is False


async def test_not_implemented_at_call_time_falls_back_in_the_same_pass(
    make_executor: MakeExecutor,
) -> None:
    llm = ProbeCountingLLM(
        structured_responses=[NotImplementedError("tool calling unsupported")],
        responses=[xml("decide", next_agent="x")],
    )
    executor, _ = make_executor(llm=llm, use_structured_output=True)
    result = await executor.execute("hi", {})
    assert result["next_agent"] == "x"
    assert executor.structured_output_supported is False
    assert llm.call_count == 2  # the failed structured call, then XML in the same pass
    assert "This is pass 1 of" in human_text(llm, 1)


async def test_invalid_structured_reply_is_an_observation(make_executor: MakeExecutor) -> None:
    llm = MockLLM(
        structured_responses=[{"thought": "no action here"}, step("decide", next_agent="x")]
    )
    executor, _ = make_executor(llm=llm, use_structured_output=True)
    result = await executor.execute("hi", {})
    assert result["next_agent"] == "x"
    assert executor.structured_output_supported is True  # a bad reply is not a capability loss
    observation = human_text(llm, 1)
    assert "Error: the structured reply" in observation
    assert "action" in observation
    assert "Field required" in observation


async def test_unknown_structured_action_counts_toward_the_cap(
    make_executor: MakeExecutor,
) -> None:
    llm = MockLLM(structured_responses=[step("nuke")] * 3)
    executor, _ = make_executor(llm=llm, use_structured_output=True, max_consecutive_errors=3)
    with pytest.raises(ReactConsecutiveErrorsError, match="action 'nuke' is unknown"):
        await executor.execute("hi", {})
    assert llm.call_count == 3


async def test_include_raw_replies_report_token_usage(make_executor: MakeExecutor) -> None:
    class RawLLM(MockLLM):
        def with_structured_output(
            self, schema: dict[str, Any] | type, *, include_raw: bool = False, **kwargs: Any
        ) -> Runnable[LanguageModelInput, dict[str, Any] | BaseModel]:
            assert include_raw  # the executor asks for the raw message (token usage)
            raw = AIMessage(
                content="",
                usage_metadata={"input_tokens": 7, "output_tokens": 3, "total_tokens": 10},
            )
            parsed = ReactStructuredResponse(
                thought="t", action="decide", action_params={"next_agent": "x"}
            )
            return RunnableLambda(lambda _: {"raw": raw, "parsed": parsed, "parsing_error": None})

    executor, _ = make_executor(llm=RawLLM(), use_structured_output=True)
    result = await executor.execute("hi", {})
    assert result["_token_usage"] == {"input_tokens": 7, "output_tokens": 3, "total_tokens": 10}


async def test_structured_output_is_off_by_default(make_executor: MakeExecutor) -> None:
    llm = ProbeCountingLLM(responses=[xml("decide", next_agent="x")], structured_responses=[])
    executor, _ = make_executor(llm=llm)
    await executor.execute("hi", {})
    assert llm.probes == 0
    assert executor.structured_output_supported is None


async def test_model_refusing_include_raw_is_still_probed(make_executor: MakeExecutor) -> None:
    class NoRawLLM(MockLLM):
        def with_structured_output(
            self, schema: dict[str, Any] | type, **kwargs: Any
        ) -> Runnable[LanguageModelInput, dict[str, Any] | BaseModel]:
            if kwargs:
                raise TypeError(f"unexpected {sorted(kwargs)}")
            return super().with_structured_output(schema)

    llm = NoRawLLM(structured_responses=[step("decide", next_agent="x")])
    executor, _ = make_executor(llm=llm, use_structured_output=True)
    assert (await executor.execute("hi", {}))["next_agent"] == "x"
    assert executor.structured_output_supported is True
