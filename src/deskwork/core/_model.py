"""The base of deskwork's data models."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

__all__ = ["DeskworkModel"]


class DeskworkModel(BaseModel):
    """A Pydantic model whose validators are built on first use, not at import.

    Keeps ``import deskwork`` fast: a dozen schema builds would otherwise happen at import.
    """

    model_config = ConfigDict(defer_build=True)
