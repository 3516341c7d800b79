"""Every graph log line passes deskwork's redaction: one logger (``get_graph_logger``) for the
whole graph layer, so a secret in an error message or a routed value never reaches the logs."""

from __future__ import annotations

import ast
import io
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import structlog
from langchain_core.messages import HumanMessage
from structlog.testing import capture_logs

import deskwork.graph
from deskwork.graph import (
    AgentConfig,
    AgentResponse,
    BaseAgent,
    InMemorySessionManager,
    MemoryInjectionMiddleware,
    OrchestratorState,
    TopologyResolver,
    create_initial_state,
)
from deskwork.graph.config.schema import TopologyConfig, TopologyEdgeConfig
from deskwork.graph.core.exceptions import AgentProcessError
from deskwork.graph.core.logging_context import get_graph_logger
from deskwork.graph.routing.graph_builder import build_conditional_edge

GRAPH_SRC = Path(deskwork.graph.__file__).parent
SECRET_TEXT = "connect postgresql://app:hunter2@db/prod failed; api_key=sk-abcdefghijkl"


def _logger_factories(path: Path) -> list[str]:
    """Calls of ``structlog.get_logger``/``logging.getLogger`` (also imported bare)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Attribute):
            name = f"{getattr(func.value, 'id', '?')}.{func.attr}"
        else:
            name = getattr(func, "id", "")
        if name in ("structlog.get_logger", "logging.getLogger", "get_logger", "getLogger"):
            found.append(f"{path.relative_to(GRAPH_SRC)}:{node.lineno} {name}")
    return found


def test_graph_modules_log_only_through_the_redacting_logger() -> None:
    direct = [
        hit
        for path in sorted(GRAPH_SRC.rglob("*.py"))
        if path.name != "logging_context.py"
        for hit in _logger_factories(path)
    ]
    assert direct == []


def _assert_clean(logs: list[dict[str, Any]]) -> None:
    text = repr(logs)
    assert "hunter2" not in text and "sk-abcdefghijkl" not in text


class Failing(BaseAgent):
    async def process(self, state: OrchestratorState, config: Any = None) -> AgentResponse:
        raise RuntimeError(SECRET_TEXT)


async def test_agent_failure_log_is_redacted() -> None:
    agent = Failing(AgentConfig(name="worker", type="custom", description="fails"))
    with capture_logs() as logs, pytest.raises(AgentProcessError):
        await agent.invoke(create_initial_state("hi"))
    failed = [e for e in logs if e["event"] == "agent_invoke_failed"]
    assert failed and "<redacted>" in failed[0]["exc_msg"]
    _assert_clean(logs)


class BrokenSearch(InMemorySessionManager):
    async def search_memories(self, session_id: str, query: str, limit: int = 5) -> list[Any]:
        raise RuntimeError(SECRET_TEXT)


async def test_memory_injection_failure_log_is_redacted() -> None:
    middleware = MemoryInjectionMiddleware(BrokenSearch())
    state = create_initial_state("hi", session_id="s1")
    state["messages"] = [HumanMessage(content="what did I say?")]
    with capture_logs() as logs:
        assert await middleware.before_invoke("worker", state) is state
    assert [e["event"] for e in logs] == ["memory_injection_failed"]
    _assert_clean(logs)


def test_a_routed_value_quoting_a_secret_is_redacted_in_the_routing_log() -> None:
    topology = TopologyResolver(
        TopologyConfig(
            edges=[
                TopologyEdgeConfig(from_agent="supervisor", to_agent="worker"),
                TopologyEdgeConfig(from_agent="worker", to_agent="supervisor"),
            ]
        )
    )
    route = build_conditional_edge(topology, "worker")
    state = create_initial_state("hi")
    state["current_agent"] = SECRET_TEXT  # an agent routed to garbage: falls back, is logged
    with capture_logs() as logs:
        assert route(state) == "supervisor"
    assert [e["event"] for e in logs] == ["routing_decision"]
    _assert_clean(logs)


@pytest.fixture
def rendered() -> Iterator[io.StringIO]:
    """What structlog prints, as an application configures it (restored afterwards)."""
    saved = structlog.get_config()
    printed = io.StringIO()
    yield printed
    structlog.configure(**saved)


RENDERERS = {
    "structlog's defaults": None,
    "JSON": [structlog.processors.format_exc_info, structlog.processors.JSONRenderer()],
}


@pytest.mark.parametrize("processors", RENDERERS.values(), ids=RENDERERS.keys())
def test_a_logged_exception_prints_its_traceback_redacted(
    rendered: io.StringIO, processors: list[Any] | None
) -> None:
    structlog.reset_defaults()
    factory = structlog.PrintLoggerFactory(file=rendered)
    if processors is None:
        structlog.configure(logger_factory=factory)
    else:
        structlog.configure(processors=processors, logger_factory=factory)
    logger = get_graph_logger("deskwork.graph.test")
    try:
        raise RuntimeError(SECRET_TEXT)
    except RuntimeError:
        logger.exception("step_failed", step=1)
    printed = rendered.getvalue()
    assert "step_failed" in printed and "Traceback (most recent call last)" in printed
    assert "RuntimeError: connect postgresql://app:<redacted>@db/prod failed" in printed
    assert "hunter2" not in printed and "sk-abcdefghijkl" not in printed
