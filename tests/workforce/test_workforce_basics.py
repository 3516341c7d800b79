"""Workforce construction: validation, defaults, public names, the sync entry point."""

from __future__ import annotations

import pytest
from wfkit import Model, make_desk, worker

import deskwork
from deskwork import ConfigurationError, Workforce
from deskwork.workforce import sum_metrics


@pytest.mark.parametrize(
    ("workers", "options", "message"),
    [
        ([], {}, "at least one worker"),
        ([worker("a"), worker("a")], {}, "unique"),
        ([worker("a")], {"mode": "democracy"}, "unknown Workforce mode"),
        ([worker("a")], {"max_handoffs": -1}, ">= 0"),
    ],
)
def test_invalid_configuration_is_rejected(
    workers: list[deskwork.Worker], options: dict[str, object], message: str
) -> None:
    with pytest.raises(ConfigurationError, match=message):
        Workforce(workers, **options)  # type: ignore[arg-type]


def test_defaults_and_lazy_top_level_import() -> None:
    wf = deskwork.Workforce([worker("a"), worker("b")])
    assert (wf.mode, wf.name, wf.manager.name, wf.max_handoffs) == ("managed", "workforce", "a", 10)
    assert wf.runner_type == "workforce"
    assert wf.get_worker("b") is wf.workers[1] and wf.get_worker("zz") is None
    assert repr(wf) == "Workforce(name='workforce', mode='managed', workers=['a', 'b'])"


def test_sync_desk_run_works_for_a_workforce() -> None:
    model = Model()
    report = make_desk(model).run(Workforce([worker("a"), worker("b")], mode="collaborate"), "hi")
    assert report.status == "completed" and report.content == "## a\na done\n\n## b\nb done"


def test_sum_metrics_adds_numbers_and_ignores_the_rest() -> None:
    total = sum_metrics(
        {"llm_calls": 1, "cost": 0.1, "latency_ms": 1.0001, "flag": True, "model": "x"},
        {"llm_calls": 2, "cost": 0.2, "tool_calls": 3, "latency_ms": 2.0},
        {},
    )
    assert total == {"llm_calls": 3, "cost": pytest.approx(0.3), "latency_ms": 3.0, "tool_calls": 3}
