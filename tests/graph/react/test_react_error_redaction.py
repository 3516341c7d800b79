"""A secret in the text of a failing ReAct action handler reaches neither the model's next
prompt nor the loop's error."""

from __future__ import annotations

from typing import Any

import pytest
from react_helpers import MakeExecutor, decide, human_text, xml

from deskwork.graph.core.exceptions import ReactConsecutiveErrorsError

KEY = "sk-live-abcdef0123456789"


async def leaky(params: dict[str, Any], state: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    raise RuntimeError(f"auth failed for {KEY}")


async def test_a_failing_handlers_secret_is_redacted_in_the_next_prompt(
    make_executor: MakeExecutor,
) -> None:
    executor, llm = make_executor(
        [xml("note"), xml("decide", next_agent="x")], handlers={"note": leaky, "decide": decide}
    )
    await executor.execute("hi", {})
    prompt = human_text(llm, 1)
    assert "Error: action 'note' failed: RuntimeError: auth failed for <redacted>" in prompt
    assert KEY not in prompt


async def test_the_consecutive_errors_error_holds_the_redacted_observation(
    make_executor: MakeExecutor,
) -> None:
    executor, _ = make_executor([xml("note")], handlers={"note": leaky}, max_consecutive_errors=1)
    with pytest.raises(ReactConsecutiveErrorsError) as caught:
        await executor.execute("hi", {})
    assert "<redacted>" in str(caught.value) and KEY not in str(caught.value)
