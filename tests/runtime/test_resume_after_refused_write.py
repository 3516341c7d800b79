"""A paused run whose store refused one write (an event for the paused record, from a
runner's ``resume`` called without the desk's claim) is still resumable by the desk.

The desk's emitter remembers every run whose write a store refused as ended
(``Desk._ended``), paused ones too. ``desk.resume`` claims the run (``running``) before its
``run.resumed``, which lifts that memory: were it refused, ``asyncio.CancelledError`` would
leave the record ``running`` with nothing running it.
"""

from __future__ import annotations

import asyncio

import pytest

from approvalkit import paused_send


def test_a_paused_run_resumes_after_a_refused_write() -> None:
    desk, worker, paused, sent = paused_send()
    record = desk.run_store.get_run(paused.run_id)
    assert record is not None and record.state is not None
    with pytest.raises(asyncio.CancelledError):  # the store refuses events of a paused run
        worker.resume(desk.config(paused.run_id), record.state, True)
    after = desk.run_store.get_run(paused.run_id)
    assert after is not None and after.status == "paused"  # nothing of it was stored

    report = desk.resume(paused, True)

    assert (report.status, report.content) == ("completed", "finished")
    assert sent == ["ann"]
    ended = desk.run_store.get_run(paused.run_id)
    assert ended is not None and ended.status == "completed"
