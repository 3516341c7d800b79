"""Configuration of a supervised graph: the schema, the YAML loader and the defaults."""

from __future__ import annotations

from deskwork.graph.config.defaults import get_default_config
from deskwork.graph.config.loader import (
    ConfigLoadError,
    ConfigValidationError,
    load_config,
    load_config_from_dict,
    load_config_from_string,
)
from deskwork.graph.config.schema import (
    AgentConfig,
    ContextConfig,
    KnowledgeConfig,
    OrchestratorConfig,
    RetryConfig,
    SessionConfig,
    SlotConfig,
    TierConfig,
    TieredSlotConfig,
    TimeoutConfig,
    TopologyConfig,
    TopologyEdgeConfig,
)

__all__ = [
    "AgentConfig",
    "ConfigLoadError",
    "ConfigValidationError",
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
    "get_default_config",
    "load_config",
    "load_config_from_dict",
    "load_config_from_string",
]
