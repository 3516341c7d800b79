"""A structured output that fails validation keeps the model's last reply (redacted, bounded):
in the error of the report, of ``llm.failed`` and of ``worker.failed``; and a managed
workforce whose manager answered in prose picks the worker that prose names."""

from __future__ import annotations

import pickle

from pydantic import BaseModel
from wfkit import Model, make_desk, of_type, worker

from deskwork import Desk, Job, Worker, Workforce
from deskwork.adapters.base import REPLY_PREVIEW_CHARS, StructuredOutputError, structured_reply
from deskwork.store import InMemoryRunStore
from deskwork.testing import ScriptedAdapter, reply

KEY = "sk-proj-abcdef0123456789"


class Total(BaseModel):
    total: int


async def test_a_manager_that_answers_in_prose_selects_the_worker_it_names() -> None:
    prose = "I would hand this to the writer: it is an article."
    model = Model(boss=[prose] * 4)  # every structured-output attempt fails validation
    team = Workforce([worker("researcher"), worker("writer")], manager=worker("boss"))
    report = await make_desk(model).arun(team, Job(input="Write about AI"))

    assert report.status == "completed" and report.content == "writer done"
    assert model.order() == ["boss"] * 4 + ["writer"]
    (warning,) = of_type(report, "workforce.warning")
    assert warning.payload["reason"] == "manager_selection_name_scan"
    assert warning.payload["manager_status"] == "failed"
    assert structured_reply(warning.payload["manager_errors"][0]) == prose


def test_the_failed_report_and_its_events_quote_the_last_reply_redacted_and_bounded() -> None:
    last = f"Sorry, no JSON today. token {KEY} " + "blah " * 200
    adapter = ScriptedAdapter([reply("first try")] * 3 + [reply(last)])
    desk = Desk(model="scripted/m", adapter=adapter, run_store=InMemoryRunStore())
    report = desk.run(Worker(name="w"), Job(input="x", response_schema=Total))

    assert report.status == "failed"
    quoted = structured_reply(report.errors[0])
    assert quoted is not None and quoted.startswith("Sorry, no JSON today. token <redacted> blah")
    assert len(quoted) == REPLY_PREVIEW_CHARS and quoted.endswith("…")
    (llm_failed,) = of_type(report, "llm.failed")
    assert structured_reply(llm_failed.payload["error_message"]) == quoted
    (worker_failed,) = of_type(report, "worker.failed")
    assert worker_failed.payload["error"] == report.errors[0]
    assert KEY not in report.model_dump_json()


def test_the_reply_survives_a_pickle_and_an_error_without_one_quotes_nothing() -> None:
    error = StructuredOutputError("structured output failed validation: bad", "the  writer\n")
    assert (
        str(error) == "structured output failed validation: bad\nthe model's last reply: the writer"
    )
    copy = pickle.loads(pickle.dumps(error))
    assert str(copy) == str(error) and copy.reply == "the writer"
    assert structured_reply(str(copy)) == "the writer"
    assert str(StructuredOutputError("structured output failed: x", "")) == (
        "structured output failed: x"
    )
    assert structured_reply("tool failed\nthe model's last reply: writer") is None
