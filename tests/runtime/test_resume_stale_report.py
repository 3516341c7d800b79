"""``desk.resume(report, decision)`` answers the pause ``report`` shows, or none.

A call made again with the Report of a run's first pause (a retried approval of
'delete a.txt') approved its second pause ('delete b.txt'), which the caller never saw:
only the run id was read from the Report. Now a Report whose pending action is not the one
the run waits for is refused before the pause is claimed, and the run stays paused.
"""

from __future__ import annotations

import pytest

from deskwork import Desk, Job, Report, Worker
from deskwork.exceptions import ConfigurationError
from deskwork.store import InMemoryRunStore
from deskwork.testing import ScriptedAdapter, call_tool, reply
from deskwork.tools import tool


def _paused_twice() -> tuple[Desk, Report, Report, list[str]]:
    """A run paused on deleting a.txt (first), answered, then paused on b.txt (second)."""
    deleted: list[str] = []

    @tool(requires_confirmation=True)
    def delete(path: str) -> str:
        """Delete a file."""
        deleted.append(path)
        return f"deleted {path}"

    adapter = ScriptedAdapter(
        [call_tool("delete", path="a.txt"), call_tool("delete", path="b.txt"), reply("done")]
    )
    desk = Desk(model="scripted/m", adapter=adapter, run_store=InMemoryRunStore())
    first = desk.run(Worker(name="w", tools=[delete]), Job(input="clean up"))
    second = desk.resume(first, True)
    assert second.status == "paused" and deleted == ["a.txt"]
    return desk, first, second, deleted


def test_the_report_of_an_earlier_pause_is_refused_and_the_run_stays_paused() -> None:
    desk, first, second, deleted = _paused_twice()
    with pytest.raises(ConfigurationError, match=r"not the one run .* waits for"):
        desk.resume(first, True)  # the first approval, sent again
    record = desk.run_store.get_run(first.run_id)
    assert record is not None and record.status == "paused" and deleted == ["a.txt"]
    assert desk.resume(second, False).status == "completed"  # the caller's own answer
    assert deleted == ["a.txt"]


def test_the_report_of_the_current_pause_or_the_run_id_resumes() -> None:
    desk, first, second, deleted = _paused_twice()
    assert desk.resume(second, True).status == "completed"
    assert deleted == ["a.txt", "b.txt"]
    desk, first, second, deleted = _paused_twice()
    assert desk.resume(first.run_id, True).status == "completed"  # an id: as before
    assert deleted == ["a.txt", "b.txt"]
