"""What one ReAct pass produces, how a loop ends, and what an action handler looks like."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from pydantic import BaseModel, Field

if TYPE_CHECKING:
    from langchain_core.runnables import RunnableConfig

__all__ = [
    "ActionHandler",
    "ReactParsedResponse",
    "ReactStructuredResponse",
    "TerminalActionResult",
]


@dataclass(frozen=True, slots=True)
class ReactParsedResponse:
    """One model reply, reduced to a thought and an action with its parameters."""

    thought: str
    """The model's reasoning for this pass (may be empty)."""
    action: str
    """The name of the action to run."""
    action_params: dict[str, Any] = field(default_factory=dict)
    """The action's parameters (a JSON object)."""


class ReactStructuredResponse(BaseModel):
    """The reply schema asked of models that support ``with_structured_output()``."""

    thought: str = Field(description="Your reasoning for this step.")
    action: str = Field(description="The name of exactly one available action.")
    action_params: dict[str, Any] = Field(
        default_factory=dict, description="The action's parameters as a JSON object."
    )

    def to_parsed(self) -> ReactParsedResponse:
        """The same reply as a :class:`ReactParsedResponse`."""
        return ReactParsedResponse(self.thought, self.action.strip(), dict(self.action_params))


class TerminalActionResult(Exception):
    """Raised by an action handler to end the ReAct loop with ``result``.

    ``ReactExecutor.execute()`` returns ``result`` (plus ``_token_usage`` and, when knowledge was
    loaded, ``_loaded_slot_contents``).
    """

    def __init__(self, result: dict[str, Any]) -> None:
        if not isinstance(result, Mapping):
            raise TypeError(
                f"TerminalActionResult needs a dict result, got {type(result).__name__}"
            )
        super().__init__(f"terminal action result with keys {sorted(result)}")
        self.result = dict(result)


class ActionHandler(Protocol):
    """An async callable that runs one action.

    Returns ``(observation, state_updates)``: the observation is shown to the model on the next
    pass; ``state_updates`` are merged into the loop state (reserved ``_`` keys are refused).
    Raise :class:`TerminalActionResult` to end the loop. Any other exception becomes an
    observation and counts toward ``max_consecutive_errors``. Handlers written as
    ``async def handler(params, state)`` (without ``config``) are accepted too.
    """

    async def __call__(
        self,
        params: dict[str, Any],
        state: dict[str, Any],
        config: RunnableConfig | None = None,
    ) -> tuple[str, dict[str, Any]]: ...
