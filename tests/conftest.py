"""Test-suite wide fixtures."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator

import pytest


@pytest.fixture(autouse=True)
async def _stop_litellm_logging_task(request: pytest.FixtureRequest) -> AsyncIterator[None]:
    """Stop LiteLLM's background logging task before an async test's loop closes.

    LiteLLM starts that task on the loop of the first async call; left running, it is
    destroyed with the loop and Python prints a "Task was destroyed" warning at exit.
    """
    yield
    if sys.modules.get("litellm") is None:
        return
    from litellm.litellm_core_utils.logging_worker import GLOBAL_LOGGING_WORKER

    task = getattr(GLOBAL_LOGGING_WORKER, "_worker_task", None)
    if task is not None and task.get_loop() is asyncio.get_running_loop():
        await GLOBAL_LOGGING_WORKER.stop()
