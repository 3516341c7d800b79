"""``desk.cancel`` of a paused durable run claims the pause before it ends the run, as a
resume does, so the two cannot both win.

It ended the paused record without claiming it: a resume (another process or request) that
claimed the pause while the cancel was cancelling the run's workflows went on and ran the
action the cancel meant to stop. A cancel whose claim loses now says the run was resumed
meanwhile and leaves it running.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from deskwork import Desk, Worker
from deskwork.exceptions import ConfigurationError
from deskwork.runtime import _durable
from deskwork.testing import ScriptedAdapter, call_tool, reply
from deskwork.testing.scripted import Turn
from deskwork.tools import tool

RAN: list[str] = []


@tool(requires_confirmation=True)
def wipe_disk() -> str:
    """Wipes the disk (asks first)."""
    RAN.append("wipe_disk")
    return "wiped"


def _policy(messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None) -> Turn:
    """Each run asks to wipe the disk first, then replies (a stateless script)."""
    return call_tool("wipe_disk") if messages[-1]["role"] == "user" else reply("done")


@pytest.fixture(scope="module")
def desk(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Desk]:
    desk = Desk(
        model="m",
        adapter=ScriptedAdapter(default=_policy),
        storage_dir=tmp_path_factory.mktemp("durable"),
        durable=True,
    )
    yield desk
    desk.close()


def _paused(desk: Desk) -> str:
    RAN.clear()
    report = desk.run(Worker(name="ops", tools=[wipe_disk]), "free some space")
    assert report.status == "paused"
    return report.run_id


def test_a_resume_during_the_cancel_never_runs_the_action(
    desk: Desk, monkeypatch: pytest.MonkeyPatch
) -> None:
    run_id = _paused(desk)
    cancel_workflows = _durable._cancel_workflows
    resumed: list[str] = []

    def resume_first(run: str) -> bool:  # a resume arrives while the cancel is under way
        resumed.append(desk.resume(run, True).status)
        return cancel_workflows(run)

    monkeypatch.setattr(_durable, "_cancel_workflows", resume_first)
    desk.cancel(run_id)
    assert RAN == [] and "completed" not in resumed  # the approved action never ran
    record = desk.run_store.get_run(run_id)
    assert record is not None and record.status == "failed"
    assert desk.resume(run_id, True).status == "failed" and RAN == []


def test_a_cancel_whose_claim_loses_to_a_resume_says_so(
    desk: Desk, monkeypatch: pytest.MonkeyPatch
) -> None:
    run_id = _paused(desk)
    store = desk.run_store
    claim = store.claim_paused

    def resumed_first(run: str) -> bool:
        assert claim(run)  # a resume elsewhere claims the pause first
        return claim(run)

    monkeypatch.setattr(store, "claim_paused", resumed_first)
    with pytest.raises(ConfigurationError, match="no longer paused"):
        desk.cancel(run_id)
    record = store.get_run(run_id)
    assert record is not None and record.status == "running"  # the resume's, untouched
    events: list[Any] = [e.type for e in store.get_events(run_id)]
    assert "run.failed" not in events
