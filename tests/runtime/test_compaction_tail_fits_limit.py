"""A worker's proactive compaction leaves at most max_context_messages when it can: it kept
4 recent messages whatever the limit, so a worker with instructions sent 6 messages over a
limit of 5 right after every compaction (review of 70aa45f)."""

from __future__ import annotations

from deskwork import Desk, Job, Worker
from deskwork.core.message import Message
from deskwork.store import InMemoryRunStore
from deskwork.testing import ScriptedAdapter, reply


def test_the_call_after_a_compaction_fits_the_limit() -> None:
    roles = ("user", "assistant")
    history = [Message(role=roles[i % 2], content=f"m{i}") for i in range(8)]
    adapter = ScriptedAdapter([reply("SUMMARY"), reply("ok")])
    desk = Desk(
        model="scripted/m", adapter=adapter, run_store=InMemoryRunStore(), max_context_messages=5
    )
    worker = Worker(name="w", instructions="Be brief.")
    report = desk.run(worker, Job(input="q", initial_messages=history))
    assert report.status == "completed", report.errors
    sent = adapter.calls[1]["messages"]  # the call after the summary's
    assert [m["role"] for m in sent[:2]] == ["system", "system"]  # instructions, summary
    assert [m["content"] for m in sent[2:]] == ["m6", "m7", "q"]
