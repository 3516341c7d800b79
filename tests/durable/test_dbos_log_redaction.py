"""DBOS's own log records (step inputs and outputs it fails on) are redacted as deskwork's."""

from __future__ import annotations

import logging
from pathlib import Path

from deskwork import Desk, Worker
from deskwork.testing import ScriptedAdapter, reply

SECRET = "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789"


class _Capture(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(self.format(record))


def test_dbos_records_reach_handlers_redacted_once_a_durable_desk_runs(tmp_path: Path) -> None:
    desk = Desk(
        model="m", adapter=ScriptedAdapter([reply("ok")]), storage_dir=tmp_path, durable=True
    )
    capture = _Capture()
    dbos_logger = logging.getLogger("dbos")
    dbos_logger.addHandler(capture)
    try:
        assert desk.run(Worker(name="w"), "hi").status == "completed"
        try:
            raise RuntimeError(f"401 for key {SECRET}")
        except RuntimeError:  # as DBOS logs an output it cannot serialize
            dbos_logger.error("Error serializing object: %r", {"token": SECRET}, exc_info=True)
    finally:
        dbos_logger.removeHandler(capture)
        desk.close()
    text = "\n".join(capture.lines)
    assert "Error serializing object" in text
    assert "RuntimeError: 401 for key" in text  # the traceback is still there, redacted
    assert SECRET not in text
