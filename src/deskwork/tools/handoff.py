"""Swarm handoff: a tool whose call pauses the worker so a workforce can switch agents."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, create_model

from deskwork.exceptions import ConfigurationError
from deskwork.tools.base import Tool

__all__ = ["HANDOFF_TOOL_NAME", "transfer_to_agent_tool"]

HANDOFF_TOOL_NAME = "transfer_to_agent"


def transfer_to_agent_tool(available_agents: Sequence[str] | None = None) -> Tool:
    """A ``transfer_to_agent`` tool; ``available_agents`` (if given) is the allowlist.

    The allowlist is encoded in the schema (an enum) and stored in
    ``tool.metadata["available_agents"]`` so swarm routing can enforce it.
    """
    agents = _agent_names(available_agents)
    name_field: Any = (str, Field(description="Name of the agent to hand off to"))
    model: type[BaseModel] = create_model(
        "TransferToAgentInput",
        __config__=ConfigDict(extra="forbid"),
        agent_name=name_field,
        context=(str, Field(default="", description="What the next agent needs to know")),
    )
    schema = model.model_json_schema()
    schema.pop("title", None)
    if agents:
        schema["properties"]["agent_name"]["enum"] = agents

    def transfer_to_agent(agent_name: str, context: str = "") -> str:
        return f"Transferring to {agent_name}"

    return Tool(
        name=HANDOFF_TOOL_NAME,
        description="Transfer the conversation to another agent"
        + (f" (one of: {', '.join(agents)})" if agents else ""),
        callable=transfer_to_agent,
        input_model=model,
        schema=schema,
        requires_handoff=True,
        metadata={"available_agents": agents},
        blocking=False,  # it only formats a string: no hand-off to a pool thread
    )


def _agent_names(available_agents: Sequence[str] | None) -> list[str] | None:
    if available_agents is None:
        return None
    if isinstance(available_agents, str):  # list("Writer") would allow "W", "r", ...
        raise ConfigurationError(
            f"available_agents must be a list of names, not {available_agents!r}"
        )
    agents = list(available_agents)
    for agent in agents:
        if not isinstance(agent, str) or not agent:
            raise ConfigurationError(f"available_agents holds {agent!r}, not an agent's name")
    return agents
