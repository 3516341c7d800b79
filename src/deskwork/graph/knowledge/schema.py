"""The schema of a per-agent ``react_config.yaml``.

A config declares the actions a ReAct agent may take and the knowledge slots it may load::

    max_passes: 5
    actions:
      decide:
        description: Make a final routing decision
        parameters: {next_agent: The agent to route to}
        required: [next_agent]
    slots:
      routing_rules:
        description: Rules for routing requests
        modules: [slots/routing_rules.md]
        dependencies: []
        max_tokens: 2000

Every model is frozen and rejects unknown fields, so a typo fails at load time.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, model_validator

__all__ = [
    "DEFAULT_MAX_PASSES",
    "ReactActionSchema",
    "ReactConfigSchema",
    "ReactSlotSchema",
]

DEFAULT_MAX_PASSES: int = 5
"""Passes a ReAct loop may take when neither the config nor the executor says otherwise."""


class ReactActionSchema(BaseModel):
    """One action the model may choose."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    description: str
    """What the action does (shown to the model)."""
    parameters: dict[str, str] = Field(default_factory=dict)
    """Parameter name -> description."""
    required: list[str] = Field(default_factory=list)
    """Parameters the model must supply; each must be declared in ``parameters``."""

    @model_validator(mode="after")
    def _required_are_declared(self) -> ReactActionSchema:
        undeclared = [name for name in self.required if name not in self.parameters]
        if undeclared:
            raise ValueError(f"required parameters {undeclared} are not declared in 'parameters'")
        return self


class ReactSlotSchema(BaseModel):
    """One knowledge slot: markdown modules loaded together on demand."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    description: str
    """What the slot contains (shown to the model)."""
    modules: list[str] = Field(min_length=1)
    """Markdown files, relative to the agent's knowledge folder (e.g. ``slots/rules.md``)."""
    dependencies: list[str] = Field(default_factory=list)
    """Slots that are loaded before this one."""
    triggers: str = ""
    """A hint for when the model should load the slot."""
    max_tokens: int | None = Field(default=None, gt=0)
    """The most tokens this slot's content may have (``None``: no per-slot cap)."""


class ReactConfigSchema(BaseModel):
    """A whole ``react_config.yaml``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    max_passes: int = Field(default=DEFAULT_MAX_PASSES, gt=0)
    """Passes the ReAct loop may take before it gives up."""
    actions: dict[str, ReactActionSchema] = Field(default_factory=dict)
    """Action name -> definition."""
    slots: dict[str, ReactSlotSchema] = Field(default_factory=dict)
    """Slot name -> definition."""

    @model_validator(mode="after")
    def validate_slot_dependencies(self) -> ReactConfigSchema:
        """Reject unknown and self dependencies, then circular ones (depth-first search)."""
        for name, slot in self.slots.items():
            for dep in slot.dependencies:
                if dep == name:
                    raise ValueError(f"slot {name!r} depends on itself")
                if dep not in self.slots:
                    raise ValueError(f"slot {name!r} depends on unknown slot {dep!r}")
        cycle = _find_cycle({name: slot.dependencies for name, slot in self.slots.items()})
        if cycle:
            raise ValueError(f"circular slot dependency: {' -> '.join(cycle)}")
        return self


def _find_cycle(graph: dict[str, list[str]]) -> list[str] | None:
    """The first cycle found in ``graph`` as a closed path (``[a, b, a]``), or ``None``."""
    done: set[str] = set()
    for root in sorted(graph):
        if root in done:
            continue
        # Iterative DFS: each frame is (node, iterator over its dependencies).
        path: list[str] = [root]
        on_path: set[str] = {root}
        stack = [iter(graph[root])]
        while stack:
            dep = next(stack[-1], None)
            if dep is None:
                stack.pop()
                finished = path.pop()
                on_path.discard(finished)
                done.add(finished)
                continue
            if dep in on_path:
                return [*path[path.index(dep) :], dep]
            if dep not in done:
                path.append(dep)
                on_path.add(dep)
                stack.append(iter(graph[dep]))
    return None
