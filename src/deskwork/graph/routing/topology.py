"""Which agent may hand off to which: the directed edge graph of a supervised graph.

Agents choose ``next_agent`` at run time; :class:`TopologyResolver` decides whether that choice is
legal. ``default_return`` (usually the supervisor) is always a legal target, so an agent can always
give control back.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable

from deskwork.graph.config.schema import TopologyConfig
from deskwork.graph.core.exceptions import ConfigurationError

__all__ = ["TopologyResolver"]


class TopologyResolver:
    """Validates routing decisions against the edges of a :class:`TopologyConfig`.

    Example::

        topology = TopologyResolver(config=config.topology)
        topology.is_allowed("supervisor", "greeter")   # True if the edge exists
        topology.get_allowed_targets("supervisor")     # sorted, always includes default_return
        topology.validate(["supervisor", "greeter"])   # warnings, e.g. unreachable agents

    Raises:
        ConfigurationError: ``config`` is not a :class:`TopologyConfig`.
    """

    def __init__(self, config: TopologyConfig) -> None:
        if not isinstance(config, TopologyConfig):
            raise ConfigurationError(
                "TopologyResolver needs a TopologyConfig (the topology of a loaded config:"
                f" TopologyResolver(config=config.topology)), not {type(config).__name__}"
            )
        self._config = config
        self._targets: dict[str, set[str]] = {}
        for edge in config.edges:
            self._targets.setdefault(edge.from_agent, set()).add(edge.to_agent)

    @property
    def config(self) -> TopologyConfig:
        """The topology this resolver enforces."""
        return self._config

    @property
    def default_return(self) -> str:
        """Where an invalid or missing route falls back to (usually the supervisor)."""
        return self._config.default_return

    @property
    def agent_names(self) -> list[str]:
        """Every agent named by an edge or by ``default_return``, sorted."""
        names = {self.default_return}
        for source, targets in self._targets.items():
            names.add(source)
            names.update(targets)
        return sorted(names)

    def get_allowed_targets(self, from_agent: str) -> list[str]:
        """The agents ``from_agent`` may route to, sorted; ``default_return`` is always one."""
        return sorted(self._targets.get(from_agent, set()) | {self.default_return})

    def is_allowed(self, from_agent: str, to_agent: str) -> bool:
        """Whether ``from_agent`` may hand off to ``to_agent`` (an edge, or ``default_return``)."""
        return to_agent == self.default_return or to_agent in self._targets.get(from_agent, ())

    def resolve(self, from_agent: str, requested: str | None) -> str:
        """``requested`` when it is allowed, otherwise ``default_return``."""
        if requested and self.is_allowed(from_agent, requested):
            return requested
        return self.default_return

    def validate(self, agent_names: Iterable[str]) -> list[str]:
        """Human-readable warnings about ``agent_names`` against this topology.

        Reports edges naming unknown agents, a ``default_return`` that is not an agent, and agents
        that cannot be reached from ``default_return`` by following edges. An empty list means the
        topology is consistent with the agents.
        """
        names = list(dict.fromkeys(agent_names))
        known = set(names)
        warnings: list[str] = []
        if self.default_return not in known:
            warnings.append(f"default_return {self.default_return!r} is not a known agent")
        for source in sorted(self._targets):
            for target in sorted(self._targets[source]):
                for end in (source, target):
                    if end not in known:
                        warnings.append(
                            f"edge {source!r} -> {target!r} names unknown agent {end!r}"
                        )
        reachable = self._reachable_from(self.default_return)
        for name in names:
            if name not in reachable:
                warnings.append(
                    f"agent {name!r} is unreachable from {self.default_return!r} (no inbound path)"
                )
        return warnings

    def _reachable_from(self, start: str) -> set[str]:
        seen = {start}
        queue = deque([start])
        while queue:
            for target in self._targets.get(queue.popleft(), ()):
                if target not in seen:
                    seen.add(target)
                    queue.append(target)
        return seen

    def __repr__(self) -> str:
        edges = sum(len(t) for t in self._targets.values())
        return f"TopologyResolver(edges={edges}, default_return={self.default_return!r})"
