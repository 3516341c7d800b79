"""``@tool`` options a call could not use fail at definition, naming the option."""

from __future__ import annotations

import math
from typing import Any

import pytest

from deskwork.exceptions import ConfigurationError
from deskwork.tools import tool


def lookup(key: str) -> str:
    return key


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"timeout": math.nan}, "timeout must be a number of seconds above 0.*got nan"),
        ({"timeout": "5"}, "timeout must be a number of seconds above 0.*got '5'"),
        ({"timeout": -1}, "timeout must be"),
        ({"timeout": math.inf}, "timeout must be"),
        ({"retries": 1.5}, "retries must be an int >= 0, not 1.5"),
        ({"retries": True}, "retries must be an int"),
        ({"retries": 1, "retry_delay": math.inf}, "retry_delay must be a finite number"),
        ({"retries": 1, "retry_delay": math.nan}, "retry_delay must be a finite number"),
        ({"retries": 1, "retry_delay": -2}, "retry_delay must be a finite number"),
        ({"pre": print}, "pre must be a tuple of hooks"),
        ({"post": (5,)}, "post hook 5 is not callable"),
        ({"output_type": 5}, "output_type 5 cannot be validated"),
    ],
)
def test_an_unusable_option_is_a_configuration_error(options: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigurationError, match=message):
        tool(**options)(lookup)


def test_usable_options_are_kept() -> None:
    def hook(call: object) -> None: ...

    made = tool(timeout=30, retries=2, retry_delay=0, pre=[hook], output_type=str)(lookup)
    assert (made.timeout, made.retries, made.retry_delay) == (30, 2, 0)
    assert made.pre == (hook,) and made.output_type is str


def test_a_description_that_is_not_text_is_refused() -> None:
    with pytest.raises(ConfigurationError, match="description must be text, not 5"):
        tool(description=5)(lookup)  # type: ignore[call-overload]


def test_an_input_key_that_is_not_a_parameter_is_refused() -> None:
    # the person's answer was put under "answer" on resume: refused as an unknown argument
    def ask(question: str, reply: str) -> str:
        return reply

    with pytest.raises(ConfigurationError, match="input_key 'answer' is not one of its param"):
        tool(requires_user_input=True, input_key="answer")(ask)
    made = tool(requires_user_input=True, input_key="reply")(ask)
    assert list(made.schema["properties"]) == ["question"]
