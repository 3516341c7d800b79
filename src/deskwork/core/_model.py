"""The base of deskwork's data models."""

from __future__ import annotations

import dataclasses
from typing import Any

from pydantic import BaseModel, ConfigDict

__all__ = ["DeskworkModel", "as_stored_dict"]


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
