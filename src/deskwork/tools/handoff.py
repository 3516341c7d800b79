"""Swarm handoff: a tool whose call pauses the worker so a workforce can switch agents.

Only a swarm answers that pause: outside one (a worker given the tool directly, a workforce
in another mode) the call fails with :data:`NO_SWARM`, which the model reads, and the run
goes on. A tool of your own with ``requires_handoff=True`` pauses any run, for whatever
answers it (``desk.resume(report, ToolResult(...))``).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, create_model

from deskwork.exceptions import ConfigurationError
from deskwork.tools.base import Tool

__all__ = [
    "HANDOFF_TOOL_NAME",
    "NO_SWARM",
    "SWARM_HANDOFF",
    "handoff_unanswered",
    "swarm_handoffs",
    "transfer_to_agent_tool",
]

HANDOFF_TOOL_NAME = "transfer_to_agent"
SWARM_HANDOFF = "swarm_handoff"
"""The ``Tool.metadata`` key that marks the swarm's handoff tool (``transfer_to_agent_tool``)."""
NO_SWARM = (
    "no other agent can take over: this run is not a swarm (a Workforce in swarm mode), so"
    " nothing answers a handoff; go on with the task yourself"
)
"""The error of a swarm handoff called where no swarm runs."""
_SWARM_RUN: ContextVar[str | None] = ContextVar("deskwork_swarm_run", default=None)


@contextmanager
def swarm_handoffs(run_id: str) -> Iterator[None]:
    """While it is open, a swarm answers the handoffs of run ``run_id``: a call of
    :func:`transfer_to_agent_tool`'s tool there pauses the worker for it."""
    token = _SWARM_RUN.set(run_id)
    try:
        yield
    finally:
        _SWARM_RUN.reset(token)


def handoff_unanswered(tool: Tool, run_id: str) -> bool:
    """Whether a call of ``tool`` in run ``run_id`` is a swarm handoff that no swarm answers
    (a run started elsewhere than by a swarm: a child run of a spawn tool too)."""
    return bool(tool.metadata.get(SWARM_HANDOFF)) and _SWARM_RUN.get() != run_id


def transfer_to_agent_tool(available_agents: Sequence[str] | None = None) -> Tool:
    """A ``transfer_to_agent`` tool; ``available_agents`` (if given) is the allowlist.

    The allowlist is encoded in the schema (an enum) and stored in
    ``tool.metadata["available_agents"]`` so swarm routing can enforce it. Its call pauses
    the worker for a swarm (a ``Workforce`` in swarm mode) to switch agents; where no swarm
    runs, the call fails (:data:`NO_SWARM`) and the model goes on.
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
        metadata={"available_agents": agents, SWARM_HANDOFF: True},
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
