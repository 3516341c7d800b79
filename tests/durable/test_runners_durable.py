"""Other runners run unchanged on a durable desk: a LangGraph graph's model calls are steps."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, TypedDict

import pytest

pytest.importorskip("langgraph", reason="the graph extra")

from dbos import DBOS
from langchain_core.messages import BaseMessage
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages

from deskwork import Desk
from deskwork.graph.llm import DeskworkChatModel
from deskwork.testing import ScriptedAdapter, reply


class Chat(TypedDict):
    messages: Annotated[list[BaseMessage], add_messages]


def _graph() -> Any:
    async def answer(state: Chat) -> dict[str, Any]:
        return {"messages": [await DeskworkChatModel().ainvoke(state["messages"])]}

    builder = StateGraph(Chat)
    builder.add_node("draft", answer)
    builder.add_node("final", answer)
    builder.add_edge(START, "draft")
    builder.add_edge("draft", "final")
    builder.add_edge("final", END)
    return builder.compile()


def test_a_graph_runs_durably_with_its_model_calls_as_steps(tmp_path: Path) -> None:
    adapter = ScriptedAdapter([reply("a draft"), reply("the answer")])
    desk = Desk(model="m", adapter=adapter, storage_dir=tmp_path, durable=True)
    try:
        report = desk.run(_graph(), "question", run_id="g-1")
        steps = [s["function_name"] for s in DBOS.list_workflow_steps("g-1")]
    finally:
        desk.close()
    assert report.status == "completed", report.errors
    assert report.content == "the answer"
    assert [name.rsplit(":", 1)[0] for name in steps] == ["deskwork.model:m"] * 2
    types = [e.type for e in report.events]
    assert types[0] == "run.started" and types[-1] == "run.completed"
    assert types.count("llm.completed") == 2


def test_a_realtime_turn_runs_durably_like_a_plain_one(tmp_path: Path) -> None:
    from deskwork import Job
    from deskwork.realtime import (
        AgentConfig,
        AgentContext,
        AgentEngine,
        AgentInsight,
        AgentResponse,
        BaseAgent,
        Blackboard,
        InsightType,
    )

    class Coach(BaseAgent):
        async def evaluate(self, context: AgentContext) -> AgentResponse | None:
            insight = AgentInsight(
                agent_id="coach",
                agent_name="Coach",
                type=InsightType.SUGGESTION,
                content="Ask about budget",
            )
            return AgentResponse(insights=[insight], variable_updates={"phase": "discovery"})

    desk = Desk(model="m", adapter=ScriptedAdapter(), storage_dir=tmp_path, durable=True)
    try:
        engine = AgentEngine(adapter=ScriptedAdapter(), desk=desk)
        engine.register_agent(Coach(AgentConfig(name="Coach", id="coach")))
        context = AgentContext(session_id="s1", recent_segments=[], blackboard=Blackboard())
        report = desk.run(engine.turn(context), Job(input="We need a quote."), run_id="t-1")
        record = desk.run_store.get_run("t-1")
    finally:
        desk.close()
    assert report.status == "completed", report.errors
    assert isinstance(report.data, AgentResponse)
    assert report.content == "Ask about budget"
    assert record is not None and record.state is not None
    assert record.state.runner_type == "realtime"
    assert Blackboard.from_state(record.state.payload["blackboard"]).get_var("phase") == "discovery"


def test_a_subworker_spawned_by_a_tool_is_one_step_of_the_lead_run(tmp_path: Path) -> None:
    from deskwork import Worker
    from deskwork.testing import call_tool
    from deskwork.tools import create_subworker_tool

    adapter = ScriptedAdapter(
        [
            call_tool("spawn_subworker", name="researcher", instructions="R.", task="look"),
            reply("found it"),  # the child
            reply("summary: found it"),  # the lead
        ]
    )
    desk = Desk(model="m", adapter=adapter, storage_dir=tmp_path, durable=True)
    try:
        lead = Worker(name="lead", tools=[create_subworker_tool(desk)])
        report = desk.run(lead, "research", run_id="lead-1")
        steps = [s["function_name"] for s in DBOS.list_workflow_steps("lead-1")]
        child = report.tool_calls[0].result.data["run_id"]  # type: ignore[union-attr]
        child_record = desk.run_store.get_run(child)
        child_is_workflow = DBOS.get_workflow_status(child) is not None
    finally:
        desk.close()
    assert (report.status, report.content) == ("completed", "summary: found it")
    # the child ran inside the tool's step: its calls are not steps of their own
    kinds = [name.split(":")[0] for name in steps]
    assert kinds == ["deskwork.model", "deskwork.tool", "deskwork.model"]
    assert child_record is not None and child_record.status == "completed"
    assert not child_is_workflow


def test_a_blackboard_architecture_runs_durably_like_a_plain_one(tmp_path: Path) -> None:
    from deskwork import Worker
    from deskwork.architecture import BlackboardArchitecture

    def model(messages: list[dict[str, Any]], tools: Any) -> str:
        name = str(messages[0]["content"]).split("\n")[0]
        return f"{name} says hi"

    def run(durable: bool) -> Any:
        desk = Desk(
            model="m",
            adapter=ScriptedAdapter(default=model),
            storage_dir=tmp_path / str(durable),
            durable=durable,
        )
        agents = {n: Worker(name=n, instructions=n) for n in ("researcher", "critic")}
        try:
            return desk.run(BlackboardArchitecture(agents=agents, max_rounds=3), "question")
        finally:
            desk.close()

    plain, durable = run(False), run(True)
    assert durable.status == plain.status == "completed"
    assert durable.content == plain.content
    assert [(e.type, e.source) for e in durable.events] == [
        (e.type, e.source) for e in plain.events
    ]
