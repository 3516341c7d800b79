"""Keep secrets out of events, stores and logs."""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

__all__ = ["REDACTED", "redact", "redact_text"]

REDACTED = "<redacted>"
_SECRET_KEYS = re.compile(
    r"(api[_-]?key|authorization|auth[_-]?token|access[_-]?token|secret|password|passwd)",
    re.IGNORECASE,
)
_SECRET_VALUES = re.compile(
    r"(Bearer\s+[A-Za-z0-9._~+/=-]{6,}|\bsk-[A-Za-z0-9_-]{8,}|\bsk-ant-[A-Za-z0-9_-]{8,})"
)


def redact_text(text: str) -> str:
    """Replace bearer tokens and provider keys inside ``text``."""
    if "sk-" not in text and "Bearer" not in text:
        return text
    return _SECRET_VALUES.sub(REDACTED, text)


@lru_cache(maxsize=4096)
def _secret_key(key: str) -> bool:
    return _SECRET_KEYS.search(key) is not None


def redact(value: Any) -> Any:
    """Return ``value`` with secret-looking keys and values replaced by ``<redacted>``."""
    if isinstance(value, dict):
        return _redact_dict(value)
    if isinstance(value, str):
        return redact_text(value)
    if isinstance(value, list | tuple):
        return [redact(item) for item in value]
    return value


def _redact_dict(data: dict[Any, Any]) -> dict[Any, Any]:
    # the hot path (every event payload): scalars are copied without a call
    out: dict[Any, Any] = {}
    for key, item in data.items():
        if isinstance(key, str) and _secret_key(key):
            out[key] = REDACTED
        elif isinstance(item, str):
            out[key] = (
                _SECRET_VALUES.sub(REDACTED, item) if ("sk-" in item or "Bearer" in item) else item
            )
        elif isinstance(item, dict | list | tuple):
            out[key] = redact(item)
        else:
            out[key] = item
    return out
