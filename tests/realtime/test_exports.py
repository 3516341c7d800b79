"""The public surface of deskwork.realtime: documented paths and sorted, complete __all__."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

MODULES = [
    "deskwork.realtime",
    "deskwork.realtime.core",
    "deskwork.realtime.core.agent",
    "deskwork.realtime.core.models",
    "deskwork.realtime.core.blackboard",
    "deskwork.realtime.core.conditions",
    "deskwork.realtime.core.callbacks",
    "deskwork.realtime.core.engine",
    "deskwork.realtime.core.events",
    "deskwork.realtime.core.llm",
    "deskwork.realtime.library",
    "deskwork.realtime.library.output_formats",
    "deskwork.realtime.utils",
    "deskwork.realtime.utils.tracing",
]


def _isort_key(name: str) -> tuple[int, str]:
    """Ruff's RUF022 order: CONSTANTS, then Classes, then functions."""
    if name.isupper():
        return 0, name
    return (1 if name[0].isupper() else 2), name


@pytest.mark.parametrize("name", MODULES)
def test_all_is_sorted_and_resolves(name: str) -> None:
    module = importlib.import_module(name)
    exported = list(module.__all__)
    assert exported == sorted(exported, key=_isort_key)
    for attr in exported:
        assert hasattr(module, attr), f"{name}.{attr}"


def test_documented_names() -> None:
    realtime = importlib.import_module("deskwork.realtime")
    for name in ("AgentEngine", "AgentContext", "Blackboard", "TriggerType"):
        assert hasattr(realtime, name)
    assert hasattr(importlib.import_module("deskwork.realtime.library"), "DynamicAgent")
    assert hasattr(
        importlib.import_module("deskwork.realtime.utils.tracing"), "StructuredLogTracer"
    )
    models = importlib.import_module("deskwork.realtime.core.models")
    for name in (
        "AgentResponse",
        "AgentInsight",
        "InsightType",
        "Event",
        "Fact",
        "TranscriptSegment",
        "TriggerType",
        "AgentContext",
    ):
        assert hasattr(models, name)


def test_importing_realtime_does_not_import_litellm_or_jinja() -> None:
    code = "import sys, deskwork.realtime; print('litellm' in sys.modules, 'jinja2' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]
