"""TopologyResolver: which hops are legal, where bad routes fall back, what validate() reports."""

from __future__ import annotations

import pytest

from deskwork.graph.config.schema import TopologyConfig, TopologyEdgeConfig
from deskwork.graph.core.exceptions import ConfigurationError
from deskwork.graph.routing.topology import TopologyResolver


def _topology(*edges: tuple[str, str], default_return: str = "supervisor") -> TopologyResolver:
    return TopologyResolver(
        config=TopologyConfig(
            edges=[TopologyEdgeConfig(from_agent=a, to_agent=b) for a, b in edges],
            default_return=default_return,
        )
    )


MESH = _topology(
    ("supervisor", "billing"),
    ("supervisor", "support"),
    ("billing", "support"),
    ("billing", "supervisor"),
    ("support", "supervisor"),
)


def test_allowed_targets_are_sorted_and_always_include_default_return() -> None:
    assert MESH.get_allowed_targets("supervisor") == ["billing", "supervisor", "support"]
    assert MESH.get_allowed_targets("billing") == ["supervisor", "support"]
    # an agent with no outgoing edge can still give control back
    assert MESH.get_allowed_targets("stranger") == ["supervisor"]


def test_is_allowed_follows_edges_in_their_direction() -> None:
    assert MESH.is_allowed("billing", "support")
    assert not MESH.is_allowed("support", "billing")
    assert MESH.is_allowed("support", "supervisor")
    assert not MESH.is_allowed("supervisor", "nobody")


def test_resolve_falls_back_to_default_return_for_disallowed_or_empty_routes() -> None:
    assert MESH.resolve("billing", "support") == "support"
    assert MESH.resolve("support", "billing") == "supervisor"
    assert MESH.resolve("support", None) == "supervisor"
    assert MESH.resolve("support", "") == "supervisor"


def test_default_return_is_configurable() -> None:
    topo = _topology(("hub", "a"), ("a", "hub"), default_return="hub")
    assert topo.default_return == "hub"
    assert topo.get_allowed_targets("a") == ["hub"]
    assert topo.agent_names == ["a", "hub"]


def test_validate_is_empty_for_a_consistent_topology() -> None:
    assert MESH.validate(["supervisor", "billing", "support"]) == []


def test_validate_reports_unreachable_and_unknown_agents() -> None:
    warnings = MESH.validate(["supervisor", "billing", "support", "orphan"])
    assert any("'orphan'" in w and "unreachable" in w for w in warnings)
    warnings = MESH.validate(["supervisor", "billing"])
    assert any("unknown agent 'support'" in w for w in warnings)
    warnings = _topology(("a", "b"), default_return="boss").validate(["a", "b"])
    assert any("default_return 'boss'" in w for w in warnings)


def test_repr_names_edges_and_default_return() -> None:
    assert repr(MESH) == "TopologyResolver(edges=5, default_return='supervisor')"


def test_routing_package_exports_load_lazily() -> None:
    import deskwork.graph.agents as agents
    import deskwork.graph.routing as routing

    assert routing.TopologyResolver is TopologyResolver
    assert sorted(routing.__all__) == routing.__all__
    assert all(getattr(routing, name) for name in routing.__all__)
    assert all(getattr(agents, name) for name in agents.__all__)


@pytest.mark.parametrize("config", [None, {"edges": []}])
def test_a_resolver_without_a_topology_config_is_refused_when_built(config: object) -> None:
    with pytest.raises(ConfigurationError) as raised:  # was: AttributeError on .edges
        TopologyResolver(config)  # type: ignore[arg-type]
    assert str(raised.value) == (
        "TopologyResolver needs a TopologyConfig (the topology of a loaded config:"
        f" TopologyResolver(config=config.topology)), not {type(config).__name__}"
    )
