"""Action handlers and helpers shared by the built-in ReAct agents."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from deskwork.graph.react.models import TerminalActionResult

if TYPE_CHECKING:
    from langchain_core.runnables import RunnableConfig

    from deskwork.graph.core.state import OrchestratorState

__all__ = ["decide_handler", "last_user_text", "respond_handler"]


def _terminal(params: dict[str, Any]) -> TerminalActionResult:
    next_agent = params.get("next_agent")
    return TerminalActionResult(
        {
            "next_agent": None if next_agent in (None, "") else str(next_agent),
            "content": str(params.get("content") or ""),
        }
    )


async def decide_handler(
    params: dict[str, Any], state: dict[str, Any], config: RunnableConfig | None = None
) -> tuple[str, dict[str, Any]]:
    """The supervisor's terminal ``decide`` action: end with ``next_agent`` and ``content``."""
    raise _terminal(params)


async def respond_handler(
    params: dict[str, Any], state: dict[str, Any], config: RunnableConfig | None = None
) -> tuple[str, dict[str, Any]]:
    """A worker's terminal ``respond`` action: end with ``content`` (and ``next_agent``)."""
    raise _terminal(params)


def last_user_text(state: OrchestratorState) -> str:
    """The text of the last human message (else of the last message; ``""`` if none)."""
    messages = state.get("messages", [])
    for message in reversed(messages):
        if message.type == "human":
            return str(message.text)
    return str(messages[-1].content) if messages else ""
