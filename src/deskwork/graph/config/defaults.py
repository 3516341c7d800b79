"""The smallest working configuration: one supervisor and nothing else."""

from __future__ import annotations

from deskwork.graph.config.schema import AgentConfig, OrchestratorConfig

__all__ = ["get_default_config"]


def get_default_config() -> OrchestratorConfig:
    """A configuration with a single ``supervisor`` agent and every section at its default."""
    return OrchestratorConfig(
        agents=[
            AgentConfig(
                name="supervisor",
                type="supervisor",
                description="Routes requests to the appropriate agent",
            )
        ]
    )
