"""Enumerations and literal aliases shared by every layer."""

from __future__ import annotations

from typing import Literal

__all__ = ["MessageRole", "PendingActionType", "RunStatus", "WorkforceMode"]

MessageRole = Literal["system", "user", "assistant", "tool"]
PendingActionType = Literal["confirmation", "user_input", "handoff"]
RunStatus = Literal["completed", "paused", "failed", "running"]
WorkforceMode = Literal["managed", "collaborate", "swarm", "blackboard"]
