"""OrchestratorState reducers, create_initial_state, AgentResponse and token counting."""

from __future__ import annotations

import dataclasses
import uuid
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.graph import END, START, StateGraph

from deskwork.graph.context.slots import TIER_ORDER, SlotTier
from deskwork.graph.core.state import OrchestratorState, _merge_dicts, create_initial_state
from deskwork.graph.core.token_counting import CharDivisionTokenCounter, TokenCounter
from deskwork.graph.core.types import AgentResponse


class TestMergeDicts:
    def test_right_wins_and_inputs_are_not_mutated(self) -> None:
        left = {"a": 1, "b": 2}
        right = {"b": 3, "c": 4}
        merged = _merge_dicts(left, right)
        assert merged == {"a": 1, "b": 3, "c": 4}
        assert left == {"a": 1, "b": 2}
        assert right == {"b": 3, "c": 4}

    @pytest.mark.parametrize(
        ("left", "right", "expected"),
        [(None, None, {}), ({"a": 1}, None, {"a": 1}), (None, {"a": 1}, {"a": 1}), ({}, {}, {})],
    )
    def test_missing_sides(
        self, left: dict[str, Any] | None, right: dict[str, Any] | None, expected: dict[str, Any]
    ) -> None:
        merged = _merge_dicts(left, right)
        assert merged == expected
        assert merged is not left
        assert merged is not right

    @given(
        st.dictionaries(st.text(max_size=3), st.integers()),
        st.dictionaries(st.text(max_size=3), st.integers()),
    )
    def test_equals_dict_union(self, left: dict[str, int], right: dict[str, int]) -> None:
        assert _merge_dicts(left, right) == left | right


class TestCreateInitialState:
    def test_defaults(self) -> None:
        state = create_initial_state("Hello!")
        assert [type(m) for m in state["messages"]] == [HumanMessage]
        assert state["messages"][0].content == "Hello!"
        assert state["context_slots"] == {}
        assert state["knowledge_context"] == {}
        assert state["current_agent"] == "supervisor"
        assert state["session_id"] == "default"
        assert state["user_id"] == "anonymous"
        assert uuid.UUID(state["request_id"]).version == 4

    def test_explicit_values(self) -> None:
        state = create_initial_state(
            "hi", session_id="s1", user_id="alice", current_agent="greeter", request_id="r-1"
        )
        assert (state["session_id"], state["user_id"]) == ("s1", "alice")
        assert (state["current_agent"], state["request_id"]) == ("greeter", "r-1")

    def test_each_state_has_its_own_request_id_and_containers(self) -> None:
        first, second = create_initial_state("a"), create_initial_state("a")
        assert first["request_id"] != second["request_id"]
        first["context_slots"]["x"] = 1
        assert second["context_slots"] == {}

    def test_content_blocks_are_a_user_input_too(self) -> None:
        blocks = [{"type": "text", "text": "hi"}]
        assert create_initial_state(blocks)["messages"][0].content == blocks  # type: ignore[arg-type]

    @pytest.mark.parametrize(
        ("args", "kwargs", "error"),
        [
            (
                (None,),
                {},
                "user_input must be a str (or a list of message content blocks), not NoneType",
            ),
            ((5,), {}, "user_input must be a str (or a list of message content blocks), not int"),
            (("hi",), {"session_id": None}, "session_id must be a str, not NoneType"),
            (("hi",), {"current_agent": 1}, "current_agent must be a str, not int"),
            (("hi",), {"request_id": 7}, "request_id must be a str, not int"),
        ],
    )
    def test_a_wrong_type_is_named(
        self, args: tuple[Any, ...], kwargs: dict[str, Any], error: str
    ) -> None:
        with pytest.raises(TypeError) as raised:  # was: pydantic's text for HumanMessage
            create_initial_state(*args, **kwargs)
        assert str(raised.value) == error


async def test_reducers_in_a_langgraph_graph() -> None:
    """Two nodes in parallel each add slots; messages append; plain keys are overwritten."""

    def fan_out(state: OrchestratorState) -> dict[str, Any]:
        return {"current_agent": "fan"}

    def left(state: OrchestratorState) -> dict[str, Any]:
        return {
            "context_slots": {"left": 1, "shared": "L"},
            "knowledge_context": {"k1": "a"},
            "messages": [AIMessage(content="from left")],
        }

    def right(state: OrchestratorState) -> dict[str, Any]:
        return {"context_slots": {"right": 2}, "knowledge_context": {"k2": "b"}}

    builder = StateGraph(OrchestratorState)
    builder.add_node("fan", fan_out)
    builder.add_node("left", left)
    builder.add_node("right", right)
    builder.add_edge(START, "fan")
    builder.add_edge("fan", "left")
    builder.add_edge("fan", "right")
    builder.add_edge("left", END)
    builder.add_edge("right", END)
    state = create_initial_state("hi")
    state["context_slots"] = {"shared": "initial", "kept": True}
    result = await builder.compile().ainvoke(state)
    assert result["context_slots"] == {"shared": "L", "kept": True, "left": 1, "right": 2}
    assert result["knowledge_context"] == {"k1": "a", "k2": "b"}
    assert [m.content for m in result["messages"]] == ["hi", "from left"]
    assert result["current_agent"] == "fan"
    assert result["session_id"] == "default"


class TestAgentResponse:
    def test_defaults(self) -> None:
        response = AgentResponse(agent_name="a", content="hi")
        assert response.next_agent is None
        assert response.slots_update == {}
        assert response.slots_tier == {}
        assert response.token_usage is None

    def test_frozen_and_slotted(self) -> None:
        response = AgentResponse(agent_name="a", content="hi")
        with pytest.raises(dataclasses.FrozenInstanceError):
            response.content = "changed"  # type: ignore[misc]
        assert not hasattr(response, "__dict__")

    def test_default_dicts_are_not_shared(self) -> None:
        first, second = AgentResponse("a", "x"), AgentResponse("b", "y")
        first.slots_update["k"] = 1
        assert second.slots_update == {}

    def test_slot_tier_is_a_str_enum(self) -> None:
        response = AgentResponse(
            "a", "x", slots_update={"k": 1}, slots_tier={"k": SlotTier.SESSION}
        )
        assert response.slots_tier["k"] == "session"
        assert [str(t) for t in TIER_ORDER] == ["turn", "session", "long_term"]
        assert SlotTier("long_term") is SlotTier.LONG_TERM


class TestTokenCounting:
    def test_seed_examples(self) -> None:
        counter = CharDivisionTokenCounter()
        assert counter.chars_per_token == 4
        assert counter.count("hello world") == 2
        assert counter.count("") == 0
        assert counter.count("a") == 1

    @given(st.text(), st.integers(min_value=1, max_value=16))
    def test_formula(self, text: str, chars_per_token: int) -> None:
        count = CharDivisionTokenCounter(chars_per_token=chars_per_token).count(text)
        expected = 0 if not text else max(1, len(text) // chars_per_token)
        assert count == expected

    @pytest.mark.parametrize("bad", [0, -1, True])
    def test_chars_per_token_must_be_positive(self, bad: int) -> None:
        with pytest.raises(ValueError, match="chars_per_token"):
            CharDivisionTokenCounter(chars_per_token=bad)

    def test_abc_requires_count(self) -> None:
        with pytest.raises(TypeError):
            TokenCounter()  # type: ignore[abstract]

        class Words(TokenCounter):
            def count(self, text: str) -> int:
                return len(text.split())

        assert Words().count("a b c") == 3
