"""A Router's route keys are strings, and a ``(str, Enum)`` member stands for its value: such
keys were never selected (the selector's result went through ``str()``, which gives
``"Route.FAST"`` for such a member), so the flow failed with "unknown route 'Route.FAST'"; a
key that is no string (``1``, ``True``) could never be selected either and is now refused when
the Router is built."""

from __future__ import annotations

import enum
from typing import Any

import pytest
from flowkit import Scripts, make_desk, worker

from deskwork import ConfigurationError
from deskwork.workflow import Router, Step


class Route(str, enum.Enum):  # noqa: UP042 - not StrEnum: its str() would be the value
    FAST = "fast"
    DEEP = "deep"


@pytest.mark.parametrize("selected", [Route.DEEP, "deep"], ids=["member", "value"])
async def test_enum_route_keys_are_selected_by_member_or_value(selected: Any) -> None:
    scripts = Scripts()
    desk = make_desk(scripts)
    routes = {Route.FAST: [Step(worker("fast"))], Route.DEEP: [Step(worker("deep"))]}
    report = await desk.flow([Router(lambda ctx: selected, routes)]).arun("go")
    assert report.status == "completed", report.errors
    assert report.content == "deep#1"
    assert scripts.calls["fast"] == 0


async def test_an_unknown_route_names_the_keys_as_text() -> None:
    desk = make_desk(Scripts())
    routes = {Route.FAST: [Step(worker("fast"))]}
    report = await desk.flow([Router(lambda ctx: Route.DEEP, routes)]).arun("go")
    assert report.errors == ["Router 'router': unknown route 'deep' (routes: 'fast')"]


@pytest.mark.parametrize("key", [1, True, None, ("a",)])
def test_a_route_key_that_is_no_string_is_refused(key: Any) -> None:
    with pytest.raises(ConfigurationError, match="branch keys must be strings"):
        Router(lambda ctx: key, {key: [Step(worker("a"))]})
