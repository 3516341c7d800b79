"""desk.run and desk.resume say what they expected when given nothing to run or resume."""

from __future__ import annotations

import pytest

from deskwork import ConfigurationError, Desk, Worker
from deskwork.store import InMemoryRunStore
from deskwork.testing import ScriptedAdapter, reply


def _desk() -> tuple[Desk, ScriptedAdapter]:
    adapter = ScriptedAdapter(default=reply("done"))
    return Desk(model="scripted/m", adapter=adapter, run_store=InMemoryRunStore()), adapter


@pytest.mark.parametrize(("job", "given"), [(None, "None"), ("  ", "a blank string")])
def test_a_job_of_none_or_blank_text_is_refused_before_a_run_is_stored(
    job: object, given: str
) -> None:
    desk, adapter = _desk()
    expected = (
        f"job must be a Job or its input (a non-empty string or any other value), not {given}"
    )
    with pytest.raises(ConfigurationError) as raised:  # was: pydantic's ValidationError text
        desk.run(Worker(name="w"), job)  # type: ignore[arg-type]
    assert str(raised.value) == expected
    assert desk.run_store.list_runs() == [] and adapter.calls == []


def test_any_other_value_is_still_the_jobs_input() -> None:
    desk, _ = _desk()
    assert desk.run(Worker(name="w"), 42).status == "completed"  # type: ignore[arg-type]


@pytest.mark.parametrize(("given", "kind"), [(None, "NoneType"), (7, "int")])
def test_resume_of_something_that_is_no_report_nor_run_id_says_what_it_needs(
    given: object, kind: str
) -> None:
    desk, _ = _desk()
    with pytest.raises(ConfigurationError) as raised:  # was: ValidationError for Report.run_id
        desk.resume(given, True)  # type: ignore[arg-type]
    assert str(raised.value) == (
        f"resume needs the paused run's Report or its run id (a str), not {kind}"
    )
