"""DBOS's queue polling made light (``_dbos_queue``): an empty queue's poll claims nothing
(and a worker's queue is polled less often while it stays empty), a queue holding a run
claims it, and a queue's poller polls again as soon as a run of its queue ends (a wake never
lost, a stop still stops)."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from dbos import DBOS
from dbos._context import SetWorkflowID
from dbos._utils import INTERNAL_QUEUE_NAME
from durablekit import launched_system_database

from deskwork.runtime import _dbos_queue
from deskwork.runtime._dbos_queue import (
    IDLE_POLL_SECONDS,
    _PollEvent,
    _wait_seconds,
    back_off_while_idle,
)
from deskwork.runtime._durable import _dbos


@DBOS.workflow(name="deskwork.test.queue_poll")
def _finished() -> str:
    return "done"


@pytest.fixture(params=["sqlite", "postgres"])
def sys_db(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    """DBOS's system database of a durable desk (DBOS launched in this process)."""
    yield from launched_system_database(request, tmp_path)


def test_a_poll_claims_only_when_its_queue_holds_a_run(sys_db: Any) -> None:
    queue = f"probe-{uuid.uuid4().hex[:8]}"  # served by no poller: the row stays put
    back_off_while_idle(queue)
    assert _wait_seconds(queue, 0.2) == 0.2
    for _ in range(10):
        assert sys_db.dequeue_scopes(queue) == []  # nothing queued: no claim transaction
    assert _wait_seconds(queue, 0.2) == IDLE_POLL_SECONDS  # idle: polled less often
    workflow_id = f"queue-poll-{uuid.uuid4().hex[:8]}"
    with SetWorkflowID(workflow_id):
        assert _finished() == "done"
    ws = sys_db.tables.workflow_status
    for status, scopes in (("PENDING", []), ("ENQUEUED", [None])):
        with sys_db.engine.begin() as conn:  # the finished workflow, running, then queued
            conn.execute(
                ws.update()
                .where(ws.c.workflow_uuid == workflow_id)
                .values(status=status, queue_name=queue)
            )
        assert sys_db.dequeue_scopes(queue) == scopes  # queued: DBOS's one scope, it claims
    assert _wait_seconds(queue, 0.2) == 0.2  # a run came: back to DBOS's interval


def test_dbos_queue_threads_wait_on_the_wakeable_event(sys_db: Any) -> None:
    events = _dbos().background_thread_stop_events
    assert any(event is _dbos_queue._polls for event in events)
    assert _dbos_queue.RECOVERY_QUEUE == INTERNAL_QUEUE_NAME  # the queue workers wake


def _poller(polls: _PollEvent, queue: str, timeout: float, answers: list[bool]) -> threading.Thread:
    """A poller thread of ``queue`` that has had its first look (as DBOS's do before they
    poll) when this returns, then waits ``timeout`` seconds."""
    looked = threading.Event()

    def poll() -> None:
        answers.append(polls.wait(0))
        looked.set()
        answers.append(polls.wait(timeout))

    thread = threading.Thread(target=poll, name=f"queue-worker-{queue}")
    thread.start()
    assert looked.wait(10)
    return thread


def test_a_run_ending_wakes_the_poller_of_its_queue_only() -> None:
    polls = _PollEvent(threading.Event())
    assert polls.wait(0) is False  # an unnamed thread just waits
    mine: list[bool] = []
    other: list[bool] = []
    waiting = _poller(polls, "q", 60, mine)
    elsewhere = _poller(polls, "r", 0.5, other)
    polls.wake("q")
    waiting.join(10)
    assert not waiting.is_alive() and mine == [False, False]  # woken: it polls now
    elsewhere.join(10)
    assert other == [False, False]  # r's poller waited for its own timeout
    assert not polls.is_set()


def test_a_wake_while_the_poller_is_busy_is_not_lost() -> None:
    polls = _PollEvent(threading.Event())
    answers: list[bool] = []
    polled, woken = threading.Event(), threading.Event()

    def poll_twice() -> None:  # one poller: a look, a poll (the wake comes now), a wait
        answers.append(polls.wait(0))
        polled.set()
        woken.wait(10)
        answers.append(polls.wait(60))

    poller = threading.Thread(target=poll_twice, name="queue-worker-q")
    poller.start()
    polled.wait(10)
    polls.wake("q")  # a run ended while the poller was polling
    woken.set()
    poller.join(10)
    assert not poller.is_alive() and answers == [False, False]


def test_stopping_ends_every_wait() -> None:
    stop = threading.Event()
    polls = _PollEvent(stop)
    answers: list[bool] = []
    waiting = _poller(polls, "q", 60, answers)
    polls.set()
    waiting.join(10)
    assert answers == [False, True] and stop.is_set()  # DBOS's own event is set too
    late = _PollEvent(stop)  # DBOS stopped before the swap: its event still counts
    assert late.is_set() and late.wait(60) is True
