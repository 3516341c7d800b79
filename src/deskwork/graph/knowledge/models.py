"""Data the knowledge system hands out: slot definitions and load results."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from deskwork.graph.knowledge.schema import ReactSlotSchema

__all__ = ["KnowledgeLoadResult", "KnowledgeSlotDef"]


class KnowledgeSlotDef(BaseModel):
    """A knowledge slot as declared in ``react_config.yaml``, with its name."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    """The slot's key in the config."""
    description: str
    """What the slot contains."""
    modules: tuple[str, ...]
    """Module files, relative to the agent's knowledge folder."""
    dependencies: tuple[str, ...] = ()
    """Slots loaded before this one."""
    triggers: str = ""
    """A hint for when to load the slot."""
    max_tokens: int | None = None
    """The per-slot token cap (``None``: none)."""

    @classmethod
    def from_schema(cls, name: str, schema: ReactSlotSchema) -> KnowledgeSlotDef:
        """The definition of slot ``name`` from its validated schema."""
        return cls(
            name=name,
            description=schema.description,
            modules=tuple(schema.modules),
            dependencies=tuple(schema.dependencies),
            triggers=schema.triggers,
            max_tokens=schema.max_tokens,
        )


class KnowledgeLoadResult(BaseModel):
    """The outcome of :meth:`ReactTemplateManager.load_slot`."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    slot_name: str
    """The slot that was asked for."""
    content: str
    """The slot's modules, joined by blank lines."""
    token_count: int
    """Tokens in ``content`` (by the manager's token counter)."""
    modules: tuple[str, ...]
    """The module files the content came from, in order."""
    dependencies: tuple[str, ...] = ()
    """Every slot this one depends on (transitively), in load order; all of them are loaded."""
    newly_loaded: tuple[str, ...] = ()
    """Slots (dependencies and this one) read from storage by this call; empty on a cache hit."""
    total_loaded_tokens: int = 0
    """Tokens loaded by the manager so far, this slot included."""

    @property
    def from_cache(self) -> bool:
        """True when the slot was already loaded before this call."""
        return self.slot_name not in self.newly_loaded
