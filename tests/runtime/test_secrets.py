"""Secrets (API keys, bearer tokens) never reach the SQLite file, events or logs."""

from __future__ import annotations

import io
import json
import logging
from pathlib import Path

from deskwork import Desk, Event, Job, Worker
from deskwork.logging import get_logger
from deskwork.testing import ScriptedAdapter, call_tool, call_tools, fail, reply
from deskwork.tools import tool
from deskwork.utils import new_id

MODEL = "scripted/model"
META_KEY = "meta-plain-secret-value-1"
META_BEARER = "Bearer metaBEARER0123456789"
INPUT_KEY = "sk-INPUTsecret0123456789"
ARG_KEY = "sk-ARGUMENTsecret0123456789"
ARG_BEARER = "ARGbearer0123456789xyz"
RESULT_KEY = "sk-RESULTsecret0123456789"
ERROR_KEY = "sk-ERRORsecret0123456789"
FINAL_BEARER = "FINALbearer0123456789xyz"
PENDING_KEY = "sk-PENDINGsecret0123456789"
PLAIN_ARG = "plainArgumentSecret42"  # no provider prefix: only its argument name marks it
SECRETS = [
    META_KEY,
    "metaBEARER0123456789",
    INPUT_KEY,
    ARG_KEY,
    ARG_BEARER,
    RESULT_KEY,
    ERROR_KEY,
    FINAL_BEARER,
    PENDING_KEY,
    PLAIN_ARG,
]


def _db_bytes(storage: Path) -> bytes:
    return b"".join(p.read_bytes() for p in sorted(storage.glob("deskwork.db*")))


def _leaks(text: str | bytes) -> list[str]:
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    return [s for s in SECRETS if s in text]


@tool()
def fetch(url: str, api_key: str, headers: str) -> str:
    return f"fetched {url} with key {RESULT_KEY}"


@tool(requires_confirmation=True)
def deploy(token: str) -> str:
    return "deployed" if token == PENDING_KEY else f"wrong token {token!r}"


def _log_every_event(desk: Desk) -> io.StringIO:
    logger = get_logger(f"secrets-{new_id()}")
    stream = io.StringIO()
    logger.logger.addHandler(logging.StreamHandler(stream))

    def log(event: Event) -> None:
        logger.info("event", type=event.type, payload=event.payload)

    desk.event_bus.subscribe("*", log)
    return stream


def test_secrets_in_metadata_arguments_results_and_output_are_not_stored(tmp_path: Path) -> None:
    turns = [
        call_tools(
            (
                "fetch",
                {
                    "url": "https://x",
                    "api_key": ARG_KEY,
                    "headers": f"Authorization: Bearer {ARG_BEARER}",
                },
            )
        ),
        reply(f"done, the header was Bearer {FINAL_BEARER}"),
    ]
    desk = Desk(model=MODEL, adapter=ScriptedAdapter(turns), storage_dir=tmp_path)
    logged = _log_every_event(desk)
    job = Job(input=f"use {INPUT_KEY}", metadata={"api_key": META_KEY, "auth": META_BEARER})
    report = desk.run(Worker(name="w", tools=[fetch]), job)
    assert report.status == "completed"
    # the tool really received the secret and the user gets the real answer back
    assert report.tool_calls[0].arguments["api_key"] == ARG_KEY
    assert FINAL_BEARER in (report.content or "")
    events_json = json.dumps([e.model_dump(mode="json") for e in report.events])
    stored_json = json.dumps(
        [e.model_dump(mode="json") for e in desk.run_store.get_events(report.run_id)]
    )
    assert _leaks(events_json) == []
    assert _leaks(stored_json) == []
    assert _leaks(logged.getvalue()) == []
    desk.run_store.flush()
    assert _leaks(_db_bytes(tmp_path)) == []


def test_secrets_in_model_errors_are_not_stored(tmp_path: Path) -> None:
    error = RuntimeError(f"401 Incorrect API key provided: {ERROR_KEY}")
    desk = Desk(model=MODEL, adapter=ScriptedAdapter([fail(error)]), storage_dir=tmp_path)
    logged = _log_every_event(desk)
    report = desk.run(Worker(name="w"), Job(input="go"))
    assert report.status == "failed"
    assert _leaks(" ".join(report.errors)) == []
    assert _leaks(json.dumps([e.model_dump(mode="json") for e in report.events])) == []
    assert _leaks(logged.getvalue()) == []
    desk.run_store.flush()
    assert _leaks(_db_bytes(tmp_path)) == []


def test_paused_state_holds_no_secrets_but_resume_in_process_still_works(tmp_path: Path) -> None:
    desk = Desk(
        model=MODEL,
        adapter=ScriptedAdapter(
            [call_tool("deploy", token=PENDING_KEY), lambda m, t: reply(m[-1]["content"])]
        ),
        storage_dir=tmp_path,
    )
    paused = desk.run(Worker(name="w", tools=[deploy]), Job(input="deploy"))
    assert paused.status == "paused"
    desk.run_store.flush()
    assert _leaks(_db_bytes(tmp_path)) == []
    done = desk.resume(paused, True)
    assert done.status == "completed" and done.content == "deployed"
    desk.run_store.flush()
    assert _leaks(_db_bytes(tmp_path)) == []


def test_session_history_holds_no_secrets(tmp_path: Path) -> None:
    desk = Desk(
        model=MODEL,
        adapter=ScriptedAdapter([reply(f"your key is {INPUT_KEY}")]),
        storage_dir=tmp_path,
    )
    session = desk.session(Worker(name="w"))
    assert session is not None
    report = session.run(f"remember {INPUT_KEY}")
    assert INPUT_KEY in (report.content or "")
    assert _leaks(_db_bytes(tmp_path)) == []


def test_secret_named_arguments_are_redacted_from_events(tmp_path: Path) -> None:
    @tool()
    def login(user: str, password: str) -> str:
        return "ok" if password == PLAIN_ARG else "denied"

    turns = [call_tool("login", user="ada", password=PLAIN_ARG), reply("logged in")]
    desk = Desk(model=MODEL, adapter=ScriptedAdapter(turns), storage_dir=tmp_path)
    report = desk.run(Worker(name="w", tools=[login]), Job(input="log in"))
    assert report.tool_calls[0].result is not None
    assert report.tool_calls[0].result.content == "ok"
    message = next(e for e in report.events if e.type == "assistant.message")
    assert json.loads(message.payload["tool_calls"][0]["arguments"])["user"] == "ada"
    assert _leaks(json.dumps([e.model_dump(mode="json") for e in report.events])) == []
    desk.run_store.flush()
    assert _leaks(_db_bytes(tmp_path)) == []


@tool()
def read_config(name: str) -> str:
    """Return a config file's text (which names its own secrets)."""
    return '{"user": "bob", "password": "hunter2-plain-secret", "api_key": "plainkey77"}'


def test_key_named_secrets_inside_tool_result_text_are_redacted(tmp_path: Path) -> None:
    adapter = ScriptedAdapter([call_tool("read_config", name="db"), reply("read it")])
    desk = Desk(model=MODEL, adapter=adapter, storage_dir=tmp_path)
    report = desk.run(Worker(name="ops", tools=[read_config]), Job(input="read the config"))
    assert report.status == "completed"
    preview = next(e for e in report.events if e.type == "tool.completed").payload
    assert '"password": "<redacted>"' in preview["result_preview"]
    assert '"user": "bob"' in preview["result_preview"]  # the rest stays readable
    desk.run_store.flush()
    stored = _db_bytes(tmp_path)
    assert b"hunter2-plain-secret" not in stored and b"plainkey77" not in stored
    # the model itself still saw the real result within the run
    tool_message = adapter.calls[1]["messages"][-1]["content"]
    assert "hunter2-plain-secret" in tool_message
