"""Queue settings (``desk.queue``, ``deskwork worker --queue-concurrency``) are whole numbers
and names that DBOS's queue table keeps: anything else is refused when the settings are
made, before a process declares them. A float passed and DBOS stored it (PostgreSQL rounded
1.5 to 2), NaN or a NUL in a name reached the driver as its raw error."""

from __future__ import annotations

from typing import Any

import pytest

from deskwork.runtime._queues import QueueSettings


@pytest.mark.parametrize(
    "limits",
    [
        {"concurrency": 1.5},
        {"worker_concurrency": "2"},
        {"model_requests_per_minute": float("nan")},
        {"concurrency": 2**31},  # over a database integer
    ],
)
def test_queue_settings_need_whole_numbers(limits: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match="whole number"):
        QueueSettings("q", **limits)


@pytest.mark.parametrize("name", [5, "a\x00b", "a\ud800b", " ", "default:model-requests"])
def test_queue_settings_need_a_name_a_database_keeps(name: Any) -> None:
    with pytest.raises(ValueError, match="queue"):
        QueueSettings(name)
