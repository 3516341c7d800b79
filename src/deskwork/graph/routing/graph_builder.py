"""Wire agents into LangGraph ``StateGraph``s without the boilerplate.

- :func:`build_conditional_edge` — the routing function for ``add_conditional_edges``: END when the
  agent terminated (``current_agent`` is its own name), the requested agent when the topology allows
  it, ``default_return`` otherwise.
- :func:`build_hub_spoke_graph` — the supervisor routes to workers; every worker returns to it.
- :func:`build_topology_graph` — every agent routes along exactly the topology's edges (mesh).

Every routing decision is logged (``routing_decision``) and recorded in the desk run, if any, as a
``graph.route`` event with ``from``, ``requested``, ``chosen``, ``fell_back`` and ``by="edge"``
(a supervisor also records its own decision, ``by="supervisor"``, before the edge follows it).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping
from typing import Any

from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph

from deskwork.graph._events import emit_graph_event
from deskwork.graph.core.exceptions import ConfigurationError
from deskwork.graph.core.logging_context import get_graph_logger
from deskwork.graph.core.state import OrchestratorState
from deskwork.graph.routing.topology import TopologyResolver

__all__ = ["build_conditional_edge", "build_hub_spoke_graph", "build_topology_graph"]

logger = get_graph_logger("deskwork.graph.routing")

RoutingFunction = Callable[[OrchestratorState], str]


def build_conditional_edge(topology: TopologyResolver, from_agent_name: str) -> RoutingFunction:
    """The routing function for ``StateGraph.add_conditional_edges(from_agent_name, ...)``.

    Returns ``END`` when ``state["current_agent"] == from_agent_name`` (the agent terminated),
    the requested agent when ``topology`` allows the hop, and ``topology.default_return`` for an
    empty or disallowed target (``END`` if that would send the agent back to itself).
    """
    return _router(topology, from_agent_name, nodes=None)


def build_hub_spoke_graph(
    supervisor: Any,
    agents: Mapping[str, Any],
    topology: TopologyResolver,
    *,
    state_schema: type[Any] = OrchestratorState,
) -> CompiledStateGraph[Any, Any, Any, Any]:
    """A compiled graph: ``supervisor`` routes to ``agents``; each agent returns to it.

    ``supervisor`` and the values of ``agents`` are :class:`BaseAgent`\\s (their ``invoke`` is the
    node) or plain node callables; dict keys are node names and must equal each agent's name.
    The supervisor's routes are checked against ``topology``; it is the entry point.
    """
    supervisor_name = _node_name(supervisor, None)
    if supervisor_name in agents:
        raise ConfigurationError(f"agents must not contain the supervisor {supervisor_name!r}")
    nodes = {supervisor_name: supervisor, **_checked_agents(agents)}
    builder = _new_builder(state_schema, nodes, topology)
    builder.add_edge(START, supervisor_name)
    _add_router(builder, topology, supervisor_name, set(nodes))
    for name in agents:
        builder.add_edge(name, supervisor_name)
    return builder.compile()


def build_topology_graph(
    agents: Mapping[str, Any],
    topology: TopologyResolver,
    *,
    entry_point: str,
    state_schema: type[Any] = OrchestratorState,
) -> CompiledStateGraph[Any, Any, Any, Any]:
    """A compiled graph whose edges are exactly ``topology``'s (mesh, hybrid, hub-spoke).

    Every agent gets a conditional edge to the targets the topology allows it (plus END);
    the graph starts at ``entry_point``.
    """
    nodes = _checked_agents(agents)
    if entry_point not in nodes:
        raise ConfigurationError(
            f"entry_point {entry_point!r} is not one of the agents {sorted(nodes)}"
        )
    builder = _new_builder(state_schema, nodes, topology)
    builder.add_edge(START, entry_point)
    for name in nodes:
        _add_router(builder, topology, name, set(nodes))
    return builder.compile()


def _router(topology: TopologyResolver, from_agent: str, nodes: set[str] | None) -> RoutingFunction:
    def route(state: OrchestratorState) -> str:
        requested = state.get("current_agent") or ""
        if requested == from_agent:
            return END
        allowed = [
            t for t in topology.get_allowed_targets(from_agent) if nodes is None or t in nodes
        ]
        chosen = requested if requested in allowed else topology.default_return
        if chosen == from_agent or (nodes is not None and chosen not in nodes):
            chosen = END
        _record_route(from_agent, requested, chosen, allowed)
        return chosen

    route.__name__ = f"route_from_{from_agent}"
    return route


def _record_route(from_agent: str, requested: str, chosen: str, allowed: list[str]) -> None:
    fell_back = chosen != requested
    log = logger.warning if fell_back else logger.debug
    log(
        "routing_decision",
        agent_name=from_agent,
        next_agent=chosen,
        requested=requested,
        allowed_targets=allowed,
        fell_back=fell_back,
    )
    emit_graph_event(
        "graph.route",
        from_agent,
        {
            "from": from_agent,
            "requested": requested,
            "chosen": chosen,
            "fell_back": fell_back,
            "by": "edge",
        },
    )


def _add_router(
    builder: StateGraph[Any, Any, Any, Any],
    topology: TopologyResolver,
    from_agent: str,
    nodes: set[str],
) -> None:
    allowed = topology.get_allowed_targets(from_agent)
    path_map: dict[Hashable, str] = {t: t for t in allowed if t in nodes and t != from_agent}
    path_map[END] = END
    builder.add_conditional_edges(from_agent, _router(topology, from_agent, nodes), path_map)


def _new_builder(
    state_schema: type[Any], nodes: Mapping[str, Any], topology: TopologyResolver
) -> StateGraph[Any, Any, Any, Any]:
    for warning in topology.validate(nodes):
        logger.warning("topology_warning", warning=warning, nodes=sorted(nodes))
    builder: StateGraph[Any, Any, Any, Any] = StateGraph(state_schema)
    for name, agent in nodes.items():
        builder.add_node(name, _node_callable(agent))
    return builder


def _checked_agents(agents: Mapping[str, Any]) -> dict[str, Any]:
    if not agents:
        raise ConfigurationError("a graph needs at least one agent")
    for key, agent in agents.items():
        _node_name(agent, key)
    return dict(agents)


def _node_name(agent: Any, key: str | None) -> str:
    name = getattr(agent, "name", None)
    if not isinstance(name, str) or not name:
        if key is None:
            raise ConfigurationError(f"{agent!r} has no name to use as its node name")
        return key
    if key is not None and key != name:
        raise ConfigurationError(
            f"agent {name!r} is registered under node name {key!r}; the names must match "
            "(an agent ends the turn by setting current_agent to its own name)"
        )
    return name


def _node_callable(agent: Any) -> Any:
    invoke = getattr(agent, "invoke", None)
    if callable(invoke) and hasattr(agent, "process"):
        return invoke
    if callable(agent):
        return agent
    raise ConfigurationError(f"{agent!r} is neither an agent nor a node callable")
