"""One owner for the long-lived parts of a graph application, closed in a safe order."""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from types import TracebackType
from typing import Any, Protocol, Self

from deskwork.graph.core.logging_context import get_graph_logger

__all__ = ["OrchestratorContext"]

_log = get_graph_logger("deskwork.graph")


class _Closeable(Protocol):
    async def close(self) -> None: ...


class OrchestratorContext:
    """Holds the slot manager, session manager, template managers, rate limiter and extras.

    ``close()`` (or leaving ``async with ctx:``) tears them down in this order: extras,
    template managers, rate limiter, slot manager, session manager — users of a component
    first, the stores they write to last. A component whose ``close()`` fails is logged
    (``orchestrator_context_close_failed``) and the others are still closed; ``close()``
    itself does not raise. Extras may offer ``aclose()`` or ``close()``, sync or async.
    """

    def __init__(
        self,
        *,
        slot_manager: _Closeable | None = None,
        session_manager: _Closeable | None = None,
        template_managers: Sequence[_Closeable] | None = None,
        rate_limiter: _Closeable | None = None,
        extras: Sequence[Any] | None = None,
    ) -> None:
        self.slot_manager = slot_manager
        self.session_manager = session_manager
        self.template_managers: list[_Closeable] = list(template_managers or [])
        self.rate_limiter = rate_limiter
        self.extras: list[Any] = list(extras or [])
        self._closed = False

    @property
    def is_closed(self) -> bool:
        """Whether ``close()`` has run."""
        return self._closed

    def _teardown_order(self) -> list[tuple[str, Any]]:
        order: list[tuple[str, Any]] = [
            (f"extras[{i}]", extra) for i, extra in enumerate(self.extras)
        ]
        order += [(f"template_managers[{i}]", tm) for i, tm in enumerate(self.template_managers)]
        order += [
            ("rate_limiter", self.rate_limiter),
            ("slot_manager", self.slot_manager),
            ("session_manager", self.session_manager),
        ]
        return [(name, part) for name, part in order if part is not None]

    async def close(self) -> None:
        """Close every component once, in teardown order; failures are logged, not raised."""
        if self._closed:
            return
        self._closed = True
        for name, component in self._teardown_order():
            try:
                await _close(component)
            except Exception as exc:
                _log.error(
                    "orchestrator_context_close_failed",
                    component=name,
                    exc_type=type(exc).__name__,
                    exc_msg=str(exc),
                )

    async def __aenter__(self) -> Self:
        if self._closed:
            raise RuntimeError("OrchestratorContext is closed")
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    def __repr__(self) -> str:
        names = [f"{name}={type(part).__name__}" for name, part in self._teardown_order()]
        status = "closed" if self._closed else "open"
        return f"OrchestratorContext(components=[{', '.join(names)}], status={status})"


async def _close(component: Any) -> None:
    closer = getattr(component, "aclose", None) or getattr(component, "close", None)
    if closer is None:
        raise TypeError(f"{type(component).__name__} has neither aclose() nor close()")
    result = closer()
    if inspect.isawaitable(result):
        await result
