"""Two keys of one dict that become the same JSON key (``1`` and ``"1"``) are refused by
``to_jsonable`` with an error naming them, not merged with one value lost."""

from __future__ import annotations

import pytest

from deskwork import Desk, Job, Worker
from deskwork.store import InMemoryRunStore
from deskwork.testing import ScriptedAdapter, call_tool, reply
from deskwork.tools import tool
from deskwork.utils import to_jsonable


def test_colliding_keys_are_refused_by_name_at_any_depth() -> None:
    with pytest.raises(ValueError, match=r"the keys 1 and '1' of one dict are both the JSON key"):
        to_jsonable({"rows": [{1: "one", "1": "uno"}]})


def test_keys_that_stay_distinct_convert_as_before() -> None:
    assert to_jsonable({1: "a", 2: {3: "b"}, "x": None}) == {"1": "a", "2": {"3": "b"}, "x": None}


def _desk(*turns: object) -> Desk:
    return Desk(model="scripted/m", adapter=ScriptedAdapter(turns), run_store=InMemoryRunStore())


def test_a_tool_result_with_colliding_keys_fails_the_call_and_the_run_goes_on() -> None:
    @tool
    def scores() -> dict[object, str]:
        return {1: "from the cache", "1": "from the database"}

    desk = _desk(call_tool("scores"), reply("could not read the scores"))
    report = desk.run(Worker(name="w", tools=[scores]), Job(input="scores?"))

    assert report.status == "completed", report.errors
    result = report.tool_calls[0].result
    assert result is not None and "the keys 1 and '1'" in (result.error or "")
    assert "tool.failed" in [e.type for e in report.events]


def test_a_run_input_with_colliding_keys_is_refused_before_anything_is_stored() -> None:
    desk = _desk(reply("never asked"))
    with pytest.raises(ValueError, match="the keys 1 and '1'"):
        desk.run(Worker(name="w"), Job(input={1: "a", "1": "b"}))
    assert desk.run_store.list_runs() == []
