"""Graph model calls get the desk's one retry policy and adapter checks, like worker calls."""

from __future__ import annotations

from typing import Annotated, Any, TypedDict

from langchain_core.messages import AnyMessage
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages

from deskwork import Desk, Job
from deskwork.adapters import RetryPolicy
from deskwork.graph.llm import DeskworkChatModel
from deskwork.graph.runner import GraphRunner
from deskwork.store import InMemoryRunStore
from deskwork.testing.scripted import ScriptedAdapter, fail, reply

FAST = RetryPolicy(initial_interval=0.01, backoff_factor=2, jitter=False)


class RateLimited(Exception):
    status_code = 429


class State(TypedDict):
    messages: Annotated[list[AnyMessage], add_messages]


def _graph(llm: DeskworkChatModel) -> Any:
    async def answer(state: State) -> dict[str, Any]:
        return {"messages": [await llm.ainvoke(state["messages"])]}

    builder = StateGraph(State)
    builder.add_node("answer", answer)
    builder.add_edge(START, "answer")
    builder.add_edge("answer", END)
    return builder.compile()


async def test_a_rate_limited_graph_model_call_is_retried_by_the_desk() -> None:
    adapter = ScriptedAdapter([fail(RateLimited("slow down")), reply("ok")])
    desk = Desk(
        model="s/m", adapter=adapter, run_store=InMemoryRunStore(), num_retries=1, retry_policy=FAST
    )
    report = await desk.arun(GraphRunner(_graph(DeskworkChatModel())), Job(input="hi"))
    assert (report.status, report.content) == ("completed", "ok")
    assert len(adapter.calls) == 2
    assert all(call["num_retries"] == 0 for call in adapter.calls)  # the client never retries
    retries = [e.payload for e in report.events if e.type == "llm.retry"]
    assert [r["retry"] for r in retries] == [1]


async def test_without_desk_retries_the_error_fails_the_run() -> None:
    adapter = ScriptedAdapter([fail(RateLimited("slow down")), reply("never")])
    desk = Desk(model="s/m", adapter=adapter, run_store=InMemoryRunStore())
    report = await desk.arun(GraphRunner(_graph(DeskworkChatModel())), Job(input="hi"))
    assert report.status == "failed"
    assert len(adapter.calls) == 1


async def test_an_adapter_returning_the_wrong_type_is_named() -> None:
    class Broken(ScriptedAdapter):
        async def acomplete(self, **kwargs: Any) -> Any:
            return {"content": "a dict"}

    llm = DeskworkChatModel(model="s/m", adapter=Broken([]))
    desk = Desk(model="s/m", adapter=Broken([]), run_store=InMemoryRunStore())
    report = await desk.arun(GraphRunner(_graph(llm)), Job(input="hi"))
    assert report.status == "failed"
    assert "Broken.acomplete() returned dict" in " ".join(report.errors)
