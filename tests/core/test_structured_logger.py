"""StructuredLogger: JSON lines, context, levels, ``.logger`` and ``.context``, redaction."""

from __future__ import annotations

import io
import json
import logging
from datetime import datetime
from typing import Any

from deskwork.logging import StructuredLogger, get_logger
from deskwork.utils import new_id


def _capture(logger: StructuredLogger) -> io.StringIO:
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    logger.logger.addHandler(handler)
    return stream


def _records(stream: io.StringIO) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stream.getvalue().splitlines() if line.strip()]


def test_records_are_json_lines_with_utc_timestamp() -> None:
    logger = get_logger(f"t-{new_id()}")
    stream = _capture(logger)
    logger.info("User logged in", user_id="123", ip_address="192.168.1.1")
    (record,) = _records(stream)
    assert record["level"] == "INFO" and record["message"] == "User logged in"
    assert record["user_id"] == "123" and record["ip_address"] == "192.168.1.1"
    stamp = datetime.fromisoformat(record["timestamp"])
    assert stamp.utcoffset() is not None and stamp.utcoffset().total_seconds() == 0  # type: ignore[union-attr]


def test_with_context_extends_without_mutating_the_parent() -> None:
    base = get_logger(f"t-{new_id()}").with_context(service="api", version="1.0.0")
    request = base.with_context(request_id="req-456")
    stream = _capture(base)
    request.info("Handling request")
    base.info("Base only")
    first, second = _records(stream)
    assert first["service"] == "api" and first["request_id"] == "req-456"
    assert "request_id" not in second and second["version"] == "1.0.0"
    assert base.context == {"service": "api", "version": "1.0.0"}
    ctx = request.context
    ctx["mutated"] = True
    assert "mutated" not in request.context
    assert request.logger is base.logger


def test_levels_filter_records() -> None:
    logger = get_logger(f"t-{new_id()}", level=logging.WARNING)
    stream = _capture(logger)
    logger.debug("This won't be logged")
    logger.info("Neither will this")
    logger.warning("This will be logged")
    logger.error("So will this")
    logger.critical("And this")
    assert [r["level"] for r in _records(stream)] == ["WARNING", "ERROR", "CRITICAL"]
    debug = get_logger(f"t-{new_id()}", level=logging.DEBUG)
    stream = _capture(debug)
    debug.debug("Detailed debug information")
    assert _records(stream)[0]["level"] == "DEBUG"


def test_structured_logger_class_and_data_types() -> None:
    logger = StructuredLogger(f"t-{new_id()}", level=logging.INFO)
    assert isinstance(logger.logger, logging.Logger)
    stream = _capture(logger)

    class Custom:
        def __str__(self) -> str:
            return "custom!"

    logger.info(
        "Complex data",
        integer=42,
        floating=3.14,
        boolean=True,
        none_value=None,
        list=[1, 2, 3],
        dict={"key": "value"},
        obj=Custom(),
    )
    (record,) = _records(stream)
    assert record["integer"] == 42 and record["floating"] == 3.14 and record["boolean"] is True
    assert record["none_value"] is None and record["list"] == [1, 2, 3]
    assert record["dict"] == {"key": "value"} and record["obj"] == "custom!"


def test_secrets_are_redacted_from_log_records() -> None:
    logger = get_logger(f"t-{new_id()}").with_context(api_key="ctx-secret-value")
    stream = _capture(logger)
    logger.error(
        "call failed with Bearer abcdef1234567890",
        headers={"Authorization": "Bearer abcdef1234567890"},
        detail="key sk-proj-1234567890abcdef was rejected",
        password="hunter2",
    )
    text = stream.getvalue()
    for secret in ("ctx-secret-value", "abcdef1234567890", "sk-proj-1234567890abcdef", "hunter2"):
        assert secret not in text
    (record,) = _records(stream)
    assert record["headers"]["Authorization"] == "<redacted>"


def test_an_exception_or_other_object_in_a_field_is_redacted_as_the_text_it_is_logged_as() -> None:
    """Logging the error itself (``error=exc``) writes its ``str``: redacted as any text."""
    logger = get_logger(f"t-{new_id()}")
    stream = _capture(logger)
    logger.error(
        "call failed",
        error=RuntimeError("401 for key sk-proj-1234567890abcdef"),
        nested={"causes": [ValueError("api_key=hunter2 was refused")]},
    )
    text = stream.getvalue()
    for secret in ("sk-proj-1234567890abcdef", "hunter2"):
        assert secret not in text
    (record,) = _records(stream)
    assert record["error"] == "401 for key <redacted>"
    assert record["nested"] == {"causes": ["api_key=<redacted> was refused"]}
