"""DeskworkChatModel: LangChain chat model over deskwork adapters (scripted and real HTTP)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Annotated, Any, TypedDict

import pytest
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.tools import tool as lc_tool
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from pydantic import BaseModel

from deskwork import Desk, Job
from deskwork.adapters import LiteLLMAdapter
from deskwork.graph.llm import DeskworkChatModel
from deskwork.graph.runner import GraphRunner
from deskwork.store import InMemoryRunStore
from deskwork.testing import OpenAICompatServer, ScriptedAdapter, ServerReply
from deskwork.testing.scripted import Turn, call_tool, fail, reply, structured

API_KEY = "sk-test-secret-0123456789"


class Route(BaseModel):
    next_agent: str
    reason: str


@lc_tool
def lookup(city: str) -> str:
    """Look up the weather of a city."""
    return f"sunny in {city}"


async def test_reply_carries_content_usage_and_sends_openai_messages() -> None:
    adapter = ScriptedAdapter(
        [Turn(content="hi!", usage={"prompt_tokens": 4, "completion_tokens": 2, "total_tokens": 6})]
    )
    llm = DeskworkChatModel(model="test/model", adapter=adapter, temperature=0.2)
    answer = await llm.ainvoke([SystemMessage(content="Be kind."), HumanMessage(content="hello")])
    assert isinstance(answer, AIMessage) and answer.content == "hi!"
    assert answer.usage_metadata == {"input_tokens": 4, "output_tokens": 2, "total_tokens": 6}
    call = adapter.calls[0]
    assert call["model"] == "test/model" and call["temperature"] == 0.2
    assert call["messages"] == [
        {"role": "system", "content": "Be kind."},
        {"role": "user", "content": "hello"},
    ]
    assert call["tools"] is None


def test_sync_invoke_and_bound_tools() -> None:
    adapter = ScriptedAdapter([call_tool("lookup", city="Oslo")])
    llm = DeskworkChatModel(model="m", adapter=adapter).bind_tools([lookup], tool_choice="lookup")
    answer = llm.invoke("weather in Oslo?")
    assert [(c["name"], c["args"]) for c in answer.tool_calls] == [("lookup", {"city": "Oslo"})]
    sent = adapter.calls[0]
    assert sent["tools"][0]["function"]["name"] == "lookup"
    assert sent["tool_choice"] == {"type": "function", "function": {"name": "lookup"}}


async def test_a_tool_round_trip_is_sent_in_the_openai_format() -> None:
    adapter = ScriptedAdapter([reply("It is sunny in Oslo.")])
    llm = DeskworkChatModel(model="m", adapter=adapter)
    asked = AIMessage(
        content="", tool_calls=[{"id": "c1", "name": "lookup", "args": {"city": "Oslo"}}]
    )
    answer = await llm.ainvoke(
        [HumanMessage(content="weather?"), asked, ToolMessage(content="sunny", tool_call_id="c1")]
    )
    assert answer.content == "It is sunny in Oslo."
    sent = adapter.calls[0]["messages"]
    assert sent[1]["role"] == "assistant"
    assert sent[1]["tool_calls"][0]["function"] == {
        "name": "lookup",
        "arguments": '{"city": "Oslo"}',
    }
    assert sent[2] == {"role": "tool", "content": "sunny", "tool_call_id": "c1"}


async def test_malformed_tool_arguments_become_invalid_tool_calls() -> None:
    adapter = ScriptedAdapter([Turn(tool_calls=[("lookup", "{not json")])])
    llm = DeskworkChatModel(model="m", adapter=adapter).bind_tools([lookup])
    answer = await llm.ainvoke("x")
    assert answer.tool_calls == []
    assert answer.invalid_tool_calls[0]["name"] == "lookup"
    assert "malformed" in str(answer.invalid_tool_calls[0]["error"])


async def test_with_structured_output_returns_the_model_instance() -> None:
    adapter = ScriptedAdapter([call_tool("Route", next_agent="billing", reason="invoice")])
    router = DeskworkChatModel(model="m", adapter=adapter).with_structured_output(Route)
    route = await router.ainvoke("my invoice is wrong")
    assert route == Route(next_agent="billing", reason="invoice")
    assert adapter.calls[0]["tool_choice"] == "required"


async def test_json_schema_structured_output_validates_and_retries() -> None:
    adapter = ScriptedAdapter(
        [reply('{"next_agent": "billing"}'), structured({"next_agent": "billing", "reason": "x"})]
    )
    router = DeskworkChatModel(model="m", adapter=adapter).with_structured_output(
        Route, method="json_schema"
    )
    assert await router.ainvoke("route me") == Route(next_agent="billing", reason="x")
    assert len(adapter.calls) == 2  # the first reply missed a field: retried with the error
    assert adapter.calls[0]["response_format"]["type"] == "json_schema"
    assert "reason" in adapter.calls[1]["messages"][-1]["content"]
    with pytest.raises(ValueError, match="json_schema"):
        DeskworkChatModel(model="m", adapter=adapter).with_structured_output(
            {"type": "object"}, method="json_schema"
        )


async def test_astream_yields_text_pieces_and_usage() -> None:
    adapter = ScriptedAdapter([reply("one two three")])
    llm = DeskworkChatModel(model="m", adapter=adapter)
    pieces = [chunk async for chunk in llm.astream("count")]
    assert [p.content for p in pieces if p.content] == ["one", " two", " three"]
    whole = pieces[0]
    for piece in pieces[1:]:
        whole = whole + piece
    assert whole.content == "one two three"
    assert whole.usage_metadata is not None and whole.usage_metadata["total_tokens"] > 0
    assert adapter.calls[0]["stream"] is True


class Chat(TypedDict):
    messages: Annotated[list[BaseMessage], add_messages]


def _chat_graph(llm: DeskworkChatModel) -> Any:
    async def think(state: Chat) -> dict[str, Any]:
        await llm.ainvoke(state["messages"])  # e.g. a routing call whose reply is not kept
        return {"messages": [await llm.ainvoke(state["messages"])]}

    builder = StateGraph(Chat)
    builder.add_node("think", think)
    builder.add_edge(START, "think")
    builder.add_edge("think", END)
    return builder.compile()


def test_inside_a_desk_run_the_model_uses_the_desk_adapter_and_reports_usage() -> None:
    usage = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
    adapter = ScriptedAdapter([Turn(content="route", usage=usage), Turn(content="42", usage=usage)])
    desk = Desk(
        model="desk/model",
        adapter=adapter,
        run_store=InMemoryRunStore(),
        temperature=0.3,
        max_tokens=99,
    )
    report = desk.run(GraphRunner(_chat_graph(DeskworkChatModel())), "question")
    assert report.status == "completed", report.errors
    assert report.content == "42"
    assert [c["model"] for c in adapter.calls] == ["desk/model", "desk/model"]
    assert adapter.calls[0]["temperature"] == 0.3 and adapter.calls[0]["max_tokens"] == 99
    stored = desk.run_store.get_events(report.run_id)
    llm_events = [e for e in stored if e.type == "llm.completed"]
    assert [e.payload["total_tokens"] for e in llm_events] == [15, 15]
    assert report.metrics["llm_calls"] == 2  # the kept reply is not counted twice
    assert report.metrics["total_tokens"] == 30
    assert report.metrics["by_model"] == {
        "desk/model": {
            "llm_calls": 2,
            "prompt_tokens": 20,
            "completion_tokens": 10,
            "total_tokens": 30,
        }
    }
    kinds = [e.type for e in stored if e.type.startswith("llm.")]
    assert kinds == ["llm.started", "llm.completed"] * 2


def test_a_streaming_desk_run_records_stream_token_events() -> None:
    adapter = ScriptedAdapter([reply("go to greeter"), reply("the final words")])
    desk = Desk(model="m", adapter=adapter, run_store=InMemoryRunStore())
    report = desk.run(GraphRunner(_chat_graph(DeskworkChatModel())), "q", stream=True)
    assert report.status == "completed", report.errors
    assert report.content == "the final words"
    tokens = [e.payload["token"] for e in report.events if e.type == "stream.token"]
    assert "".join(tokens) == "go to greeterthe final words"
    assert all(call["stream"] for call in adapter.calls)
    assert report.metrics["llm_calls"] == 2


def test_graph_model_calls_count_against_the_desks_spending_limit() -> None:
    adapter = ScriptedAdapter([Turn(content="route", cost=0.02), Turn(content="never", cost=0.02)])
    desk = Desk(model="m", adapter=adapter, run_store=InMemoryRunStore(), max_cost_usd=0.01)
    report = desk.run(GraphRunner(_chat_graph(DeskworkChatModel())), "q")
    assert report.status == "failed"
    assert "BudgetExceededError" in report.errors[0]
    assert len(adapter.calls) == 1  # the second call was refused before it was made
    assert report.metrics["cost"] == 0.02


def test_a_failing_model_call_fails_the_run_with_an_llm_failed_event() -> None:
    adapter = ScriptedAdapter([fail(RuntimeError(f"provider down, key {API_KEY}"))])
    desk = Desk(model="m", adapter=adapter, run_store=InMemoryRunStore())
    report = desk.run(GraphRunner(_chat_graph(DeskworkChatModel())), Job(input="q"))
    assert report.status == "failed"
    assert "provider down" in report.errors[0] and API_KEY not in report.errors[0]
    failed = [e for e in desk.run_store.get_events(report.run_id) if e.type == "llm.failed"]
    assert len(failed) == 1 and API_KEY not in failed[0].payload["error_message"]
    assert failed[0].payload["error_type"] == "RuntimeError"


def test_no_model_anywhere_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="model"):
        DeskworkChatModel(adapter=ScriptedAdapter(["x"])).invoke("hi")


# -- the real HTTP path: LiteLLM against the local OpenAI-compatible server -----------------


@pytest.fixture(scope="module")
def server() -> Iterator[OpenAICompatServer]:
    with OpenAICompatServer() as srv:
        yield srv


@pytest.fixture
def srv(server: OpenAICompatServer) -> OpenAICompatServer:
    server.clear()
    return server


def _http_llm(server: OpenAICompatServer) -> DeskworkChatModel:
    adapter = LiteLLMAdapter(api_base=server.base_url, api_key=API_KEY)
    return DeskworkChatModel(model="openai/test-model", adapter=adapter)


async def test_http_reply_and_tool_call_through_litellm(srv: OpenAICompatServer) -> None:
    srv.enqueue(
        ServerReply.text(
            "hello", usage={"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4}
        ),
        ServerReply.tool_calls([("lookup", {"city": "Rome"})]),
    )
    llm = _http_llm(srv)
    answer = await llm.ainvoke("hi")
    assert answer.content == "hello"
    assert answer.usage_metadata is not None and answer.usage_metadata["total_tokens"] == 4
    called = await llm.bind_tools([lookup]).ainvoke("weather?")
    assert [(c["name"], c["args"]) for c in called.tool_calls] == [("lookup", {"city": "Rome"})]
    first, second = (r.body for r in srv.requests)
    assert first["model"] == "test-model" and first["messages"][-1]["content"] == "hi"
    assert second["tools"][0]["function"]["name"] == "lookup"


async def test_http_streaming_through_litellm(srv: OpenAICompatServer) -> None:
    srv.enqueue(ServerReply.text("streamed words arrive"))
    pieces = [chunk async for chunk in _http_llm(srv).astream("go")]
    assert "".join(str(p.content) for p in pieces) == "streamed words arrive"
    assert len([p for p in pieces if p.content]) > 1
    assert srv.requests[0].body["stream"] is True


def test_http_graph_run_through_the_desk(srv: OpenAICompatServer) -> None:
    srv.enqueue(ServerReply.text("route"), ServerReply.text("final answer"))
    adapter = LiteLLMAdapter(api_base=srv.base_url, api_key=API_KEY)
    desk = Desk(model="openai/test-model", adapter=adapter, run_store=InMemoryRunStore())
    report = desk.run(_chat_graph(DeskworkChatModel()), "q")
    assert report.status == "completed", report.errors
    assert report.content == "final answer"
    assert report.metrics["llm_calls"] == 2
    assert API_KEY not in str([e.payload for e in report.events])


def test_a_sync_node_calling_invoke_inside_a_desk_run() -> None:
    llm = DeskworkChatModel()

    def think(state: Chat) -> dict[str, Any]:  # LangGraph runs sync nodes in a thread
        return {"messages": [llm.invoke(state["messages"])]}

    builder = StateGraph(Chat)
    builder.add_node("think", think)
    builder.add_edge(START, "think")
    builder.add_edge("think", END)
    desk = Desk(model="m", adapter=ScriptedAdapter(["sync hello"]), run_store=InMemoryRunStore())
    report = desk.run(GraphRunner(builder.compile()), "hi")
    assert report.status == "completed", report.errors
    assert report.content == "sync hello"
    assert [e.type for e in report.events if e.type.startswith("llm.")] == [
        "llm.started",
        "llm.completed",
    ]
    assert report.metrics["llm_calls"] == 1
