"""BaseAgent.invoke names a wrong ``process()``/``after_invoke`` result instead of crashing on it.

A ``process()`` that forgets its ``return`` (``None``), returns text or a dict, or builds an
``AgentResponse`` with a field of the wrong type used to fail while the state update was built:
a raw ``AttributeError``/``TypeError``/pydantic error, with no ``graph.agent.failed`` event and no
``on_error`` hook. Now it is an ``AgentProcessError`` naming the agent and the culprit, reported
like any other failure of the agent; a desk run of the graph ends failed with that message.
"""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.runnables import RunnableConfig

from deskwork import Desk
from deskwork.graph import TopologyResolver, load_config_from_dict
from deskwork.graph._events import graph_emitter
from deskwork.graph.agents.base import BaseAgent
from deskwork.graph.agents.middleware import AgentMiddleware
from deskwork.graph.config.schema import AgentConfig
from deskwork.graph.core.exceptions import AgentProcessError
from deskwork.graph.core.state import OrchestratorState
from deskwork.graph.core.types import AgentResponse
from deskwork.graph.routing.graph_builder import build_hub_spoke_graph
from deskwork.graph.testing import make_test_state
from deskwork.store.memory import InMemoryRunStore


class Returns(BaseAgent):
    """An agent whose ``process()`` returns ``result`` as it is."""

    def __init__(self, result: Any, name: str = "worker") -> None:
        super().__init__(AgentConfig(name=name, type="custom", description=name))
        self.result = result

    async def process(
        self, state: OrchestratorState, config: RunnableConfig | None = None
    ) -> AgentResponse:
        return self.result  # type: ignore[no-any-return]  # deliberately anything


class Spy(AgentMiddleware):
    def __init__(self, after: Any = None) -> None:
        self.after = after
        self.errors: list[Exception] = []

    async def after_invoke(
        self,
        agent_name: str,
        state: OrchestratorState,
        response: AgentResponse,
        config: RunnableConfig | None = None,
    ) -> AgentResponse:
        return response if self.after is None else self.after  # type: ignore[no-any-return]

    async def on_error(
        self,
        agent_name: str,
        state: OrchestratorState,
        error: Exception,
        config: RunnableConfig | None = None,
    ) -> None:
        self.errors.append(error)


def _response(**fields: Any) -> AgentResponse:
    return AgentResponse(**{"agent_name": "worker", "content": "ok", **fields})


WRONG = [
    (None, "process() returned NoneType, not an AgentResponse"),
    ("hello", "process() returned str, not an AgentResponse"),
    ({"content": "hi"}, "process() returned dict, not an AgentResponse"),
    (_response(content=None), "whose content is NoneType, not a str"),
    (_response(content=42), "whose content is int, not a str"),
    (_response(next_agent=3), "whose next_agent is int, not a str or None"),
    (_response(slots_update=None), "whose slots_update is NoneType, not a mapping"),
    (_response(slots_update=[("a", 1)]), "whose slots_update is list, not a mapping"),
    (_response(slots_tier=None), "whose slots_tier is NoneType, not a mapping"),
    (_response(token_usage="lots"), "whose token_usage is str, not a mapping or None"),
]


@pytest.mark.parametrize(("result", "message"), WRONG)
async def test_a_wrong_result_is_an_agent_process_error_reported_like_a_failure(
    result: Any, message: str
) -> None:
    spy = Spy()
    agent = Returns(result)
    agent.middleware = (spy,)
    events: list[tuple[str, str, dict[str, Any]]] = []
    with (
        graph_emitter(lambda t, s, p: events.append((t, s, p))),
        pytest.raises(AgentProcessError) as caught,
    ):
        await agent.invoke(make_test_state())
    assert message in str(caught.value)
    assert str(caught.value).startswith("Agent 'worker': process() returned")
    assert caught.value.agent_name == "worker"
    assert spy.errors == [caught.value]
    failed = [p for t, _, p in events if t == "graph.agent.failed"]
    assert [(p["error_type"], message in p["error"]) for p in failed] == [
        ("AgentProcessError", True)
    ]


async def test_a_middleware_returning_no_response_is_named() -> None:
    agent = Returns(_response())
    agent.middleware = (Spy(after="not a response"),)
    with pytest.raises(AgentProcessError, match=r"Spy\.after_invoke returned str"):
        await agent.invoke(make_test_state())


async def test_a_desk_run_of_the_graph_fails_with_the_message() -> None:
    config = load_config_from_dict(
        {
            "agents": [
                {"name": "supervisor", "type": "supervisor", "description": "routes"},
                {"name": "worker", "type": "custom", "description": "works"},
            ],
            "topology": {
                "edges": [
                    {"from_agent": "supervisor", "to_agent": "worker"},
                    {"from_agent": "worker", "to_agent": "supervisor"},
                ],
                "default_return": "supervisor",
            },
        }
    )
    supervisor = Returns(_response(agent_name="supervisor", next_agent="worker"), "supervisor")
    graph = build_hub_spoke_graph(
        supervisor, {"worker": Returns(None)}, TopologyResolver(config.topology)
    )
    desk = Desk(run_store=InMemoryRunStore())
    try:
        report = await desk.arun(graph, "hello")
        events = desk.run_store.get_events(report.run_id)
        run = desk.run_store.get_run(report.run_id)
    finally:
        desk.close()
    expected = (
        "AgentProcessError: Agent 'worker': process() returned NoneType, not an AgentResponse"
    )
    assert report.status == "failed"
    assert report.errors == [expected]
    assert run is not None and run.status == "failed"
    assert "graph.agent.failed" in [e.type for e in events]
