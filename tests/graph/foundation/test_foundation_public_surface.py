"""The curated surface of deskwork.graph: complete, sorted, lazy, and guarded by the extra."""

from __future__ import annotations

import importlib
import importlib.metadata
import re
import subprocess
import sys
from pathlib import Path

import pytest

import deskwork.graph as graph
from deskwork.exceptions import MissingExtraError

SEED = Path("/work/shared/seeds/supervised-graph-orchestration.md")

# every name the seed imports from the top level of ``graphcrew``
SEED_TOP_LEVEL = {
    "AgentConfig", "AgentMiddleware", "AgentResponse", "BaseAgent", "CharDivisionTokenCounter",
    "CircuitBreakerMiddleware", "CircuitBreakerOpenError", "ContextConfig", "EvictionStrategy",
    "FileSystemKnowledgeLoader", "InMemoryMetricsCollector", "InMemorySessionManager",
    "InMemorySlotPersistence", "Memory", "MemoryInjectionMiddleware", "MetricsMiddleware",
    "OrchestratorContext", "OrchestratorError", "OrchestratorState", "PerTenantRateLimiter",
    "RateLimitExceededError", "ReactExecutor", "ReactTemplateManager", "RetryConfig",
    "SemanticSearchMixin", "SemaphoreRateLimiter", "SessionMessage", "Slot", "SlotManager",
    "SlotPersistence", "SlotTier", "Summary", "SupervisorAgent", "TenantIsolationMiddleware",
    "TimeoutConfig", "TokenCounter", "TopologyResolver", "astream_with_timeout",
    "bind_logging_context", "clear_logging_context", "create_initial_state",
    "deregister_transient_exception", "get_transient_exceptions", "load_config",
    "load_config_from_dict", "load_config_from_string", "register_transient_exception",
}  # fmt: skip


def _isort_key(name: str) -> tuple[int, str]:
    group = 0 if name.isupper() else 1 if name[0].isupper() else 2
    return group, name


def test_all_is_sorted_unique_and_matches_the_lazy_table() -> None:
    assert graph.__all__ == sorted(graph.__all__, key=_isort_key)
    assert len(set(graph.__all__)) == len(graph.__all__)
    assert set(graph.__all__) == {*graph._LAZY, "__version__"}


def test_every_name_the_seed_imports_from_the_top_level_is_exported() -> None:
    assert set(graph.__all__) >= SEED_TOP_LEVEL


@pytest.mark.skipif(not SEED.exists(), reason="seed document not available")
def test_seed_top_level_imports_are_all_listed_here() -> None:
    text = SEED.read_text(encoding="utf-8")
    imported: set[str] = set()
    for match in re.finditer(r"from graphcrew import (\(([^)]*)\)|[^\n]+)", text):
        names = match.group(2) if match.group(2) is not None else match.group(1)
        imported |= {n for n in re.split(r"[,\s]+", names) if n.isidentifier()}
    assert imported <= SEED_TOP_LEVEL | {"InMemorySessionManagerMockLLM"}


def test_every_lazy_entry_resolves_to_the_documented_module() -> None:
    for name, module in graph._LAZY.items():
        value = getattr(importlib.import_module(module), name)
        assert getattr(graph, name) is value, name


def test_testing_re_exports_the_in_memory_session_manager() -> None:
    testing = importlib.import_module("deskwork.graph.testing")
    assert testing.InMemorySessionManager is graph.InMemorySessionManager


def test_observability_exports_the_middleware_lazily() -> None:
    observability = importlib.import_module("deskwork.graph.observability")
    middleware = observability.OpenTelemetryMiddleware
    assert issubclass(middleware, graph.AgentMiddleware)
    assert set(observability.__all__) == {
        "OTEL_AVAILABLE",
        "OpenTelemetryMiddleware",
        "get_tracer",
        "otel_span",
        "sync_otel_span",
    }


def test_version_comes_from_package_metadata() -> None:
    assert graph.__version__ == importlib.metadata.version("deskwork")


def test_unknown_attribute() -> None:
    with pytest.raises(AttributeError, match="no attribute 'NoSuchThing'"):
        _ = graph.NoSuchThing
    assert "SupervisorAgent" in dir(graph)


def _run(code: str) -> str:
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    return result.stdout.strip()


def test_importing_the_package_is_light() -> None:
    out = _run(
        "import sys, deskwork.graph\n"
        "heavy = ('langgraph', 'langchain_core', 'tenacity', 'yaml', 'opentelemetry')\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in heavy))"
    )
    assert out == "[]"


@pytest.mark.parametrize(
    "missing", ["langgraph", "langchain_core", "yaml", "structlog", "tenacity"]
)
def test_missing_dependency_names_the_graph_extra(missing: str) -> None:
    out = _run(
        "import sys\n"
        f"sys.modules[{missing!r}] = None\n"
        "from deskwork.exceptions import MissingExtraError\n"
        "try:\n"
        "    import deskwork.graph.config\n"
        "except MissingExtraError as exc:\n"
        "    print(type(exc).__name__, exc.extra, exc.package, '|', exc)\n"
    )
    assert out.startswith(f"MissingExtraError graph {missing} |")
    assert "pip install 'deskwork[graph]'" in out


def test_missing_extra_error_is_an_import_error() -> None:
    assert issubclass(MissingExtraError, ImportError)


def test_core_subpackage_exports() -> None:
    core = importlib.import_module("deskwork.graph.core")
    assert core.__all__ == sorted(core.__all__, key=_isort_key)
    assert set(core.__all__) == set(core._LAZY)
    for name in core.__all__:
        module = importlib.import_module(core._LAZY[name])
        assert getattr(core, name) == getattr(module, name), name


def test_core_transient_exceptions_are_never_stale() -> None:
    core = importlib.import_module("deskwork.graph.core")

    class Custom(Exception):
        pass

    graph.register_transient_exception(Custom)
    try:
        assert Custom in core.TRANSIENT_EXCEPTIONS
    finally:
        graph.deregister_transient_exception(Custom)
    assert Custom not in core.TRANSIENT_EXCEPTIONS
