"""Per-invocation state for shared middleware instances (AD-46).

A middleware instance serves many agents and concurrent requests, so it keeps what one invocation
needs between ``before_invoke`` and ``after_invoke``/``on_error`` in a ``ContextVar`` — a stack, so
an agent that invokes another agent through the same middleware inside ``process()`` does not
clobber its caller's entry. Each asyncio task (and each LangGraph node run) sees its own copy.
"""

from __future__ import annotations

from contextvars import ContextVar
from typing import Generic, TypeVar

__all__ = ["InvocationStack"]

T = TypeVar("T")


class InvocationStack(Generic[T]):
    """A context-local stack of per-invocation values."""

    def __init__(self, name: str) -> None:
        self._var: ContextVar[tuple[T, ...]] = ContextVar(name, default=())

    def push(self, value: T) -> None:
        """Enter an invocation with ``value``."""
        self._var.set((*self._var.get(), value))

    def pop(self) -> T | None:
        """Leave the innermost invocation and return its value (``None`` if there is none)."""
        stack = self._var.get()
        if not stack:
            return None
        self._var.set(stack[:-1])
        return stack[-1]

    def peek(self) -> T | None:
        """The innermost invocation's value without leaving it."""
        stack = self._var.get()
        return stack[-1] if stack else None
