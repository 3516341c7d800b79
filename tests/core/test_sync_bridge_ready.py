"""A sync call runs its coroutine as a task of this thread's loop, whether it ends without
waiting (run from the loop's ready queue) or waits on a timer, a thread or a long chain of
yields (handed over to the full loop, from where it stopped)."""

from __future__ import annotations

import asyncio
import contextvars
import threading

import pytest

from deskwork import _sync
from deskwork._sync import run_sync

flag: contextvars.ContextVar[str] = contextvars.ContextVar("flag", default="unset")


async def _inside() -> tuple[bool, bool, bool]:
    loop = asyncio.get_running_loop()
    task = asyncio.current_task()
    async with asyncio.timeout(5):  # needs a current task
        pass
    return loop.is_running(), task is not None, task is asyncio.current_task()


def test_a_call_that_never_waits_runs_in_a_task_of_a_running_loop() -> None:
    assert run_sync(_inside()) == (True, True, True)


def test_a_call_that_waits_on_a_timer_or_a_thread_ends_with_its_value() -> None:
    async def waits() -> int:
        await asyncio.sleep(0.01)
        return await asyncio.to_thread(lambda: 7)

    assert run_sync(waits()) == 7


def test_many_yields_hand_over_to_the_loop_and_finish() -> None:
    async def spins() -> int:
        for _ in range(2_000):
            await asyncio.sleep(0)
        return 1

    assert run_sync(spins()) == 1


def test_a_task_started_by_the_call_runs_with_it() -> None:
    async def starts() -> str:
        child = asyncio.ensure_future(asyncio.sleep(0, result="child"))
        return await child

    assert run_sync(starts()) == "child"


def test_errors_propagate_and_the_next_call_works() -> None:
    async def fails() -> None:
        raise KeyError("x")

    with pytest.raises(KeyError):
        run_sync(fails())
    assert run_sync(_inside())[0] is True


def test_context_changes_stay_in_the_call() -> None:
    async def sets() -> str:
        flag.set("inside")
        return flag.get()

    assert run_sync(sets()) == "inside"
    assert flag.get() == "unset"


def test_a_sync_call_inside_a_call_is_refused_and_threads_have_their_own_loop() -> None:
    async def nested() -> str:
        inner = _inside()
        try:
            run_sync(inner)
        except Exception as exc:
            return type(exc).__name__
        return "ran"

    assert run_sync(nested()) == "EventLoopRunningError"
    out: list[tuple[bool, bool, bool]] = []
    thread = threading.Thread(target=lambda: out.append(run_sync(_inside())))
    thread.start()
    thread.join()
    assert out == [(True, True, True)]
    with pytest.raises(RuntimeError):  # no loop is left running on this thread
        asyncio.get_running_loop()


def test_a_cancelled_timer_is_dropped_not_kept_per_call() -> None:
    async def guarded() -> int:
        return await asyncio.wait_for(asyncio.sleep(0, result=3), 5)  # arms, then cancels

    def calls() -> None:
        for _ in range(300):
            assert run_sync(guarded()) == 3
        loops = [bridge.loop for bridge in _sync._local.bridges]
        scheduled.append(max(len(loop._scheduled) for loop in loops))  # type: ignore[attr-defined]

    # on a thread of its own: its bridge loop holds no timer an earlier test left behind
    # (a live one due before the cancelled ones keeps them in the heap)
    scheduled: list[int] = []
    thread = threading.Thread(target=calls)
    thread.start()
    thread.join()
    assert scheduled and scheduled[0] < 50
