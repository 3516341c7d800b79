"""The base of deskwork's data models."""

from __future__ import annotations

import dataclasses
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict

__all__ = ["DeskworkModel", "as_stored_dict", "trusted"]

M = TypeVar("M", bound=BaseModel)


class DeskworkModel(BaseModel):
    """A Pydantic model whose validators are built on first use, not at import.

    Keeps ``import deskwork`` fast: a dozen schema builds would otherwise happen at import.
    """

    model_config = ConfigDict(defer_build=True)


def as_stored_dict(value: Any) -> Any:
    """A model instance given where a stored model keeps a dict: its stored (JSON) form.

    Used as a ``mode="before"`` validator, so ``RunState(job=Job(...))`` and
    ``Event(payload=LLMFailedPayload(...))`` (a typed payload dataclass) work as well as the
    dict forms.
    """
    if isinstance(value, BaseModel):
        to_state = getattr(value, "to_state", None)  # a Job keeps schemas as import paths
        return to_state() if callable(to_state) else value.model_dump(mode="json")
    if dataclasses.is_dataclass(value) and not isinstance(value, type):  # typed event payloads
        return {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
    return value


_new = object.__new__  # what ``cls.__new__`` resolves to for a model, without the lookup
# the slots every Pydantic model has (``__dict__`` too), set through their descriptors
# (cheaper than object.__setattr__ by name)
_set_dict = BaseModel.__dict__["__dict__"].__set__
_set_fields_set = BaseModel.__dict__["__pydantic_fields_set__"].__set__
_set_extra = BaseModel.__dict__["__pydantic_extra__"].__set__
_set_private = BaseModel.__dict__["__pydantic_private__"].__set__


def trusted(cls: type[M], values: dict[str, Any], fields_set: set[str]) -> M:
    """A ``cls`` instance of ``values`` without validation: equal to ``cls(**named)``, where
    ``named`` holds the fields in ``fields_set`` (``values`` holds every field, the others
    at their defaults).

    Only for values that already have their fields' types and are not shared with anything
    that may change them (fresh containers of validated models): the run's hot path, where
    validation would only copy them again. The model must have no private attributes and
    allow no extra fields. ``model_construct`` costs more than validating small models.
    """
    model = _new(cls)
    _set_dict(model, values)
    _set_fields_set(model, fields_set)
    _set_extra(model, None)
    _set_private(model, None)
    return model
