"""Errors raised by the stores (defined in :mod:`deskwork.exceptions`, the one exception tree)."""

from __future__ import annotations

from deskwork.exceptions import StoreError

__all__ = ["StoreError"]
