"""``@tool``: schema and input-model derivation, metadata, Toolbelt/Toolkit, handoff tool."""

from __future__ import annotations

from typing import Literal

import pytest
from pydantic import BaseModel, ValidationError

from deskwork.tools import Tool, Toolbelt, Toolkit, ToolResult, tool, transfer_to_agent_tool


class Filters(BaseModel):
    tags: list[str]
    limit: int = 10


@tool(description="Add two numbers")
def add(a: int, b: int) -> int:
    return a + b


@tool
def search(
    query: str, mode: Literal["fast", "deep"] = "fast", filters: Filters | None = None
) -> str:
    """Search the index.

    Longer explanation that is not part of the description.
    """
    return query


def test_schema_is_derived_from_type_hints() -> None:
    assert add.name == "add" and add.description == "Add two numbers"
    assert add.schema["type"] == "object"
    assert add.schema["properties"]["a"]["type"] == "integer"
    assert add.schema["properties"]["b"]["type"] == "integer"
    assert sorted(add.schema["required"]) == ["a", "b"]
    assert add.schema.get("additionalProperties") is False
    assert "title" not in add.schema


def test_defaults_enums_and_nested_models_in_schema() -> None:
    props = search.schema["properties"]
    assert search.schema["required"] == ["query"]
    assert props["mode"]["enum"] == ["fast", "deep"] and props["mode"]["default"] == "fast"
    assert "$defs" in search.schema and "Filters" in search.schema["$defs"]
    assert search.description == "Search the index."


def test_input_model_validates_and_coerces_arguments() -> None:
    model = add.input_model
    assert model.__name__ == "AddInput"
    assert model.model_validate({"a": "3", "b": 4}).model_dump() == {"a": 3, "b": 4}
    with pytest.raises(ValidationError):
        model.model_validate({"a": 1})
    with pytest.raises(ValidationError):
        model.model_validate({"a": 1, "b": 2, "c": 3})  # unknown arguments are rejected
    with pytest.raises(ValidationError):
        search.input_model.model_validate({"query": "q", "mode": "slow"})
    parsed = search.input_model.model_validate({"query": "q", "filters": {"tags": ["x"]}})
    assert parsed.filters == Filters(tags=["x"])  # type: ignore[attr-defined]


def test_tool_options_and_defaults() -> None:
    def pre(call: object) -> None: ...

    def post(call: object, result: object) -> None: ...

    @tool(
        name="my_tool",
        description="Does something useful",
        requires_confirmation=False,
        requires_user_input=False,
        external_execution=True,
        pre=(pre,),
        post=(post,),
        confirmation_prompt="Proceed?",
        user_input_prompt="Enter value:",
        timeout=30.0,
        retries=3,
        retry_delay=0.5,
    )
    def my_function(param: str) -> str:
        return param

    assert isinstance(my_function, Tool)
    assert (my_function.name, my_function.description) == ("my_tool", "Does something useful")
    assert my_function.external_execution and my_function.pre == (pre,)
    assert my_function.post == (post,) and my_function.confirmation_prompt == "Proceed?"
    assert my_function.user_input_prompt == "Enter value:"
    assert (my_function.timeout, my_function.retries, my_function.retry_delay) == (30.0, 3, 0.5)
    assert my_function("direct") == "direct"  # the tool is still callable
    assert my_function.to_provider() == {
        "type": "function",
        "function": {
            "name": "my_tool",
            "description": "Does something useful",
            "parameters": my_function.schema,
        },
    }

    @tool()
    def undocumented(x: int) -> int:
        return x

    assert undocumented.description == "Call undocumented"
    assert (undocumented.timeout, undocumented.retries, undocumented.retry_delay) == (None, 0, 1.0)
    assert undocumented.output_type is None and undocumented.input_key is None


def test_invalid_tool_options_are_rejected() -> None:
    with pytest.raises(ValueError):
        tool(retries=-1)(lambda x: x)
    with pytest.raises(ValueError):
        tool(timeout=0)(lambda x: x)


def test_user_input_argument_is_hidden_from_the_model() -> None:
    @tool(requires_user_input=True)
    def ask(question: str, user_input: str) -> str:
        return user_input

    @tool(requires_user_input=True, input_key="answer")
    def ask2(question: str, answer: str) -> str:
        return answer

    assert set(ask.schema["properties"]) == {"question"} and ask.schema["required"] == ["question"]
    assert ask.effective_input_key == "user_input"
    assert set(ask2.schema["properties"]) == {"question"}
    assert ask2.effective_input_key == "answer"
    # the input model still requires the answer: it is supplied on resume
    with pytest.raises(ValidationError):
        ask2.input_model.model_validate({"question": "q"})


def test_toolbelt_registers_looks_up_and_replaces() -> None:
    belt = Toolbelt([add])
    belt.register(search)
    assert belt.names() == ["add", "search"] and len(belt) == 2
    assert belt.get("add") is add and belt.get("nope") is None
    assert "search" in belt and "nope" not in belt
    assert [t.name for t in belt] == ["add", "search"]
    assert [s["function"]["name"] for s in belt.schemas()] == ["add", "search"]

    @tool(name="add")
    def other_add(a: int) -> int:
        return a

    belt.register(other_add)
    assert belt.get("add") is other_add and belt.list() == [other_add, search]
    belt.unregister("add")
    belt.unregister("missing")
    assert belt.names() == ["search"]
    with pytest.raises(TypeError, match="@tool"):
        belt.register(lambda: None)  # type: ignore[arg-type]
    assert Toolkit is Toolbelt


def test_transfer_to_agent_tool_encodes_the_allowlist() -> None:
    handoff = transfer_to_agent_tool(available_agents=["researcher", "coder"])
    assert handoff.name == "transfer_to_agent" and handoff.requires_handoff
    assert handoff.schema["properties"]["agent_name"]["enum"] == ["researcher", "coder"]
    assert handoff.metadata["available_agents"] == ["researcher", "coder"]
    assert "researcher" in handoff.description
    free = transfer_to_agent_tool()
    assert "enum" not in free.schema["properties"]["agent_name"]
    assert free.metadata["available_agents"] is None


def test_tool_result_fields() -> None:
    result = ToolResult(content="ok", data={"code": 200})
    assert (result.content, result.data, result.error) == ("ok", {"code": 200}, None)
    assert (result.timed_out, result.cancelled, result.original_exception) == (False, False, None)
