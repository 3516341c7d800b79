"""unnamed_schema_class applies pickle's own test to each class a response schema is or
holds: a class pickle finds by name passes, NoneType (an Optional schema) included, which
the first version (a walk of the qualified name from the module) refused as
``builtins.NoneType``, so a durable desk refused every ``X | None`` schema."""

from __future__ import annotations

from typing import Annotated, Any, Literal, Optional

import pytest
from pydantic import BaseModel, TypeAdapter, create_model

from deskwork.core.job import unnamed_schema_class


class Count(BaseModel):
    n: int


@pytest.mark.parametrize(
    "schema",
    [
        Count,
        TypeAdapter(Count | None),
        TypeAdapter(Optional[Count]),  # noqa: UP045 (the spelling users write too)
        TypeAdapter(list[Count] | None),
        TypeAdapter(dict[str, Count]),
        TypeAdapter(Literal["a", None]),
        TypeAdapter(Annotated[Count, "note"]),
        TypeAdapter(type(None)),
        TypeAdapter(int),
        None,
    ],
    ids=str,
)
def test_a_schema_pickle_can_find_passes(schema: Any) -> None:
    assert unnamed_schema_class(schema) is None


def test_a_class_pickle_cannot_find_is_named_inside_an_optional() -> None:
    made = create_model("Answer", n=(int, ...))
    assert unnamed_schema_class(TypeAdapter(made | None)) is made
