"""max_context_messages below what compaction keeps (a summary and 4 recent messages) is
refused when configured, instead of being exceeded after every compaction."""

from __future__ import annotations

import pytest

from deskwork import ConfigurationError, Desk
from deskwork.runtime.config import RunConfig
from deskwork.runtime.context import SUMMARY_TAIL_MESSAGES


@pytest.mark.parametrize("limit", [-1, 0, 1, 3, SUMMARY_TAIL_MESSAGES, True, 5.0, "5"])
def test_a_limit_compaction_cannot_keep_to_is_refused(limit: object) -> None:
    with pytest.raises(ConfigurationError, match="max_context_messages must be None or"):
        RunConfig(max_context_messages=limit)  # type: ignore[arg-type]


def test_a_per_run_override_is_checked_too() -> None:
    config = RunConfig(max_context_messages=SUMMARY_TAIL_MESSAGES + 1)
    with pytest.raises(ConfigurationError, match=r">= 5 .*not 2"):
        config.with_overrides(max_context_messages=2)


def test_a_desk_refuses_it_when_made() -> None:
    with pytest.raises(ConfigurationError, match="not 3"):
        Desk(model="scripted/m", max_context_messages=3)
    assert Desk(max_context_messages=SUMMARY_TAIL_MESSAGES + 1).max_context_messages == 5
