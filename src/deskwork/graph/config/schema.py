"""The configuration models of a supervised graph (what ``config.yaml`` holds).

Every model is frozen and rejects unknown fields, so a typo in a YAML key fails at load time::

    OrchestratorConfig
    ├── agents: list[AgentConfig]          (at least one; unique names)
    ├── topology: TopologyConfig           edges: list[TopologyEdgeConfig], default_return
    ├── context: ContextConfig             shared_slots: SlotConfig, tiered_slots: TieredSlotConfig
    ├── session: SessionConfig
    ├── knowledge: KnowledgeConfig
    ├── retry: RetryConfig
    └── timeout: TimeoutConfig

:class:`OrchestratorConfig` cross-checks the topology against the agents: every edge endpoint
and ``default_return`` must name a defined agent.
"""

from __future__ import annotations

import re
from typing import Literal, Self

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

__all__ = [
    "AGENT_NAME_PATTERN",
    "MAX_AGENT_NAME_LENGTH",
    "RESERVED_AGENT_NAMES",
    "AgentConfig",
    "ContextConfig",
    "KnowledgeConfig",
    "OrchestratorConfig",
    "RetryConfig",
    "SessionConfig",
    "SlotConfig",
    "TierConfig",
    "TieredSlotConfig",
    "TimeoutConfig",
    "TopologyConfig",
    "TopologyEdgeConfig",
    "check_agent_name",
]

AGENT_NAME_PATTERN = re.compile(r"[a-zA-Z][a-zA-Z0-9_-]*")
"""What an agent name looks like (matched in full)."""

MAX_AGENT_NAME_LENGTH = 64
"""The longest agent name allowed."""

RESERVED_AGENT_NAMES = frozenset({"__end__", "__start__"})
"""Node names LangGraph keeps for itself."""

_FROZEN = ConfigDict(frozen=True, extra="forbid")


def check_agent_name(name: str) -> str:
    """Return ``name`` if it is a valid agent name, else raise ``ValueError`` saying why."""
    if not name:
        raise ValueError("agent name must not be empty")
    if len(name) > MAX_AGENT_NAME_LENGTH:
        raise ValueError(
            f"agent name is {len(name)} characters long; the limit is {MAX_AGENT_NAME_LENGTH}"
        )
    if name in RESERVED_AGENT_NAMES:
        raise ValueError(f"agent name {name!r} is reserved by LangGraph")
    if AGENT_NAME_PATTERN.fullmatch(name) is None:
        raise ValueError(
            f"agent name {name!r} is invalid: it must start with a letter and contain only "
            "letters, digits, '_' and '-'"
        )
    return name


class AgentConfig(BaseModel):
    """One agent of the graph."""

    model_config = _FROZEN

    name: str
    """Unique node name: 1-64 characters, ``[a-zA-Z][a-zA-Z0-9_-]*``, not a LangGraph name."""
    type: Literal["supervisor", "session_manager", "custom"]
    """``supervisor`` and ``session_manager`` are the built-in agents; ``custom`` is your own."""
    description: str = Field(min_length=1)
    """What the agent does (the supervisor shows it when routing)."""
    model: str | None = None
    """An LLM model name that overrides the application's default for this agent."""
    knowledge_enabled: bool = False
    """Whether the agent uses the knowledge module system."""

    @field_validator("name")
    @classmethod
    def _valid_name(cls, name: str) -> str:
        return check_agent_name(name)


class TopologyEdgeConfig(BaseModel):
    """One allowed transition: ``from_agent`` may hand off to ``to_agent``."""

    model_config = _FROZEN

    from_agent: str
    """The agent that routes."""
    to_agent: str
    """The agent it may route to."""


class TopologyConfig(BaseModel):
    """Which agent may route to which."""

    model_config = _FROZEN

    edges: list[TopologyEdgeConfig] = Field(default_factory=list)
    """The allowed transitions."""
    default_return: str = "supervisor"
    """Where an invalid or empty routing decision goes instead."""


class SlotConfig(BaseModel):
    """Token budget of a slot pool."""

    model_config = _FROZEN

    max_tokens: int = Field(default=4096, gt=0)
    """Budget for the pool; slots are evicted beyond it."""


class TierConfig(BaseModel):
    """Token budget of one slot tier."""

    model_config = _FROZEN

    max_tokens: int = Field(default=4096, gt=0)
    """Budget for the tier."""


class TieredSlotConfig(BaseModel):
    """Budgets of the TURN, SESSION and LONG_TERM tiers."""

    model_config = _FROZEN

    turn: TierConfig = Field(default_factory=TierConfig)
    """Slots discarded at the end of a turn."""
    session: TierConfig = Field(default_factory=TierConfig)
    """Slots kept for the session."""
    long_term: TierConfig = Field(default_factory=TierConfig)
    """Slots kept across sessions, per user."""


class ContextConfig(BaseModel):
    """Context slot settings."""

    model_config = _FROZEN

    shared_slots: SlotConfig = Field(default_factory=SlotConfig)
    """Budget of the shared slot pool."""
    tiered_slots: TieredSlotConfig = Field(default_factory=TieredSlotConfig)
    """Budgets per tier."""
    eviction_strategy: Literal["lru", "fifo", "priority", "demotion"] = "lru"
    """How slots are chosen for eviction when a pool is over budget."""


class SessionConfig(BaseModel):
    """Session management settings."""

    model_config = _FROZEN

    enabled: bool = True
    """Whether the application keeps sessions."""


class KnowledgeConfig(BaseModel):
    """Knowledge module settings."""

    model_config = _FROZEN

    enabled: bool = False
    """Whether knowledge modules are used."""
    base_dir: str = "llm_resources"
    """Root directory holding one folder per agent."""
    max_total_tokens: int = Field(default=8192, gt=0)
    """Token budget for all knowledge loaded in one request."""


class RetryConfig(BaseModel):
    """Retries of failed LLM calls, with exponential backoff."""

    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)

    initial_interval: float = Field(default=0.5, gt=0)
    """Seconds before the first retry."""
    backoff_factor: float = Field(default=2.0, gt=0)
    """Exponential base multiplier of the wait."""
    max_interval: float = Field(default=128.0, gt=0)
    """The longest wait between two attempts, in seconds."""
    max_attempts: int = Field(default=3, ge=1)
    """Total attempts including the first (1 = no retry)."""
    jitter: bool = True
    """Randomise each wait (AWS "full jitter") so clients do not retry in lockstep."""


class TimeoutConfig(BaseModel):
    """Timeouts in seconds; ``None`` (the default) disables one.

    Set them at 2-3x the p99 latency you observe.
    """

    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)

    llm_call_seconds: float | None = Field(default=None, gt=0)
    """Limit of one LLM call."""
    file_io_seconds: float | None = Field(default=None, gt=0)
    """Limit of loading one knowledge file."""
    persistence_seconds: float | None = Field(default=None, gt=0)
    """Limit of one slot persistence call."""
    total_request_seconds: float | None = Field(default=None, gt=0)
    """Limit of a whole ReAct loop, all passes together."""


class OrchestratorConfig(BaseModel):
    """The whole configuration of a supervised graph."""

    model_config = _FROZEN

    agents: list[AgentConfig] = Field(min_length=1)
    """The agents; names are unique."""
    topology: TopologyConfig = Field(default_factory=TopologyConfig)
    """Allowed transitions between the agents."""
    context: ContextConfig = Field(default_factory=ContextConfig)
    """Context slot settings."""
    session: SessionConfig = Field(default_factory=SessionConfig)
    """Session settings."""
    knowledge: KnowledgeConfig = Field(default_factory=KnowledgeConfig)
    """Knowledge module settings."""
    retry: RetryConfig = Field(default_factory=RetryConfig)
    """LLM retry policy."""
    timeout: TimeoutConfig = Field(default_factory=TimeoutConfig)
    """Timeouts."""

    @model_validator(mode="after")
    def validate_topology_agents(self) -> Self:
        """Agent names are unique; the topology names only defined agents and no self-edges."""
        names = [agent.name for agent in self.agents]
        duplicates = sorted({name for name in names if names.count(name) > 1})
        if duplicates:
            raise ValueError(f"agents: duplicate agent name(s) {', '.join(duplicates)}")
        known = set(names)
        problems: list[str] = []
        for index, edge in enumerate(self.topology.edges):
            for field in ("from_agent", "to_agent"):
                name = getattr(edge, field)
                if name not in known:
                    problems.append(f"topology.edges[{index}].{field}: unknown agent {name!r}")
            if edge.from_agent == edge.to_agent:
                problems.append(
                    f"topology.edges[{index}]: {edge.from_agent!r} routes to itself "
                    "(an agent ends its turn with next_agent=None instead)"
                )
        if self.topology.default_return not in known:
            problems.append(
                f"topology.default_return: unknown agent {self.topology.default_return!r}"
            )
        if problems:
            raise ValueError(f"{'; '.join(problems)} (defined agents: {', '.join(sorted(known))})")
        return self
