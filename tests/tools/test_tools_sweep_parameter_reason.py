"""A parameter type Pydantic cannot validate is refused with Pydantic's reason, not only its
name (``typing.TypedDict`` before Python 3.12 needs ``typing_extensions.TypedDict``)."""

from __future__ import annotations

from typing import Any

import pytest

from deskwork import ConfigurationError
from deskwork.tools import tool


class Ledger:
    """A type that explains why it cannot be validated."""

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: Any) -> Any:
        raise TypeError("Ledger needs a registry to be validated")


def test_the_refusal_says_why_the_type_cannot_be_validated() -> None:
    def book(entry: Ledger) -> str:
        return "booked"

    with pytest.raises(ConfigurationError) as caught:
        tool(book)

    message = str(caught.value)
    assert message.startswith("parameter 'entry' of tool 'book': cannot validate")
    assert message.endswith("Ledger needs a registry to be validated")
