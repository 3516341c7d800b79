"""A tool invocation requested by the model, and the result of running it."""

from __future__ import annotations

from typing import Any, Self

from pydantic import ConfigDict, Field, model_validator

from deskwork.core._model import DeskworkModel

__all__ = ["ToolCall", "ToolResult"]


class ToolResult(DeskworkModel):
    """What a tool returned, or why it did not.

    A tool may return a ``ToolResult`` itself to control ``content``, ``data`` and ``error``.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    content: str | None = None
    """Text returned to the model."""
    data: Any = None
    """Structured data (validated against ``output_type`` when the tool declares one)."""
    error: str | None = None
    """Error message when execution failed; the model sees it as the tool's answer."""
    timed_out: bool = False
    cancelled: bool = False
    exception_type: str | None = None
    """Class name of the exception that caused ``error``, if any."""
    original_exception: BaseException | None = Field(default=None, exclude=True, repr=False)
    """The exception itself (in-process only; never stored). Given without
    ``exception_type``, it names that: ``ToolResult(error=..., original_exception=exc)``
    has ``exception_type`` ``type(exc).__name__``."""

    @model_validator(mode="after")
    def _named_exception(self) -> Self:
        """``exception_type`` from ``original_exception`` when only the exception was given
        (a tool's own failed result: the ``tool.failed`` event and the run's metrics read
        the name)."""
        if self.exception_type is None and self.original_exception is not None:
            self.exception_type = type(self.original_exception).__name__
        return self

    def model_text(self) -> str:
        """The text the model sees for this result."""
        if self.error is not None:
            return f"Error: {self.error}"
        if self.content is not None:
            return self.content
        if self.data is not None:
            import json  # with the first call that needs it, not with deskwork

            return json.dumps(self.data, default=str)
        return ""


class ToolCall(DeskworkModel):
    """One tool call. ``error`` is set when the model's payload could not be parsed."""

    id: str
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    result: ToolResult | None = None
    error: str | None = None
    """Parse error for malformed arguments; the raw text is kept in ``raw_arguments``."""
    raw_arguments: str | None = None

    def to_provider(self) -> dict[str, Any]:
        """Render the call in the OpenAI chat format."""
        import json  # with the first call that needs it, not with deskwork

        arguments = self.raw_arguments if self.error else json.dumps(self.arguments)
        return {
            "id": self.id,
            "type": "function",
            "function": {"name": self.name, "arguments": arguments or "{}"},
        }
