"""``isolation="process"``: callables a new process cannot find by name fail at definition."""

from __future__ import annotations

import functools

import pytest

from deskwork.tools import tool


class Prices:
    rate = 2

    def __init__(self, base: int) -> None:
        self.base = base

    def quote(self, qty: int) -> int:
        return self.base * qty

    @classmethod
    def default_quote(cls, qty: int) -> int:
        return cls.rate * qty


def scale(factor: int, value: int) -> int:
    return factor * value


def test_a_method_bound_to_an_instance_is_refused() -> None:
    # it was accepted, then every call failed in the child: "quote() missing ... 'self'"
    with pytest.raises(ValueError, match=r"'Prices\.quote' bound to an instance"):
        tool(isolation="process")(Prices(3).quote)


def test_a_partial_is_refused_with_what_it_is() -> None:
    with pytest.raises(ValueError, match=r"needs a function defined at module level.*partial"):
        tool(name="triple", isolation="process")(functools.partial(scale, 3))


def test_a_classmethod_is_found_by_name() -> None:
    made = tool(isolation="process")(Prices.default_quote)
    assert made.isolation == "process" and list(made.schema["properties"]) == ["qty"]
