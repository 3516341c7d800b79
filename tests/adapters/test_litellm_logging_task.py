"""LiteLLM's logging worker task of a loop that stays open (the sync bridge's) is kept when a
call on another loop restarts the worker, whichever call that is: LiteLLM forgets the old task,
and the GC then destroyed it pending ("Task was destroyed but it is pending!", seen at the end
of a test session that mixed sync runs and structured output on pytest's loops)."""

from __future__ import annotations

import asyncio
import gc
import logging
from collections.abc import Iterator
from typing import Any

import pytest
from pydantic import BaseModel

from deskwork.adapters import LiteLLMAdapter
from deskwork.testing import OpenAICompatServer, ServerReply

MESSAGES = [{"role": "user", "content": "x"}]


class Total(BaseModel):
    total: int


@pytest.fixture
def adapter() -> Iterator[LiteLLMAdapter]:
    with OpenAICompatServer() as server:
        server.set_handler(lambda _req: ServerReply.json({"total": 1}))
        yield LiteLLMAdapter(api_base=server.base_url, api_key="sk-test-0123456789")


async def _plain(adapter: LiteLLMAdapter) -> None:
    await adapter.acomplete(
        model="openai/m", messages=MESSAGES, tools=None, tool_choice=None,
        temperature=None, max_tokens=None, stream=False, stream_options=None,
    )  # fmt: skip
    await asyncio.sleep(0.2)  # LiteLLM's logging worker drains its queue, then waits on it


async def _structured(adapter: LiteLLMAdapter) -> Any:
    return await adapter.astructured_complete(
        model="openai/m", messages=MESSAGES, response_schema=Total
    )


def test_a_structured_call_on_another_loop_leaves_no_logging_task_to_destroy(
    adapter: LiteLLMAdapter, caplog: pytest.LogCaptureFixture
) -> None:
    with asyncio.Runner() as open_loop, caplog.at_level(logging.ERROR, logger="asyncio"):
        open_loop.run(_plain(adapter))  # the worker's task starts on a loop that stays open
        assert asyncio.run(_structured(adapter)).parsed == Total(total=1)
        gc.collect()
        destroyed = [r.getMessage() for r in caplog.records if "destroyed" in r.getMessage()]
    assert destroyed == []


def test_the_image_tool_on_another_loop_leaves_no_logging_task_to_destroy(
    adapter: LiteLLMAdapter, caplog: pytest.LogCaptureFixture
) -> None:
    from deskwork.core.tool_call import ToolCall
    from deskwork.tools.execution import aexecute_tool
    from deskwork.tools.images import make_generate_image_tool

    image = make_generate_image_tool(api_base=adapter.api_base, api_key="sk-test-0123456789")
    call = ToolCall(id="c1", name=image.name, arguments={"prompt": "a cat", "model": "openai/m"})
    gc.collect()  # what earlier tests left is not this test's
    with asyncio.Runner() as open_loop, caplog.at_level(logging.ERROR, logger="asyncio"):
        open_loop.run(_plain(adapter))  # the worker's task starts on a loop that stays open
        asyncio.run(aexecute_tool(image, call))  # LiteLLM called by the tool, not the adapter
        gc.collect()
        destroyed = [r.getMessage() for r in caplog.records if "destroyed" in r.getMessage()]
    assert destroyed == []
