"""A response schema class defined inside a function is refused when a durable desk is given
the job (run or submit), with an error that names the class and says to define it at module
level: the run failed at its first model call with "Can't pickle local object" (DBOS pickles
each step's result, and the parsed output was an instance of that class)."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import BaseModel, TypeAdapter

from deskwork import Desk, Job, Worker
from deskwork.exceptions import ConfigurationError
from deskwork.testing import ScriptedAdapter, structured


class Count(BaseModel):
    n: int


def _local_schema() -> type[BaseModel]:
    class Answer(BaseModel):
        n: int

    return Answer


@pytest.mark.parametrize("wrap", [False, True], ids=["class", "type-adapter"])
def test_a_class_defined_in_a_function_is_refused_up_front(tmp_path: Path, wrap: bool) -> None:
    answer = _local_schema()
    schema = TypeAdapter(list[answer]) if wrap else answer  # type: ignore[valid-type]
    adapter = ScriptedAdapter([structured({"n": 1})])
    desk = Desk(model="m", adapter=adapter, storage_dir=tmp_path, durable=True)
    expected = r"_local_schema\.<locals>\.Answer, a class defined inside a function.*define"
    try:
        job = Job(input="count", response_schema=schema)
        with pytest.raises(ConfigurationError, match=expected + " Answer at module level"):
            desk.run(Worker(name="counter"), job)
        with pytest.raises(ConfigurationError, match="define Answer at module level"):
            desk.submit(Worker(name="counter"), job)
        assert desk.run_store.list_runs() == []  # nothing stored, nothing queued
        report = desk.run(Worker(name="counter"), Job(input="count", response_schema=Count))
    finally:
        desk.close()
    assert (report.status, report.data) == ("completed", Count(n=1))
