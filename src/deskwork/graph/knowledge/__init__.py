"""Knowledge modules: per-agent ``react_config.yaml``, markdown slots loaded on demand."""

from __future__ import annotations

from deskwork.graph.knowledge.loader import FileSystemKnowledgeLoader, KnowledgeLoader
from deskwork.graph.knowledge.models import KnowledgeLoadResult, KnowledgeSlotDef
from deskwork.graph.knowledge.schema import (
    DEFAULT_MAX_PASSES,
    ReactActionSchema,
    ReactConfigSchema,
    ReactSlotSchema,
)
from deskwork.graph.knowledge.template_manager import ReactTemplateManager

__all__ = [
    "DEFAULT_MAX_PASSES",
    "FileSystemKnowledgeLoader",
    "KnowledgeLoadResult",
    "KnowledgeLoader",
    "KnowledgeSlotDef",
    "ReactActionSchema",
    "ReactConfigSchema",
    "ReactSlotSchema",
    "ReactTemplateManager",
]
