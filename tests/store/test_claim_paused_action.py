"""``RunStore.claim_paused(run_id, action_id)`` claims a pause only while the run waits for
that action: a resume checks its answer against the pause it read, and without the action in
the claim it could claim the next pause (another resume answered the first meanwhile and the
run paused again), running the stale state's action a second time. Every backend."""

from __future__ import annotations

import threading
from pathlib import Path

from storekit import paused_state

from deskwork import Desk, Job, Worker
from deskwork.core.state import RunState
from deskwork.store import RunStore
from deskwork.store._blobs import BLOB_MIN_CHARS
from deskwork.testing import ScriptedAdapter, call_tool, reply
from deskwork.tools import tool


def _paused_at(run_store: RunStore, action_id: str | None) -> None:
    state = paused_state("r")
    if action_id is None:
        state = state.model_copy(update={"pending_action": None})
    else:
        assert state.pending_action is not None
        action = state.pending_action.model_copy(update={"action_id": action_id})
        state = state.model_copy(update={"pending_action": action})
    run_store.create_run("r", None)
    run_store.update_run("r", "paused", None, None, RunState.model_validate(state))


def test_a_claim_names_the_pause_it_takes(run_store: RunStore) -> None:
    _paused_at(run_store, "a")
    assert not run_store.claim_paused("r", "b")  # another pause: the run stays paused
    record = run_store.get_run("r")
    assert record is not None and record.status == "paused"
    assert run_store.claim_paused("r", "a")
    assert not run_store.claim_paused("r", "a")  # claimed once


def test_odd_action_ids_are_compared_as_stored(run_store: RunStore) -> None:
    for action_id in ("\x00x", "é" * BLOB_MIN_CHARS):  # escaped; kept in the blob table
        _paused_at(run_store, action_id)
        assert not run_store.claim_paused("r", action_id[:-1] + "y")
        assert run_store.claim_paused("r", action_id)
        run_store.update_run("r", "failed", None, None, None)


def test_a_pause_without_an_action_is_not_claimed_by_one(run_store: RunStore) -> None:
    _paused_at(run_store, None)
    assert not run_store.claim_paused("r", "a")
    assert run_store.claim_paused("r")


def test_racing_claims_of_two_pauses_take_it_once(run_store: RunStore) -> None:
    _paused_at(run_store, "a")
    wins: list[tuple[str, bool]] = []
    barrier = threading.Barrier(8)

    def claim(action_id: str) -> None:
        barrier.wait()
        wins.append((action_id, run_store.claim_paused("r", action_id)))

    threads = [threading.Thread(target=claim, args=("ab"[i % 2],)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(w for w in wins if w[1]) == [("a", True)]


def test_a_resume_whose_pause_was_answered_meanwhile_runs_nothing(
    run_store: RunStore, tmp_path: Path
) -> None:
    """Two resumes of one pause race: B checks its answer against pause 1, A claims it, the
    tool runs and the run pauses again (pause 2); then B claims. B claimed pause 2 with the
    state of pause 1 and ran pause 1's call a second time."""
    ran: list[int] = []

    @tool(requires_confirmation=True)
    def act(n: int) -> str:
        ran.append(n)
        return f"acted {n}"

    adapter = ScriptedAdapter([call_tool("act", n=1), call_tool("act", n=2), reply("done")])
    desk = Desk(model="scripted/model", adapter=adapter, run_store=run_store, storage_dir=tmp_path)
    paused = desk.run(Worker(name="w", tools=[act]), Job(input="go"))
    b_checked, a_done = threading.Event(), threading.Event()
    claim = run_store.claim_paused

    def claim_after_a(run_id: str, action_id: str | None = None) -> bool:
        if threading.current_thread().name == "B":
            b_checked.set()
            a_done.wait(30)
        return claim(run_id, action_id) if action_id is not None else claim(run_id)

    run_store.claim_paused = claim_after_a  # type: ignore[method-assign]
    reports = {}
    b = threading.Thread(target=lambda: reports.update(b=desk.resume(paused, True)), name="B")
    b.start()
    assert b_checked.wait(30)
    a = desk.resume(paused, True)
    a_done.set()
    b.join(30)
    assert a.status == "paused" and a.pending_action is not None
    assert ran == [1]  # the call of pause 1 ran once
    assert reports["b"].status == "failed" and "no longer paused" in reports["b"].errors[0]
    record = run_store.get_run(paused.run_id)
    assert record is not None and record.status == "paused" and record.state is not None
    assert record.state.pending_action == a.pending_action
    desk.close()
