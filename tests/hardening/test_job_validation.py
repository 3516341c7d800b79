"""A job with nothing to say is rejected before it reaches a model."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from deskwork import ConfigurationError, Desk, Job, Message, Worker
from deskwork.store import InMemoryRunStore
from deskwork.testing import ScriptedAdapter, reply


@pytest.mark.parametrize("empty", [None, "", "   \n"])
def test_a_job_without_input_or_history_is_rejected(empty: str | None) -> None:
    with pytest.raises(ValidationError, match="Job needs an input"):
        Job(input=empty)


def test_a_job_with_no_arguments_is_rejected() -> None:
    with pytest.raises(ValidationError, match="Job needs an input"):
        Job()


def test_desk_run_with_an_empty_string_never_calls_the_model() -> None:
    adapter = ScriptedAdapter([reply("made up")])
    desk = Desk(model="scripted/m", adapter=adapter, run_store=InMemoryRunStore())
    with pytest.raises(ConfigurationError, match="job must be a Job or its input"):
        desk.run(Worker(name="w"), "")
    assert adapter.calls == []


def test_history_alone_is_a_valid_job() -> None:
    history = [Message(role="user", content="hi"), Message(role="assistant", content="hello")]
    assert Job(initial_messages=history).input is None
    assert Job(input="", initial_messages=history).initial_messages == history


@pytest.mark.parametrize("value", [0, False, [], {"k": "v"}, "x"])
def test_any_non_empty_value_is_an_input(value: object) -> None:
    assert Job(input=value).input == value


def test_a_stored_job_with_history_restores() -> None:
    job = Job(initial_messages=[Message(role="user", content="hi")])
    assert Job.from_state(job.to_state()).initial_messages == job.initial_messages
