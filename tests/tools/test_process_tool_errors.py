"""``isolation="process"``: a failure the parent cannot rebuild from its pickle still arrives
with its own type and text, not as an unrelated error of the unpickling."""

from __future__ import annotations

from typing import Any

from deskwork.core.tool_call import ToolCall
from deskwork.tools import tool
from deskwork.tools.execution import aexecute_tool


class HttpError(Exception):
    def __init__(self, status: int, detail: str) -> None:
        super().__init__(f"{status} {detail}")


class Unreadable:
    def __reduce__(self) -> tuple[Any, ...]:
        return (int, ("not a number",))  # pickles; raises when the parent loads it


@tool(isolation="process", timeout=30)
def fetch(url: str) -> str:
    raise HttpError(404, f"{url} not found")


@tool(isolation="process", timeout=30)
def odd(n: int) -> Any:
    return Unreadable()


async def test_an_exception_with_several_arguments_keeps_its_type_and_text() -> None:
    # was "TypeError: HttpError.__init__() missing 1 required positional argument: 'detail'"
    result = await aexecute_tool(fetch, ToolCall(id="c", name="fetch", arguments={"url": "/a"}))
    assert result.error == "ToolExecutionError: HttpError: 404 /a not found"


async def test_a_result_that_cannot_be_rebuilt_says_so() -> None:
    result = await aexecute_tool(odd, ToolCall(id="c", name="odd", arguments={"n": 1}))
    assert result.error is not None
    assert result.error.startswith("ToolExecutionError: cannot read the result of tool function")
    assert "'odd'" in result.error
