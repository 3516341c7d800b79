"""Compiled LangGraph graphs run through the desk: events, reports, failures, pause/resume."""

from __future__ import annotations

import asyncio
import operator
from pathlib import Path
from typing import Annotated, Any, TypedDict

import pytest
from langchain_core.messages import AIMessage, BaseMessage
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.types import interrupt

from deskwork import Desk, Job
from deskwork.core.message import Message
from deskwork.graph._events import emit_graph_event
from deskwork.graph.core.exceptions import ConfigurationError
from deskwork.graph.core.state import OrchestratorState
from deskwork.graph.runner import GraphRunner
from deskwork.store import InMemoryRunStore, RunStore
from deskwork.store.sqlite import SQLiteRunStore
from deskwork.testing import ScriptedAdapter

SECRET = "sk-live-0123456789abcdef"


class Counter(TypedDict):
    log: Annotated[list[str], operator.add]


class Chat(TypedDict):
    messages: Annotated[list[BaseMessage], add_messages]


def _counter_graph(*, fail_in: str | None = None, ask_in: str | None = None) -> Any:
    def make(name: str) -> Any:
        def node(state: Counter) -> dict[str, Any]:
            if name == fail_in:
                raise ValueError(f"{name} broke; api_key={SECRET}")
            entry = name
            if name == ask_in:
                entry = f"{name}:{interrupt({'prompt': 'Ship it?', 'options': ['yes', 'no']})}"
            emit_graph_event("graph.test.visited", name, {"node": name})
            return {"log": [entry]}

        return node

    builder = StateGraph(Counter)
    for name in ("plan", "act", "check"):
        builder.add_node(name, make(name))
    builder.add_edge(START, "plan")
    builder.add_edge("plan", "act")
    builder.add_edge("act", "check")
    builder.add_edge("check", END)
    return builder.compile()


def _chat_graph() -> Any:
    async def answer(state: Chat) -> dict[str, Any]:
        last = state["messages"][-1].content
        reply = AIMessage(
            content=f"echo: {last}",
            usage_metadata={"input_tokens": 5, "output_tokens": 3, "total_tokens": 8},
        )
        return {"messages": [reply]}

    builder = StateGraph(Chat)
    builder.add_node("answer", answer)
    builder.add_edge(START, "answer")
    builder.add_edge("answer", END)
    return builder.compile()


def _desk(tmp_path: Path | None = None) -> Desk:
    store = SQLiteRunStore(tmp_path / "deskwork.db") if tmp_path else InMemoryRunStore()
    return Desk(run_store=store, adapter=ScriptedAdapter())  # graphs here call no model


def test_graph_runs_through_the_desk_with_node_events_in_the_run_store() -> None:
    desk = _desk()
    report = desk.run(GraphRunner(_counter_graph(), name="pipeline"), Job(input={"log": []}))
    assert report.status == "completed", report.errors
    assert report.data == {"log": ["plan", "act", "check"]}
    stored = desk.run_store.get_events(report.run_id)
    assert [e.type for e in stored] == [e.type for e in report.events]
    nodes = [e.payload["node"] for e in stored if e.type == "graph.node.completed"]
    assert nodes == ["plan", "act", "check"]
    visits = [e.source for e in stored if e.type == "graph.test.visited"]
    assert visits == ["plan", "act", "check"]  # emit_graph_event from sync nodes lands here
    kinds = [e.type for e in stored]
    assert kinds[0] == "run.started" and kinds[1] == "graph.started"
    assert kinds[-2:] == ["graph.completed", "run.completed"]
    assert report.metrics["nodes"] == 3
    assert desk.run_store.get_run(report.run_id).status == "completed"  # type: ignore[union-attr]


def test_compiled_graph_is_accepted_directly_and_chat_output_is_the_last_ai_message() -> None:
    desk = _desk()
    report = desk.run(_chat_graph(), "hello")
    assert report.status == "completed", report.errors
    assert report.content == "echo: hello"
    assert [m.role for m in report.messages] == ["user", "assistant"]
    assert report.metrics["total_tokens"] == 8
    assert report.metrics["llm_calls"] == 1
    assert report.data["messages"][-1]["content"] == "echo: hello"


def test_non_text_input_of_a_chat_graph_is_sent_as_json() -> None:
    report = _desk().run(_chat_graph(), Job(input=[1, {"a": "b"}]))
    assert report.content == 'echo: [1, {"a": "b"}]'


async def test_orchestrator_state_input_comes_from_the_job() -> None:
    seen: dict[str, Any] = {}

    def agent(state: OrchestratorState) -> dict[str, Any]:
        seen.update({k: v for k, v in state.items() if k != "messages"})
        seen["text"] = state["messages"][-1].content
        return {"messages": [AIMessage(content="done")], "current_agent": "agent"}

    builder = StateGraph(OrchestratorState)
    builder.add_node("agent", agent)
    builder.add_edge(START, "agent")
    builder.add_edge("agent", END)
    job = Job(input="hi there", metadata={"session_id": "s1", "user_id": "alice"})
    report = await _desk().arun(GraphRunner(builder.compile()), job)
    assert report.status == "completed", report.errors
    assert seen["text"] == "hi there"
    assert (seen["session_id"], seen["user_id"], seen["request_id"]) == ("s1", "alice", job.id)
    assert seen["context_slots"] == {} and seen["current_agent"] == "supervisor"
    assert report.content == "done"


def test_failing_node_gives_a_failed_report_with_the_reason_and_stored_events() -> None:
    desk = _desk()
    report = desk.run(GraphRunner(_counter_graph(fail_in="act")), Job(input={"log": []}))
    assert report.status == "failed"
    assert "ValueError: act broke" in report.errors[0]
    assert SECRET not in report.errors[0]
    stored = desk.run_store.get_events(report.run_id)
    failed = [e for e in stored if e.type == "graph.node.failed"]
    assert failed[0].payload["node"] == "act"
    assert [e.payload["node"] for e in stored if e.type == "graph.node.completed"] == ["plan"]
    assert stored[-1].type == "run.failed"
    assert SECRET not in str([e.payload for e in stored])
    assert desk.run_store.get_run(report.run_id).status == "failed"  # type: ignore[union-attr]


def test_uncompiled_graph_is_a_configuration_error() -> None:
    builder = StateGraph(Counter)
    with pytest.raises(ConfigurationError, match="compile"):
        GraphRunner(builder)
    with pytest.raises(ConfigurationError, match="compile"):
        _desk().run(builder, "x")  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match="compiled LangGraph graph"):
        GraphRunner(object())


def test_interrupt_pauses_the_run_and_resume_continues_it(tmp_path: Path) -> None:
    desk = _desk(tmp_path)
    runner = GraphRunner(_counter_graph(ask_in="act"))
    paused = desk.run(runner, Job(input={"log": []}))
    assert paused.status == "paused", paused.errors
    action = paused.pending_action
    assert action is not None and action.prompt == "Ship it?" and action.options == ["yes", "no"]
    assert [e.type for e in paused.events][-2:] == ["graph.interrupted", "run.paused"]
    done = desk.resume(paused.run_id, "yes", runner=runner)
    assert done.status == "completed", done.errors
    assert done.data == {"log": ["plan", "act:yes", "check"]}
    types = [e.type for e in desk.run_store.get_events(paused.run_id)]
    assert types.count("graph.node.completed") == 3  # plan once, act and check after resume
    assert types.index("run.resumed") < types.index("graph.resumed") < types.index("run.completed")


def test_resume_with_a_graph_lacking_the_paused_node_is_refused_and_the_run_stays_paused(
    tmp_path: Path,
) -> None:
    desk = _desk(tmp_path)
    paused = desk.run(GraphRunner(_counter_graph(ask_in="act")), Job(input={"log": []}))
    assert paused.status == "paused", paused.errors

    other = GraphRunner(_chat_graph())  # another graph under the same name: no "act" node
    with pytest.raises(ConfigurationError) as raised:  # was: completed, "act" never ran
        desk.resume(paused.run_id, "yes", runner=other)
    assert str(raised.value) == (
        f"run {paused.run_id} paused in 'act', which graph 'graph' lacks: resume it with the"
        " graph it paused in; the run stays paused"
    )
    record = desk.run_store.get_run(paused.run_id)
    assert record is not None and record.status == "paused"

    done = desk.resume(paused.run_id, "yes", runner=GraphRunner(_counter_graph(ask_in="act")))
    assert done.status == "completed", done.errors
    assert done.data == {"log": ["plan", "act:yes", "check"]}


def test_resume_of_a_run_that_is_not_paused_is_a_failed_report() -> None:
    desk = _desk()
    runner = GraphRunner(_counter_graph())
    report = desk.run(runner, Job(input={"log": []}))
    again = desk.resume(report.run_id, "yes", runner=runner)
    assert again.status == "failed"
    assert "not paused" in again.errors[0]


def test_secrets_in_graph_state_never_reach_the_store(tmp_path: Path) -> None:
    class Keyed(TypedDict):
        api_key: str
        note: str
        log: Annotated[list[str], operator.add]

    def use(state: Keyed) -> dict[str, Any]:
        answer = interrupt("continue?")
        return {"log": [f"used {state['api_key'][:3]}:{answer}"]}

    builder = StateGraph(Keyed)
    builder.add_node("use", use)
    builder.add_edge(START, "use")
    builder.add_edge("use", END)
    desk = _desk(tmp_path)
    job = Job(input={"api_key": SECRET, "note": f"Bearer {SECRET}", "log": []})
    paused = desk.run(GraphRunner(builder.compile()), job)
    assert paused.status == "paused", paused.errors
    desk.run_store.flush()
    raw = (tmp_path / "deskwork.db").read_bytes()
    for suffix in ("-wal", "-shm"):
        extra = tmp_path / f"deskwork.db{suffix}"
        raw += extra.read_bytes() if extra.exists() else b""
    assert SECRET.encode() not in raw
    checkpoints = desk.run_store.get_checkpoint_items(paused.run_id)
    assert checkpoints, "the graph's checkpoints are in the desk's database"


async def test_cancelling_a_graph_run_marks_it_failed_and_propagates() -> None:
    started = asyncio.Event()

    async def slow(state: Counter) -> dict[str, Any]:
        started.set()
        await asyncio.sleep(30)
        return {"log": ["never"]}

    builder = StateGraph(Counter)
    builder.add_node("slow", slow)
    builder.add_edge(START, "slow")
    builder.add_edge("slow", END)
    desk = _desk()
    task = asyncio.create_task(desk.arun(GraphRunner(builder.compile()), Job(input={"log": []})))
    await asyncio.wait_for(started.wait(), 5)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    (record,) = desk.run_store.list_runs()
    assert record.status == "failed"
    assert desk.run_store.get_events(record.run_id)[-1].type == "run.failed"


def test_exit_durability_writes_fewer_checkpoints_and_still_resumes() -> None:
    counts = {}
    for durability in ("async", "exit"):
        desk = _desk()
        runner = GraphRunner(_counter_graph(ask_in="check"), durability=durability)
        paused = desk.run(runner, Job(input={"log": []}))
        assert paused.status == "paused", paused.errors
        counts[durability] = len(desk.run_store.get_checkpoint_items(paused.run_id))
        done = desk.resume(paused.run_id, "ok", runner=runner)
        assert done.data == {"log": ["plan", "act", "check:ok"]}, done.errors
    assert counts["exit"] < counts["async"]


class _NoCheckpoints(InMemoryRunStore):
    """A run store that keeps no graph checkpoints (the RunStore defaults)."""

    put_checkpoint_items = RunStore.put_checkpoint_items
    get_checkpoint_items = RunStore.get_checkpoint_items
    delete_checkpoint_items = RunStore.delete_checkpoint_items


def test_a_store_without_checkpoints_runs_graphs_but_an_interrupt_fails_clearly() -> None:
    desk = Desk(run_store=_NoCheckpoints(), adapter=ScriptedAdapter())
    done = desk.run(GraphRunner(_counter_graph()), Job(input={"log": []}))
    assert done.status == "completed" and done.data == {"log": ["plan", "act", "check"]}
    report = desk.run(GraphRunner(_counter_graph(ask_in="act")), Job(input={"log": []}))
    assert report.status == "failed"
    assert "keeps no graph checkpoints" in report.errors[0]
    assert "_NoCheckpoints" in report.errors[0]


def test_parallel_interrupts_are_answered_together_or_one_by_one() -> None:
    def make(name: str) -> Any:
        def node(state: Counter) -> dict[str, Any]:
            return {"log": [f"{name}:{interrupt(f'{name}?')}"]}

        return node

    builder = StateGraph(Counter)
    builder.add_node("left", make("left"))
    builder.add_node("right", make("right"))
    builder.add_edge(START, "left")
    builder.add_edge(START, "right")
    builder.add_edge("left", END)
    builder.add_edge("right", END)
    runner = GraphRunner(builder.compile())
    desk = _desk()

    paused = desk.run(runner, Job(input={"log": []}))
    assert paused.pending_action is not None
    ids = paused.pending_action.metadata["interrupt_ids"]
    assert len(ids) == 2
    same = desk.resume(paused.run_id, "ok", runner=runner)
    assert sorted(same.data["log"]) == ["left:ok", "right:ok"], same.errors

    paused = desk.run(runner, Job(input={"log": []}))
    first, second = paused.pending_action.metadata["interrupt_ids"]  # type: ignore[union-attr]
    half = desk.resume(paused.run_id, {first: "a"}, runner=runner)
    assert half.status == "paused", half.errors  # the other interrupt still waits
    assert half.pending_action is not None
    assert half.pending_action.metadata["interrupt_ids"] == [second]
    record = desk.run_store.get_run(half.run_id)
    assert record is not None and record.state is not None
    assert len(record.state.payload["waiting_nodes"]) == 1  # the node still waiting
    done = desk.resume(half.run_id, "b", runner=runner)
    assert done.status == "completed", done.errors
    assert sorted(x.split(":")[1] for x in done.data["log"]) == ["a", "b"]


def test_a_registered_runner_resumes_by_name_on_a_new_desk_over_the_same_file(
    tmp_path: Path,
) -> None:
    first = _desk(tmp_path)
    runner = GraphRunner(_counter_graph(ask_in="plan"), name="flow")
    paused = first.run(runner, Job(input={"log": []}))
    assert paused.status == "paused", paused.errors
    first.run_store.close()
    second = _desk(tmp_path)  # as a new process would: nothing in memory
    second.register(GraphRunner(_counter_graph(ask_in="plan"), name="flow"))
    done = second.resume(paused.run_id, "go")
    assert done.status == "completed", done.errors
    assert done.data == {"log": ["plan:go", "act", "check"]}


def test_job_history_comes_before_the_new_user_message() -> None:
    history = [Message(role="user", content="earlier"), Message(role="assistant", content="ok")]
    report = _desk().run(_chat_graph(), Job(input="now", initial_messages=history))
    assert [(m.role, m.content) for m in report.messages] == [
        ("user", "earlier"),
        ("assistant", "ok"),
        ("user", "now"),
        ("assistant", "echo: now"),
    ]
