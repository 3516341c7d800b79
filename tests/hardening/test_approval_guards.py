"""Guards for approvals: every decline word declines; stale pending actions fail clearly."""

from __future__ import annotations

from typing import Any

import pytest

from approvalkit import paused_send
from deskwork.core.state import RunState
from deskwork.exceptions import ConfigurationError
from deskwork.runtime._tool_step import DECLINED, is_approved

DECLINE_WORDS = ["no", "n", "decline", "declined", "deny", "denied", "cancel", "reject", "false"]


@pytest.mark.parametrize("word", DECLINE_WORDS)
def test_every_decline_word_declines_in_any_case_and_padding(word: str) -> None:
    for spelling in (word, word.upper(), word.title(), f"  {word}\n"):
        assert is_approved(spelling) is False, spelling


@pytest.mark.parametrize("decision", [None, False, "", "   ", {"approved": False}])
def test_empty_and_false_decisions_decline(decision: Any) -> None:
    assert is_approved(decision) is False


@pytest.mark.parametrize("decision", [True, "yes", "approve", "ok", "y", {"approved": "yes"}])
def test_other_decisions_approve(decision: Any) -> None:
    assert is_approved(decision) is True


@pytest.mark.parametrize("decision", [0, 1, [], [True], {}, {"ok": True}, {"approved": 1}])
def test_decisions_of_another_shape_are_refused(decision: Any) -> None:
    with pytest.raises(ConfigurationError, match="True or False"):
        is_approved(decision)


@pytest.mark.parametrize("word", DECLINE_WORDS)
def test_a_decline_word_on_resume_never_runs_the_tool(word: str) -> None:
    desk, _, paused, sent = paused_send()
    report = desk.resume(paused, word)
    assert report.status == "completed"
    assert sent == []
    result = report.tool_calls[0].result
    assert result is not None and result.error == DECLINED


def test_approving_runs_the_tool_once() -> None:
    desk, _, paused, sent = paused_send()
    assert desk.resume(paused, "approve").status == "completed"
    assert sent == ["ann"]


def test_resuming_a_finished_run_again_fails_clearly() -> None:
    desk, _, paused, sent = paused_send()
    desk.resume(paused, True)
    again = desk.resume(paused, True)
    assert again.status == "failed"
    assert again.errors == [f"run {paused.run_id} is completed, not paused"]
    assert sent == ["ann"]  # the stale decision did not run the tool twice


def test_a_pending_action_that_names_no_call_of_the_run_fails_clearly() -> None:
    desk, worker, paused, sent = paused_send()
    record = desk.run_store.get_run(paused.run_id)
    assert record is not None and record.state is not None
    state: RunState = record.state
    assert state.pending_action is not None
    stale_call = state.pending_action.tool_call.model_copy(update={"id": "call-from-elsewhere"})
    stale = state.pending_action.model_copy(update={"tool_call": stale_call})
    assert desk.run_store.claim_paused(paused.run_id)  # as desk.resume does first
    report, _ = worker.resume(
        desk.config(paused.run_id), state.model_copy(update={"pending_action": stale}), True
    )
    assert report.status == "failed"
    assert report.errors == ["pending tool call 'call-from-elsewhere' not found in run state"]
    assert sent == []


def test_a_state_without_a_pending_action_fails_clearly() -> None:
    desk, worker, paused, sent = paused_send()
    record = desk.run_store.get_run(paused.run_id)
    assert record is not None and record.state is not None
    state = record.state.model_copy(update={"pending_action": None})
    assert desk.run_store.claim_paused(paused.run_id)  # as desk.resume does first
    report, _ = worker.resume(desk.config(paused.run_id), state, True)
    assert report.status == "failed"
    assert report.errors == ["run has no pending action to resume"]
    assert sent == []
