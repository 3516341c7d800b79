"""Keep secrets out of events, stores and logs."""

from __future__ import annotations

import re
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


def redact(value: Any) -> Any:
    """Return ``value`` with secret-looking keys and values replaced by ``<redacted>``."""
    if isinstance(value, str):
        return redact_text(value)
    if isinstance(value, dict):
        return {
            key: (REDACTED if isinstance(key, str) and _SECRET_KEYS.search(key) else redact(item))
            for key, item in value.items()
        }
    if isinstance(value, list | tuple):
        return [redact(item) for item in value]
    return value
