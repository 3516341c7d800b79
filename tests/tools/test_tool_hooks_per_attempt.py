"""A tool with retries runs its hooks around each attempt, as the core document's
retry-aware hook sample counts them; a hook that raises still ends the call."""

from __future__ import annotations

from deskwork import ToolCall
from deskwork.tools import Tool, ToolResult, tool
from deskwork.tools.execution import aexecute_tool

CALL = ToolCall(id="call-1", name="flaky_operation", arguments={"value": "v"})


def flaky(failures: int) -> tuple[list[str], Tool]:
    """A tool with ``retries=3`` that fails ``failures`` times, and the log of its hooks."""
    log: list[str] = []

    def count_attempts(call: ToolCall) -> None:
        log.append(f"pre {call.id}")

    def after(call: ToolCall, result: ToolResult) -> None:
        log.append(f"post {result.error or result.content}")

    @tool(retries=3, retry_delay=0, pre=(count_attempts,), post=(after,))
    def flaky_operation(value: str) -> str:
        log.append("attempt")
        if log.count("attempt") <= failures:
            raise Exception("Random failure")
        return value

    return log, flaky_operation


async def test_each_attempt_runs_the_pre_and_post_hooks() -> None:
    log, flaky_operation = flaky(failures=2)

    result = await aexecute_tool(flaky_operation, CALL)

    assert result.content == "v" and result.error is None
    failed = ["pre call-1", "attempt", "post Exception: Random failure"]
    assert log == [*failed, *failed, "pre call-1", "attempt", "post v"]


async def test_a_pre_hook_raising_before_a_retry_stops_the_call() -> None:
    attempts: list[int] = []
    seen: list[str | None] = []

    def second_refused(call: ToolCall) -> None:
        if attempts:
            raise PermissionError("no second try")

    @tool(
        retries=3, retry_delay=0, pre=(second_refused,), post=(lambda c, r: seen.append(r.error),)
    )
    def failing() -> str:
        attempts.append(1)
        raise RuntimeError("down")

    result = await aexecute_tool(failing, ToolCall(id="c", name="failing", arguments={}))

    assert attempts == [1]
    assert result.error is not None and "no second try" in result.error
    assert result.exception_type == "PermissionError"
    assert seen == ["RuntimeError: down", result.error]


async def test_a_post_hook_raising_is_not_retried() -> None:
    attempts: list[int] = []

    def failing_post_hook(call: ToolCall, result: ToolResult) -> None:
        raise Exception("Post-hook failure")

    @tool(retries=3, retry_delay=0, post=(failing_post_hook,))
    def failing() -> str:
        attempts.append(1)
        raise RuntimeError("down")

    result = await aexecute_tool(failing, ToolCall(id="c", name="failing", arguments={}))

    assert attempts == [1]
    assert result.error is not None and "Post-hook failure" in result.error
