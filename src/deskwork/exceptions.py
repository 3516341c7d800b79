"""The deskwork exception hierarchy.

::

    DeskworkError (base)
    ├── ContextLimitError
    ├── ToolExecutionError
    ├── ToolValidationError
    ├── ToolTimeoutError
    ├── EventHandlerError
    ├── RunnerNotRegisteredError
    ├── StreamingUnsupportedError
    ├── EventLoopRunningError      (sync wrapper called inside a running loop)
    ├── MissingExtraError          (an optional dependency is not installed)
    ├── StoreError                 (a store's database is damaged, unreadable or too new)
    ├── RunNotRunningError         (a store refused a write of a run that is not running)
    └── ConfigurationError         (invalid configuration given by the user)

Run failures never surface as exceptions from ``Desk.run``: they end as a ``failed``
report with ``errors``. These classes are raised by lower-level APIs and by misuse.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "ConfigurationError",
    "ContextLimitError",
    "DeskworkError",
    "EventHandlerError",
    "EventLoopRunningError",
    "MissingExtraError",
    "RunNotRunningError",
    "RunnerNotRegisteredError",
    "StoreError",
    "StreamingUnsupportedError",
    "ToolExecutionError",
    "ToolTimeoutError",
    "ToolValidationError",
]


class DeskworkError(Exception):
    """Base class of every deskwork error."""

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickle as it is (``args`` and attributes), not by calling ``__init__`` again: a
        subclass whose ``__init__`` takes other arguments than its message (``run_id``, a
        handler's error) failed to unpickle, or rebuilt its message around the message, when
        it crossed a process (a durable step's record, a process-isolated tool)."""
        return (_rebuilt, (type(self), self.args), self.__dict__)


def _rebuilt(cls: type[DeskworkError], args: tuple[Any, ...]) -> DeskworkError:
    error = cls.__new__(cls)
    error.args = args
    return error


class ContextLimitError(DeskworkError):
    """The model's context window was exceeded."""

    def __init__(
        self,
        message: str,
        *,
        model: str | None = None,
        model_registered: bool = True,
        summary_attempted: bool = False,
    ) -> None:
        super().__init__(message)
        self.model = model
        self.model_registered = model_registered
        self.summary_attempted = summary_attempted


class ToolExecutionError(DeskworkError):
    """A tool failed while executing."""

    def __init__(
        self,
        message: str,
        *,
        tool_name: str | None = None,
        original_exception: BaseException | None = None,
    ) -> None:
        super().__init__(message)
        self.tool_name = tool_name
        self.original_exception = original_exception


class ToolValidationError(DeskworkError):
    """Tool arguments failed validation against the tool's input model."""

    def __init__(self, message: str, *, tool_name: str | None = None) -> None:
        super().__init__(message)
        self.tool_name = tool_name


class ToolTimeoutError(DeskworkError):
    """A tool did not finish within its timeout."""

    def __init__(self, message: str, *, tool_name: str | None = None) -> None:
        super().__init__(message)
        self.tool_name = tool_name


class EventHandlerError(DeskworkError):
    """An event handler raised. Wraps the original exception (``handler_error``, as it was
    raised); the message describes it with secrets redacted, as the log line of the same
    failure does."""

    def __init__(self, event_type: str, handler_error: BaseException) -> None:
        from deskwork.core.redact import describe_exception  # (it imports pydantic)

        super().__init__(f"handler for {event_type!r} failed: {describe_exception(handler_error)}")
        self.event_type = event_type
        self.handler_error = handler_error


class RunnerNotRegisteredError(DeskworkError):
    """A run names a runner that this desk does not know."""


class StreamingUnsupportedError(DeskworkError):
    """The adapter cannot stream for this request."""


class EventLoopRunningError(DeskworkError, RuntimeError):
    """A sync wrapper (``run``/``resume``) was called inside a running event loop."""


class MissingExtraError(DeskworkError, ImportError):
    """An optional dependency is missing; the message names the extra to install."""

    def __init__(self, package: str, extra: str) -> None:
        super().__init__(
            f"{package} is not installed. Install it with: pip install 'deskwork[{extra}]'"
        )
        self.package = package
        self.extra = extra


class ConfigurationError(DeskworkError, ValueError):
    """The user supplied an invalid configuration."""


class StoreError(DeskworkError):
    """A store cannot be used: its database is damaged, unreadable, or from a newer deskwork.

    The message names the database and says what to do. Stores never overwrite, truncate
    or drop a damaged database file.
    """

    def __init__(self, message: str, *, location: str | None = None) -> None:
        super().__init__(message)
        self.location = location
        """The database file or (password-free) URL the error is about."""


class RunNotRunningError(DeskworkError):
    """A run store refused a write of a run whose record is not ``running`` (it ended, maybe
    in another process: a cancel): nothing of it was stored (see :class:`RunStore`).

    The desk stops the run when its store refuses one of its events."""

    def __init__(self, run_id: str) -> None:
        super().__init__(f"run {run_id} is not running: its store refused the write")
        self.run_id = run_id
        """The run whose write was refused."""
