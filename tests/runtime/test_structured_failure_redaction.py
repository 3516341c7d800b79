"""A structured-output failure quoting a provider's error (LiteLLM's Instructor path wraps it
as ``structured output failed: <the provider's text>``) reaches the report redacted."""

from __future__ import annotations

from pydantic import BaseModel

from deskwork import Desk, Job, Worker
from deskwork.adapters.base import StructuredOutputError
from deskwork.store import InMemoryRunStore
from deskwork.testing import ScriptedAdapter, fail

KEY = "sk-proj-abcdef0123456789"


class Total(BaseModel):
    total: int


def test_a_secret_in_a_structured_output_failure_is_redacted_in_the_report() -> None:
    error = StructuredOutputError(f"structured output failed: BadRequest, token {KEY} echoed")
    desk = Desk(
        model="scripted/m", adapter=ScriptedAdapter([fail(error)]), run_store=InMemoryRunStore()
    )
    report = desk.run(Worker(name="w"), Job(input="x", response_schema=Total))
    assert report.status == "failed"
    assert report.errors == ["structured output failed: BadRequest, token <redacted> echoed"]
    assert KEY not in report.model_dump_json()
