"""deskwork.graph.testing: MockLLM's scripting modes and make_test_state."""

from __future__ import annotations

import importlib

import pytest
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, HumanMessage
from pydantic import BaseModel, ValidationError

from deskwork.graph.testing import MockLLM, make_test_state


class Route(BaseModel):
    next_agent: str


class TestMockLLMResponses:
    async def test_is_a_chat_model_answering_in_fifo_order(self) -> None:
        llm = MockLLM(responses=["first", "second"])
        assert isinstance(llm, BaseChatModel)
        first = await llm.ainvoke([HumanMessage(content="a")])
        second = llm.invoke("b")
        assert isinstance(first, AIMessage)
        assert (first.content, second.content) == ("first", "second")
        assert llm.call_count == 2
        assert [m[0].content for m in llm.calls] == ["a", "b"]

    async def test_raises_index_error_when_exhausted(self) -> None:
        llm = MockLLM(responses=["only"])
        await llm.ainvoke("x")
        with pytest.raises(IndexError, match="no more scripted responses"):
            await llm.ainvoke("y")
        with pytest.raises(IndexError):
            MockLLM().invoke("z")

    async def test_scripted_exception_fails_only_that_call(self) -> None:
        llm = MockLLM(responses=[TimeoutError("flaky"), "recovered"])
        with pytest.raises(TimeoutError, match="flaky"):
            await llm.ainvoke("x")
        assert (await llm.ainvoke("x")).content == "recovered"

    async def test_scripted_ai_message_is_returned_as_is(self) -> None:
        message = AIMessage(content="", tool_calls=[{"name": "t", "args": {}, "id": "c1"}])
        reply = await MockLLM(responses=[message]).ainvoke("x")
        assert isinstance(reply, AIMessage)
        assert reply.tool_calls[0]["name"] == "t"

    @pytest.mark.parametrize("error", [ValueError, ValueError("boom")])
    async def test_raise_on_call_class_or_instance(self, error: object) -> None:
        llm = MockLLM(responses=["never"], raise_on_call=error)  # type: ignore[arg-type]
        with pytest.raises(ValueError):
            await llm.ainvoke("x")
        with pytest.raises(ValueError):
            [c async for c in llm.astream("x")]
        assert llm.call_count == 2

    async def test_usage_tokens_become_usage_metadata(self) -> None:
        llm = MockLLM(responses=["a"], usage_tokens={"input_tokens": 10, "output_tokens": 5})
        reply = await llm.ainvoke("x")
        assert isinstance(reply, AIMessage)
        assert reply.usage_metadata == {"input_tokens": 10, "output_tokens": 5, "total_tokens": 15}

    def test_unknown_option_is_rejected(self) -> None:
        with pytest.raises(ValidationError):
            MockLLM(respones=["typo"])  # type: ignore[call-arg]

    def test_script_lists_are_left_untouched(self) -> None:
        script = ["a"]
        llm = MockLLM(responses=script)
        llm.invoke("x")
        assert script == ["a"]
        assert llm.responses == ["a"]


class TestMockLLMStreaming:
    async def test_stream_chunks_per_call(self) -> None:
        llm = MockLLM(stream_chunks=[["Hel", "lo"], ["second"]])
        first = [c.content async for c in llm.astream("x") if c.content]
        second = [c.content for c in llm.stream("y") if c.content]
        assert first == ["Hel", "lo"]
        assert second == ["second"]
        with pytest.raises(IndexError, match="stream_chunks"):
            [c async for c in llm.astream("z")]

    async def test_without_chunks_streams_the_next_response_whole(self) -> None:
        llm = MockLLM(responses=["whole reply"])
        assert [c.content async for c in llm.astream("x") if c.content] == ["whole reply"]

    async def test_stream_carries_usage(self) -> None:
        llm = MockLLM(
            stream_chunks=[["a", "b"]], usage_tokens={"input_tokens": 3, "output_tokens": 2}
        )
        chunks = [c async for c in llm.astream("x")]
        total = chunks[0]
        for chunk in chunks[1:]:
            total = total + chunk
        assert total.content == "ab"
        assert total.usage_metadata is not None
        assert total.usage_metadata["total_tokens"] == 5


class TestMockLLMStructured:
    async def test_structured_responses_fifo(self) -> None:
        llm = MockLLM(structured_responses=[Route(next_agent="a"), {"next_agent": "b"}])
        runnable = llm.with_structured_output(Route)
        first = await runnable.ainvoke("x")
        second = runnable.invoke("y")
        assert first == Route(next_agent="a")
        assert second == Route(next_agent="b")
        assert llm.call_count == 2
        with pytest.raises(IndexError, match="structured_responses"):
            await runnable.ainvoke("z")

    def test_without_structured_responses_it_is_unsupported(self) -> None:
        with pytest.raises(NotImplementedError):
            MockLLM(responses=["a"]).with_structured_output(Route)

    async def test_include_raw_returns_raw_parsed_and_parsing_error(self) -> None:
        llm = MockLLM(
            structured_responses=[{"next_agent": "a"}, {"wrong": 1}],
            usage_tokens={"input_tokens": 4, "output_tokens": 1},
        )
        runnable = llm.with_structured_output(Route, include_raw=True)
        ok = await runnable.ainvoke("x")
        assert isinstance(ok, dict)
        assert ok["parsed"] == Route(next_agent="a")
        assert ok["parsing_error"] is None
        assert isinstance(ok["raw"], AIMessage)
        assert ok["raw"].content == '{"next_agent": "a"}'
        assert ok["raw"].usage_metadata == {
            "input_tokens": 4,
            "output_tokens": 1,
            "total_tokens": 5,
        }
        bad = await runnable.ainvoke("y")
        assert isinstance(bad, dict)
        assert bad["parsed"] is None
        assert isinstance(bad["parsing_error"], ValidationError)

    async def test_invalid_dict_raises_without_include_raw(self) -> None:
        llm = MockLLM(structured_responses=[{"wrong": 1}])
        with pytest.raises(ValidationError):
            await llm.with_structured_output(Route).ainvoke("x")

    async def test_raise_on_call_applies_to_structured_calls(self) -> None:
        llm = MockLLM(structured_responses=[{"next_agent": "a"}], raise_on_call=RuntimeError)
        with pytest.raises(RuntimeError):
            await llm.with_structured_output(Route).ainvoke("x")


class TestMakeTestState:
    def test_defaults(self) -> None:
        state = make_test_state("Hello")
        assert state["session_id"] == "test-session"
        assert state["user_id"] == "test-user"
        assert state["current_agent"] == "supervisor"
        assert state["messages"][0].content == "Hello"
        assert state["context_slots"] == {}
        assert state["request_id"]

    def test_overrides(self) -> None:
        slots = {"count": 1}
        state = make_test_state(
            "hi", session_id="s1", user_id="alice", context_slots=slots, current_agent="greeter"
        )
        assert (state["session_id"], state["user_id"], state["current_agent"]) == (
            "s1",
            "alice",
            "greeter",
        )
        assert state["context_slots"] == {"count": 1}
        assert state["context_slots"] is not slots


def test_in_memory_session_manager_is_re_exported_lazily() -> None:
    testing = importlib.import_module("deskwork.graph.testing")
    from deskwork.graph.session.in_memory import InMemorySessionManager

    assert testing.InMemorySessionManager is InMemorySessionManager
    with pytest.raises(AttributeError):
        _ = testing.NoSuchThing
