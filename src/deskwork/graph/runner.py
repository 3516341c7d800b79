"""GraphRunner: a compiled LangGraph graph as a desk runner.

``desk.run(GraphRunner(graph), job)`` (or ``desk.run(graph, job)``) runs the graph with the
run's id as LangGraph thread id and the desk's run store as its checkpointer, so runs, events
and checkpoints share one database. Every node the graph runs is a ``graph.node.completed``
(or ``graph.node.failed``) event; agents, routing and middleware of ``deskwork.graph`` add their
own ``graph.*`` events to the same run. A LangGraph ``interrupt()`` pauses the desk run;
``desk.resume(run_id, decision, runner=GraphRunner(graph))`` continues it, in any process that
opens the same storage.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.pregel import Pregel
from langgraph.types import Command, Durability, Interrupt

from deskwork.core.job import Job
from deskwork.core.metrics import sum_metrics
from deskwork.core.pending import PendingAction
from deskwork.core.redact import describe_exception
from deskwork.core.report import Report
from deskwork.core.state import RunState
from deskwork.core.tool_call import ToolCall
from deskwork.graph._durable import durable_graph
from deskwork.graph._events import GraphEmitter, graph_emitter
from deskwork.graph._messages import from_message, text_of, to_message
from deskwork.graph.checkpoint import RunStoreSaver
from deskwork.graph.core.exceptions import ConfigurationError
from deskwork.graph.llm import METERED, desk_model
from deskwork.runtime.config import RunConfig
from deskwork.store.base import RunStore
from deskwork.utils import is_integer, to_jsonable

__all__ = ["GraphRunner", "InputBuilder"]

InputBuilder = Callable[[Job], Any]
"""Turns the desk job into the graph's input state."""

_ORCHESTRATOR_KEYS = {"messages", "context_slots", "current_agent", "knowledge_context"}

DEFAULT_RECURSION_LIMIT = 25
"""Steps a desk run of a graph may take unless told otherwise: LangGraph's long-standing default.

LangGraph 1.x raised its own default to about 10,000; a supervisor that keeps routing to a worker
then ran for many minutes (each step costs more as the conversation grows) before failing.
"""


class GraphRunner:
    """Runs a compiled LangGraph graph through a desk (``runner_type = "graph"``).

    Args:
        graph: a compiled graph (``StateGraph(...).compile()``, ``build_hub_spoke_graph(...)``).
        name: the runner's name; a new process resumes the run with a runner of the same name.
        input_builder: ``job -> input state``. By default a dict ``job.input`` is the state; for
            graphs with a ``messages`` key the input becomes a user message (plus
            ``job.initial_messages``), with ``session_id``/``user_id``/``request_id`` taken from
            ``job.metadata`` (``request_id`` defaults to the job id) for ``OrchestratorState``
            graphs; any other input is passed as it is.
        recursion_limit: LangGraph's step limit for one run; ``None``: the graph's own
            (``graph.with_config(recursion_limit=...)``), else :data:`DEFAULT_RECURSION_LIMIT`.
            A run that reaches it fails with ``GraphRecursionError``.
        durability: when LangGraph writes checkpoints to the run store: ``"async"`` (the
            default: after every step, while the next one runs), ``"sync"`` (before the next
            step starts) or ``"exit"`` (only when the graph ends or interrupts; fastest, and
            pause/resume still works).

    A paused run names the nodes its interrupts wait in (``RunState.payload["waiting_nodes"]``);
    resuming it with a graph that lacks one of them (another graph under the same name) raises
    ``ConfigurationError`` before the run is claimed, and the run stays paused. Only those nodes
    are checked: a graph that gained nodes, or changed others, still resumes.

    Raises:
        ConfigurationError: ``graph`` is not a compiled LangGraph graph, ``recursion_limit``
            is not a positive int, or ``durability`` is not one of the three.
    """

    runner_type = "graph"

    def __init__(
        self,
        graph: Any,
        *,
        name: str = "graph",
        input_builder: InputBuilder | None = None,
        recursion_limit: int | None = None,
        durability: Durability = "async",
    ) -> None:
        self.graph: Pregel[Any, Any, Any, Any] = _compiled(graph)
        self.name = name
        self.input_builder = input_builder
        self.recursion_limit = _limit(recursion_limit)
        self.durability: Durability = _durability(durability)
        self._bound: tuple[RunStore, Pregel[Any, Any, Any, Any]] | None = None

    async def arun(self, config: RunConfig, job: Job) -> tuple[Report, RunState]:
        """Run the graph from ``job`` until it ends, fails or interrupts."""
        graph_input = self.input_builder(job) if self.input_builder else self.default_input(job)
        config.emit("graph.started", self.name, {"thread_id": config.run_id})
        return await self._drive(config, job, graph_input, {})

    async def aresume(
        self, config: RunConfig, state: RunState, decision: Any, job: Job | None = None
    ) -> tuple[Report, RunState]:
        """Continue an interrupted graph: ``decision`` answers its pending ``interrupt()``."""
        job = job or Job.from_state(state.job)
        saver = self._graph(config).checkpointer
        if not isinstance(saver, BaseCheckpointSaver) or saver.get_tuple(_thread(config)) is None:
            error = f"run {config.run_id} has no stored graph checkpoint to resume from"
            return _failed(config, [error]), _state(self, config, job, "failed", state.metrics)
        ids = list(state.payload.get("interrupt_ids", []))
        command: Command[Any] = Command(resume=_resume_value(ids, decision))
        config.emit("graph.resumed", self.name, {"interrupt_ids": ids})
        return await self._drive(config, job, command, state.metrics)

    def check_resume(self, state: RunState) -> None:
        """Refuse a paused run whose interrupts wait in nodes this graph lacks (the desk asks
        before it claims the run).

        Raises:
            ConfigurationError: a node the pause waits in is not in this graph; the run stays
                paused, resumable with the graph it paused in.
        """
        waiting = state.payload.get("waiting_nodes")
        nodes = self.graph.nodes
        missing = [n for n in waiting if n not in nodes] if isinstance(waiting, list) else []
        if missing:
            raise ConfigurationError(
                f"run {state.run_id} paused in {', '.join(map(repr, missing))}, which graph"
                f" {self.name!r} lacks: resume it with the graph it paused in; the run stays"
                " paused"
            )

    def default_input(self, job: Job) -> Any:
        """The graph's input for ``job`` when no ``input_builder`` was given."""
        if isinstance(job.input, Mapping):
            return dict(job.input)
        channels = set(self.graph.channels)
        if "messages" not in channels:
            return job.input
        history: list[BaseMessage] = [from_message(m) for m in job.initial_messages or ()]
        if job.input is not None:
            text = job.input if isinstance(job.input, str) else json.dumps(to_jsonable(job.input))
            history.append(HumanMessage(content=text))
        if not _ORCHESTRATOR_KEYS.issubset(channels):
            return {"messages": history}
        meta = job.metadata
        return {
            "messages": history,
            "context_slots": {},
            "knowledge_context": {},
            "current_agent": str(meta.get("current_agent", "supervisor")),
            "session_id": str(meta.get("session_id", "default")),
            "user_id": str(meta.get("user_id", "anonymous")),
            "request_id": str(meta.get("request_id", job.id)),
        }

    # -- one pass of the graph ----------------------------------------------------------

    async def _drive(
        self, config: RunConfig, job: Job, graph_input: Any, metrics: dict[str, Any]
    ) -> tuple[Report, RunState]:
        graph = self._graph(config)
        progress = _Progress(metrics=dict(metrics))
        try:
            with (
                graph_emitter(_metered(config.emit, progress)),
                desk_model(config),
                durable_graph(config),
            ):
                async for mode, chunk in graph.astream(
                    graph_input,
                    self._run_config(config),
                    stream_mode=["tasks", "updates", "values"],
                    durability=self.durability if _saves(graph) else None,
                ):
                    self._observe(config, progress, mode, chunk)
        except Exception as exc:
            error = f"{describe_exception(exc)}"
            return self._failed(config, job, progress, error)
        if progress.interrupts and not _saves(graph):
            store = type(config.desk.run_store if config.desk else None).__name__
            error = (
                f"the graph called interrupt() but the run store ({store}) keeps no graph"
                " checkpoints, so it could never resume: use the SQLite, in-memory or"
                " PostgreSQL run store"
            )
            return self._failed(config, job, progress, error)
        if progress.interrupts:
            return self._paused(config, job, progress)
        return self._completed(config, job, progress)

    def _failed(
        self, config: RunConfig, job: Job, progress: _Progress, error: str
    ) -> tuple[Report, RunState]:
        config.emit("graph.failed", self.name, {"error": error, "node": progress.failed_node})
        report = _failed(config, [error])
        report.metrics = progress.metrics
        return report, _state(self, config, job, "failed", progress.metrics)

    def _observe(self, config: RunConfig, progress: _Progress, mode: str, chunk: Any) -> None:
        if mode == "values":
            progress.values = chunk
        elif mode == "updates" and isinstance(chunk, dict):
            progress.interrupts.extend(chunk.get("__interrupt__", ()))
            for node, update in chunk.items():
                if node != "__interrupt__":
                    progress.count_usage(update)
        elif mode == "tasks" and isinstance(chunk, dict) and "result" in chunk:
            node = str(chunk.get("name"))
            if chunk.get("error") is not None:
                progress.failed_node = node
                error = f"{describe_exception(chunk['error'])}"
                config.emit("graph.node.failed", self.name, {"node": node, "error": error})
            elif chunk.get("interrupts"):
                progress.waiting_nodes.append(node)
            else:
                progress.metrics = sum_metrics(progress.metrics, {"nodes": 1})
                keys = sorted(_keys(chunk.get("result")))
                config.emit("graph.node.completed", self.name, {"node": node, "updated": keys})

    def _paused(self, config: RunConfig, job: Job, progress: _Progress) -> tuple[Report, RunState]:
        first: Interrupt = progress.interrupts[0]
        ids = [str(item.id) for item in progress.interrupts]
        prompt = _prompt(first.value)
        config.emit("graph.interrupted", self.name, {"interrupt_ids": ids, "prompt": prompt})
        action = PendingAction(
            action_id=str(first.id),
            type="user_input",
            tool_call=ToolCall(
                id=str(first.id), name="interrupt", arguments={"value": to_jsonable(first.value)}
            ),
            prompt=prompt,
            options=_options(first.value),
            metadata={"interrupt_ids": ids},
        )
        report = Report(
            run_id=config.run_id,
            status="paused",
            pending_action=action,
            messages=_messages(progress.values),
            metrics=progress.metrics,
        )
        state = _state(self, config, job, "paused", progress.metrics)
        state = state.model_copy(
            update={
                "pending_action": action,
                "payload": {
                    **state.payload,
                    "interrupt_ids": ids,
                    "waiting_nodes": sorted(set(progress.waiting_nodes)),
                },
            }
        )
        return report, state

    def _completed(
        self, config: RunConfig, job: Job, progress: _Progress
    ) -> tuple[Report, RunState]:
        values = progress.values
        messages = _messages(values)
        answer = next((m for m in reversed(messages) if m.role == "assistant"), None)
        content = text_of(answer.content) if answer is not None else None
        if answer is None and isinstance(values, str):
            content = values
        config.emit("graph.completed", self.name, {"nodes": progress.metrics.get("nodes", 0)})
        report = Report(
            run_id=config.run_id,
            status="completed",
            content=content,
            data=_data(values),
            messages=messages,
            metrics=progress.metrics,
        )
        return report, _state(self, config, job, "completed", progress.metrics)

    # -- LangGraph plumbing -------------------------------------------------------------

    def _graph(self, config: RunConfig) -> Pregel[Any, Any, Any, Any]:
        """The graph with the desk's run store as its checkpointer (made once per store)."""
        store = config.desk.run_store if config.desk is not None else None
        if store is None or not _keeps_checkpoints(store):
            return self.graph  # standalone or a store without checkpoints: no pause/resume
        if self._bound is None or self._bound[0] is not store:
            self._bound = (store, self.graph.copy(update={"checkpointer": RunStoreSaver(store)}))
        return self._bound[1]

    def _run_config(self, config: RunConfig) -> RunnableConfig:
        run_config = _thread(config)
        own = (self.graph.config or {}).get("recursion_limit")
        run_config["recursion_limit"] = self.recursion_limit or own or DEFAULT_RECURSION_LIMIT
        return run_config


@dataclass
class _Progress:
    """What one pass of the graph produced so far."""

    metrics: dict[str, Any]
    values: Any = None
    interrupts: list[Interrupt] = field(default_factory=list)
    failed_node: str | None = None
    waiting_nodes: list[str] = field(default_factory=list)
    """The nodes whose interrupts paused this pass."""

    def count_usage(self, update: Any) -> None:
        """Add the token usage of the AI messages a node produced."""
        found = update.get("messages") if isinstance(update, dict) else None
        for message in found if isinstance(found, list) else ():
            if not isinstance(message, AIMessage) or message.response_metadata.get(METERED):
                continue  # DeskworkChatModel replies were counted from their llm.completed event
            usage = message.usage_metadata
            if usage:
                tokens = {
                    "prompt_tokens": usage.get("input_tokens", 0),
                    "completion_tokens": usage.get("output_tokens", 0),
                    "total_tokens": usage.get("total_tokens", 0),
                }
                self.add_usage(tokens, message.response_metadata.get("model_name"))

    def add_usage(self, usage: Mapping[str, Any], model: str | None) -> None:
        """Count one model call: tokens and cost, in total and under ``by_model[model]``."""
        keys = ("prompt_tokens", "completion_tokens", "total_tokens", "cost")
        call = {"llm_calls": 1, **{k: usage[k] for k in keys if usage.get(k) is not None}}
        per_model = {"by_model": {model: call}} if model else {}
        latency = {"latency_ms": usage["latency_ms"]} if "latency_ms" in usage else {}
        self.metrics = sum_metrics(self.metrics, call, per_model, latency)


def _metered(emit: GraphEmitter, progress: _Progress) -> GraphEmitter:
    """``emit`` that also counts the usage of ``llm.completed`` events into the metrics."""

    def send(event_type: str, source: str, payload: dict[str, Any]) -> None:
        if event_type == "llm.completed":
            progress.add_usage(payload, payload.get("model"))
        emit(event_type, source, payload)

    return send


def _compiled(graph: Any) -> Pregel[Any, Any, Any, Any]:
    if isinstance(graph, Pregel):
        return graph
    if hasattr(graph, "compile") and hasattr(graph, "add_node"):
        raise ConfigurationError(
            "GraphRunner needs a compiled graph: pass builder.compile(), not the StateGraph"
        )
    raise ConfigurationError(
        f"GraphRunner needs a compiled LangGraph graph, got {type(graph).__name__}"
    )


def _limit(value: Any) -> int | None:
    if value is None or (is_integer(value) and value >= 1):
        return value
    raise ConfigurationError(f"GraphRunner recursion_limit must be a positive int, got {value!r}")


def _durability(value: Any) -> Durability:
    if value in ("async", "sync", "exit"):
        return value  # type: ignore[no-any-return]
    raise ConfigurationError(
        f"GraphRunner durability must be 'async', 'sync' or 'exit', got {value!r}"
    )


def _saves(graph: Pregel[Any, Any, Any, Any]) -> bool:
    return isinstance(graph.checkpointer, BaseCheckpointSaver)


def _keeps_checkpoints(store: RunStore) -> bool:
    return type(store).get_checkpoint_items is not RunStore.get_checkpoint_items


def _thread(config: RunConfig) -> RunnableConfig:
    return {"configurable": {"thread_id": config.run_id}}


def _resume_value(ids: list[str], decision: Any) -> Any:
    """``decision`` for one interrupt; for several, a map of interrupt id to answer."""
    if len(ids) <= 1:
        return decision
    if isinstance(decision, Mapping) and set(decision) <= set(ids):
        return dict(decision)
    return dict.fromkeys(ids, decision)


def _prompt(value: Any) -> str:
    if isinstance(value, Mapping):
        for key in ("prompt", "question", "message"):
            if isinstance(value.get(key), str):
                return str(value[key])
    return value if isinstance(value, str) else str(to_jsonable(value))


def _options(value: Any) -> list[str] | None:
    options = value.get("options") if isinstance(value, Mapping) else None
    return [str(option) for option in options] if isinstance(options, list) else None


def _keys(result: Any) -> list[str]:
    if isinstance(result, Mapping):
        return [str(key) for key in result]
    if isinstance(result, list):
        return [str(item[0]) for item in result if isinstance(item, tuple) and item]
    return []


def _messages(values: Any) -> list[Any]:
    found = values.get("messages") if isinstance(values, Mapping) else None
    if not isinstance(found, list):
        return []
    return [to_message(m) for m in found if isinstance(m, BaseMessage)]


def _data(values: Any) -> Any:
    """The final state's JSON-able parts (messages as plain role/content dicts)."""
    if not isinstance(values, Mapping):
        return to_jsonable(values)
    data: dict[str, Any] = {}
    for key, value in values.items():
        if key == "messages" and isinstance(value, list):
            data[key] = [
                m.model_dump(mode="json", exclude_defaults=True) for m in _messages(values)
            ]
        else:
            data[str(key)] = to_jsonable(value)
    return data


def _state(
    runner: GraphRunner, config: RunConfig, job: Job, status: Any, metrics: dict[str, Any]
) -> RunState:
    return RunState(
        run_id=config.run_id,
        status=status,
        runner_type=runner.runner_type,
        runner_name=runner.name,
        job=job.to_state(),
        metrics=metrics,
        payload={"thread_id": config.run_id},
    )


def _failed(config: RunConfig, errors: list[str]) -> Report:
    return Report(run_id=config.run_id, status="failed", errors=errors)
