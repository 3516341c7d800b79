"""Texts a database text column cannot hold as they are -- a NUL (``"\\x00"``) and a lone
surrogate (``"\\ud800"``: Python allows it, UTF-8 cannot encode it) -- in a run's values
(its output, state, messages, tool results, pending action, event payloads) are kept and
read back equal by every run store.

PostgreSQL's text column of a run's output refused a NUL: the run ended ``failed`` ("refused
a value") and its output was lost. Both SQL stores failed a run whose output held a lone
surrogate (sqlite3's and psycopg's raw ``UnicodeEncodeError`` as its error), and the
in-memory store one whose event payload held one (pydantic-core's JSON cannot write it).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from storekit import paused_state

from deskwork import Desk, Event, Job, Message, Worker
from deskwork.store import RunStore, SessionStore
from deskwork.store.postgres import _RUN_MIGRATIONS, PostgresDatabase, PostgresRunStore
from deskwork.testing import ScriptedAdapter, call_tool, reply
from deskwork.tools import tool
from deskwork.utils import new_id, utc_now

ODD = pytest.mark.parametrize("odd", ["\x00", "\ud800"], ids=["nul", "surrogate"])


@tool
def echo(text: str) -> str:
    """Say ``text`` twice."""
    return f"{text}|{text}"


@tool(requires_confirmation=True)
def ship(order: str) -> str:
    """Ship ``order``."""
    return f"shipped {order}"


def _event(run_id: str, **payload: object) -> Event:
    return Event(
        event_id=new_id(),
        type="custom",
        timestamp=utc_now(),
        run_id=run_id,
        source="s",
        payload=dict(payload),
    )


@ODD
def test_a_run_whose_texts_hold_it_completes_and_reads_back_equal(
    run_store: RunStore, odd: str, tmp_path: Path
) -> None:
    adapter = ScriptedAdapter([call_tool("echo", text=f"a{odd}b"), reply(f"fin{odd}al")])
    desk = Desk(model="m", adapter=adapter, run_store=run_store, storage_dir=tmp_path)
    report = desk.run(Worker(name="w", tools=[echo]), Job(input=f"in{odd}put"))
    assert report.status == "completed", report.errors
    assert report.content == f"fin{odd}al"
    record = run_store.get_run(report.run_id)
    assert record is not None and record.status == "completed"
    assert record.output == report.content
    assert record.input is not None and record.input["input"] == f"in{odd}put"
    assert record.state is not None and record.state.messages == report.messages
    assert f"a{odd}b|a{odd}b" in [m.content for m in record.state.messages]
    assert [r.output for r in run_store.list_runs()] == [report.content]
    events = run_store.get_events(report.run_id)
    assert [(e.type, e.payload) for e in events] == [(e.type, e.payload) for e in report.events]
    desk.close()


@ODD
def test_a_paused_run_whose_action_holds_it_resumes(
    run_store: RunStore, odd: str, tmp_path: Path
) -> None:
    worker = Worker(name="clerk", tools=[ship])
    adapter = ScriptedAdapter([call_tool("ship", order=f"A{odd}1"), reply(f"done{odd}")])
    desk = Desk(model="m", adapter=adapter, run_store=run_store, storage_dir=tmp_path)
    paused = desk.run(worker, Job(input="ship it"))
    assert paused.status == "paused", paused.errors
    record = run_store.get_run(paused.run_id)
    assert record is not None and record.state is not None
    action = record.state.pending_action
    assert action is not None and action.tool_call.arguments == {"order": f"A{odd}1"}
    report = desk.resume(paused.run_id, True, runner=worker)
    assert (report.status, report.content) == ("completed", f"done{odd}")
    record = run_store.get_run(paused.run_id)
    assert record is not None and record.output == f"done{odd}"
    assert record.state is not None and f"shipped A{odd}1" in [
        m.content for m in record.state.messages
    ]
    desk.close()


@ODD
def test_values_holding_it_read_back_equal_from_the_store(run_store: RunStore, odd: str) -> None:
    text = f"x{odd}y"
    state = paused_state("r")
    state.messages[0].content = text
    state.payload = {"k": [text]}
    assert state.pending_action is not None
    state.pending_action.prompt = text
    run_store.create_run("r", {"input": text})
    run_store.add_event(_event("r", text=text, items=[text, {"k": text}]))
    run_store.update_run("r", "paused", text, {"out": text}, state)
    record = run_store.get_run("r")
    assert record is not None
    assert (record.input, record.output) == ({"input": text}, text)
    assert record.output_json == {"out": text}
    assert record.state == state
    assert [r.output for r in run_store.list_runs()] == [text]
    assert run_store.claim_paused("r")
    end = _event("r", text=text)
    end.type = "run.completed"
    run_store.finish_run("r", "completed", odd, [text], None, end)
    record = run_store.get_run("r")
    assert record is not None and (record.output, record.output_json) == (odd, [text])
    payloads = [e.payload for e in run_store.get_events("r")]
    assert payloads == [{"text": text, "items": [text, {"k": text}]}, {"text": text}]


@ODD
def test_a_session_whose_messages_hold_it_reads_them_back_equal(
    session_store: SessionStore, odd: str, tmp_path: Path
) -> None:
    """The SQL session stores raised pydantic-core's raw PydanticSerializationError out of
    the session's run for a lone surrogate in a message."""
    desk = Desk(
        model="m",
        adapter=ScriptedAdapter([reply(f"ok{odd}")]),
        session_store=session_store,
        storage_dir=tmp_path,
    )
    report = desk.session(Worker(name="w"), "s1").run(f"hi{odd}")
    assert report.status == "completed", report.errors
    assert [m.content for m in session_store.get_messages("s1")] == [f"hi{odd}", f"ok{odd}"]
    messages = [Message(role="user", content=odd, metadata={"k": [f"a{odd}"]})]
    session_store.replace_messages("s1", messages)
    assert session_store.get_messages("s1") == messages
    desk.close()


def test_an_output_comes_back_code_unit_by_code_unit(run_store: RunStore) -> None:
    """An output that looks like an escaped one (PostgreSQL's escape of a NUL) is told apart
    from it, and two lone halves of a surrogate pair (a streamed emoji cut in two) come back
    as two, not joined into the emoji (JSON's escapes would join them)."""
    for output in ("x\\x00y", '"x\\u0000y"', "\ud83d\ude00", "\ud83d\ude00\x00"):
        run_store.create_run("r", None)
        run_store.update_run("r", "completed", output, None, None)
        record = run_store.get_run("r")
        assert record is not None and record.output == output


def test_a_postgres_database_of_run_schema_3_is_upgraded_and_reads_as_before(
    postgres_url: str,
) -> None:
    """The flag of an escaped output is a column schema version 4 adds: a database of
    version 3 gets it when a store opens it, and its runs read as they did."""
    old = PostgresDatabase(postgres_url)
    try:
        old.migrate("runs", _RUN_MIGRATIONS[:3])
        with old.connection() as conn:
            conn.execute(
                "INSERT INTO deskwork_runs (run_id, status, output, created_at, updated_at)"
                " VALUES ('old', 'completed', %s, now(), now())",
                ('"a\\u0000b"',),
            )
    finally:
        old.pool.close()
    store = PostgresRunStore(postgres_url)
    try:
        assert store.database.schema_versions()["runs"] == 4
        record = store.get_run("old")
        assert record is not None and record.output == '"a\\u0000b"'
        store.create_run("new", None)
        store.update_run("new", "completed", "a\x00b", None, None)
        record = store.get_run("new")
        assert record is not None and record.output == "a\x00b"
    finally:
        store.close()
