"""A job's stored form (``Job.to_state``, what the run store keeps) is its JSON dump in field
order, whichever fields the job set: left at their default, set to ``None``, plain JSON, or
values JSON cannot hold as they are (tuples, messages); in containers of its own."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from deskwork import Job, Message
from deskwork.core.job import schema_path
from deskwork.utils import to_jsonable


class Answer(BaseModel):
    text: str


def _dumped(job: Job) -> dict[str, Any]:
    """The stored form as the job's full dump gives it."""
    data = to_jsonable(job.model_dump(mode="python", exclude={"tools_override", "response_schema"}))
    data["response_schema"] = schema_path(job.response_schema)
    data["tools_override"] = job.tools_override
    return dict(data)


JOBS = [
    Job(input="add 2 and 3"),
    Job(input="q", expected_output=None, thinking=None),  # set to their default
    Job(input={"a": [1, {"b": 2.5}], "c": None}, metadata={"k": [1, "x"]}),
    Job(
        input="q",
        expected_output="a number",
        constraints=["short", "polite"],
        thinking={"type": "enabled", "budget_tokens": 1024},
        structured_stream_mode="preview",
        drop_params=True,
        extra_body={"guardrails": ["pii"]},
        max_cost_usd=0.5,
        response_schema=Answer,
        tools_override=["search"],
    ),
    Job(input=(1, 2), metadata={"when": (3, 4)}),  # tuples: stored as lists
    Job(input=None, initial_messages=[Message(role="user", content="hi")]),
    Job(input="q", initial_messages=[]),
    Job(input="q", max_cost_usd=float("inf")),
]


@pytest.mark.parametrize("job", JOBS)
def test_the_stored_form_is_the_jobs_dump_in_field_order(job: Job) -> None:
    state, expected = job.to_state(), _dumped(job)
    assert state == expected
    assert list(state) == list(expected)
    assert Job.from_state(state).to_state() == state


def test_a_copied_job_stores_its_own_values() -> None:
    job = Job(input="first", metadata={"k": 1})
    assert job.to_state()["input"] == "first"  # cached on the job (a swarm's handoff copies it)
    copy = job.model_copy(update={"input": "second", "expected_output": "text"})
    assert copy.to_state() == _dumped(copy)
    assert copy.to_state()["input"] == "second"
    assert copy.to_state()["expected_output"] == "text"
    assert job.to_state() == _dumped(job) and job.to_state()["input"] == "first"


def test_the_stored_form_shares_no_container_with_the_job() -> None:
    job = Job(input={"a": [1]}, metadata={"k": [1]})
    state = job.to_state()
    state["input"]["a"].append(2)
    state["metadata"]["k"].append(2)
    assert job.input == {"a": [1]} and job.metadata == {"k": [1]}


class _BriefJob(Job):
    """A job type of a user's: a default of its own, and a field Job does not have."""

    expected_output: str | None = "be brief"
    priority: int = 3


@pytest.mark.parametrize(
    "job",
    [
        _BriefJob(input="q"),
        _BriefJob(input="q", expected_output=None, priority=1),
        Job.model_construct(input="x", expected_output="y", _fields_set={"input"}),
    ],
)
def test_a_value_the_job_did_not_set_is_stored_too(job: Job) -> None:
    assert job.to_state() == _dumped(job)
    assert type(job).from_state(job.to_state()) == job
