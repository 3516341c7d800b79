"""Fixtures of the ReAct tests (defined in react_helpers)."""

from __future__ import annotations

from react_helpers import kb, make_executor

__all__ = ["kb", "make_executor"]
