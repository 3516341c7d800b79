"""Utilities for the realtime engine: ``tracing.StructuredLogTracer``."""

from __future__ import annotations

from deskwork.realtime.utils.tracing import StructuredLogTracer

__all__ = ["StructuredLogTracer"]
