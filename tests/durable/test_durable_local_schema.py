"""A response schema class Python cannot find by its name is refused when a durable desk is
given the job (run or submit), with an error that names the class and says to define it at
module level: the run failed at its first model call with a pickling error (DBOS pickles
each step's result, and the parsed output was an instance of that class). The rule is
pickle's: a class defined inside a function, one made by ``pydantic.create_model`` and one
reloaded since are all refused; a module-level class passes."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import pytest
from pydantic import BaseModel, TypeAdapter, create_model

from deskwork import Desk, Job, Worker
from deskwork.exceptions import ConfigurationError
from deskwork.testing import ScriptedAdapter, structured


class Count(BaseModel):
    n: int


def _local_schema() -> type[BaseModel]:
    class Answer(BaseModel):
        n: int

    return Answer


def _made_schema() -> type[BaseModel]:
    return create_model("Answer", n=(int, ...))


def _reloaded_schema(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> type[BaseModel]:
    (tmp_path / "fixdur_reloaded_schema.py").write_text(
        "from pydantic import BaseModel\n\nclass Answer(BaseModel):\n    n: int\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    module = importlib.import_module("fixdur_reloaded_schema")
    monkeypatch.setitem(sys.modules, module.__name__, module)  # (removed after the test)
    stale: type[BaseModel] = module.Answer
    importlib.reload(module)  # module.Answer is another class now
    return stale


@pytest.mark.parametrize(
    ("made", "wrap"),
    [("local", False), ("local", True), ("create_model", False), ("reloaded", True)],
    ids=["local-class", "local-type-adapter", "create_model", "reloaded-type-adapter"],
)
def test_a_class_not_found_by_name_is_refused_up_front(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, made: str, wrap: bool
) -> None:
    if made == "local":
        answer = _local_schema()
    elif made == "create_model":
        answer = _made_schema()
    else:
        answer = _reloaded_schema(tmp_path, monkeypatch)
    schema = TypeAdapter(list[answer]) if wrap else answer  # type: ignore[valid-type]
    adapter = ScriptedAdapter([structured({"n": 1})])
    desk = Desk(model="m", adapter=adapter, storage_dir=tmp_path, durable=True)
    expected = rf"{answer.__qualname__}, a class Python cannot find by that name.*define"
    try:
        job = Job(input="count", response_schema=schema)
        with pytest.raises(ConfigurationError, match=expected + " Answer at module level"):
            desk.run(Worker(name="counter"), job)
        with pytest.raises(ConfigurationError, match="define Answer at module level"):
            desk.submit(Worker(name="counter"), job)
        assert desk.run_store.list_runs() == []  # nothing stored, nothing queued
        optional = TypeAdapter(Count | None)  # NoneType is found (pickle special-cases it)
        report = desk.run(Worker(name="counter"), Job(input="count", response_schema=optional))
    finally:
        desk.close()
    assert (report.status, report.data) == ("completed", Count(n=1))
