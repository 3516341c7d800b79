"""Topology-checked routing and the LangGraph graph builders.

``from deskwork.graph.routing import TopologyResolver, build_hub_spoke_graph`` (names load on
first use).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from deskwork.graph.routing.graph_builder import (
        build_conditional_edge,
        build_hub_spoke_graph,
        build_topology_graph,
    )
    from deskwork.graph.routing.topology import TopologyResolver

_WHERE = {
    "TopologyResolver": "topology",
    "build_conditional_edge": "graph_builder",
    "build_hub_spoke_graph": "graph_builder",
    "build_topology_graph": "graph_builder",
}

__all__ = [
    "TopologyResolver",
    "build_conditional_edge",
    "build_hub_spoke_graph",
    "build_topology_graph",
]


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)
