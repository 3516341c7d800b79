"""Structured JSON logging with persistent context.

    logger = get_logger("my_app").with_context(service="api")
    logger.info("Request handled", status=200)
    # {"timestamp": "...+00:00", "level": "INFO", "message": "Request handled", ...}

Secrets (API keys, bearer tokens) are redacted from every record.
"""

from __future__ import annotations

import json
import logging as _logging
from typing import Any

from deskwork.core.redact import redact, redact_text
from deskwork.utils import utc_now

__all__ = ["StructuredLogger", "get_logger"]


def _redacted_text(value: object) -> str:
    """A value JSON cannot hold (an exception logged as a field, say) as its redacted ``str``:
    :func:`redact` walks dicts, lists and texts, not what ``str`` makes of other objects."""
    return redact_text(str(value))


class _JSONFormatter(_logging.Formatter):
    def format(self, record: _logging.LogRecord) -> str:
        return record.getMessage()


class StructuredLogger:
    """A thin wrapper over a stdlib logger that writes one JSON object per record."""

    def __init__(
        self,
        name: str,
        level: int = _logging.INFO,
        context: dict[str, Any] | None = None,
        *,
        _logger: _logging.Logger | None = None,
    ) -> None:
        self._logger = _logger or _logging.getLogger(name)
        if _logger is None:
            self._logger.setLevel(level)
            if not self._logger.handlers:
                handler = _logging.StreamHandler()
                handler.setFormatter(_JSONFormatter())
                self._logger.addHandler(handler)
                self._logger.propagate = False
        self._context: dict[str, Any] = dict(context or {})

    @property
    def logger(self) -> _logging.Logger:
        """The underlying stdlib logger (add handlers to it)."""
        return self._logger

    @property
    def context(self) -> dict[str, Any]:
        """The context included in every record."""
        return dict(self._context)

    def with_context(self, **context: Any) -> StructuredLogger:
        """A logger with this context plus ``context``."""
        return StructuredLogger(
            self._logger.name, context={**self._context, **context}, _logger=self._logger
        )

    def format(self, level: int, message: str, fields: dict[str, Any]) -> str:
        """The JSON text of one record."""
        record = {
            "timestamp": utc_now().isoformat(),
            "level": _logging.getLevelName(level),
            "message": message,
            **self._context,
            **fields,
        }
        return json.dumps(redact(record), default=_redacted_text)

    def _log(self, level: int, message: str, fields: dict[str, Any]) -> None:
        if self._logger.isEnabledFor(level):
            self._logger.log(level, self.format(level, message, fields))

    def debug(self, message: str, **fields: Any) -> None:
        """Log at DEBUG."""
        self._log(_logging.DEBUG, message, fields)

    def info(self, message: str, **fields: Any) -> None:
        """Log at INFO."""
        self._log(_logging.INFO, message, fields)

    def warning(self, message: str, **fields: Any) -> None:
        """Log at WARNING."""
        self._log(_logging.WARNING, message, fields)

    def error(self, message: str, **fields: Any) -> None:
        """Log at ERROR."""
        self._log(_logging.ERROR, message, fields)

    def critical(self, message: str, **fields: Any) -> None:
        """Log at CRITICAL."""
        self._log(_logging.CRITICAL, message, fields)


def get_logger(name: str, level: int = _logging.INFO) -> StructuredLogger:
    """A structured JSON logger called ``name``."""
    return StructuredLogger(name, level=level)
