"""A lone surrogate in a state's ids or a logged field does not fail the agent that logs it.

structlog's default output prints to a UTF-8 stream, which raises ``UnicodeEncodeError`` on a lone
surrogate; a ``user_id``/``session_id`` holding one (a user's input) made every ``invoke()`` of a
graph agent raise it from its first log line, and ``redact_pii=True`` raised it while hashing.
The graph's logger now writes such a character as its ``\\uXXXX`` escape.
"""

from __future__ import annotations

import io
from collections.abc import Iterator

import pytest
import structlog
from langchain_core.runnables import RunnableConfig

from deskwork.graph.agents.base import BaseAgent
from deskwork.graph.config.schema import AgentConfig
from deskwork.graph.core.logging_context import clear_logging_context, redact_pii
from deskwork.graph.core.state import OrchestratorState
from deskwork.graph.core.types import AgentResponse
from deskwork.graph.testing import make_test_state


class Keeper(BaseAgent):
    async def process(
        self, state: OrchestratorState, config: RunnableConfig | None = None
    ) -> AgentResponse:
        return AgentResponse(agent_name=self.name, content="ok", slots_update={"k\ud800": 1})


@pytest.fixture
def utf8_output() -> Iterator[io.BytesIO]:
    """structlog's default renderer, printing to a strict UTF-8 stream as a terminal does."""
    raw = io.BytesIO()
    stream = io.TextIOWrapper(raw, encoding="utf-8", write_through=True)
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.dev.ConsoleRenderer(colors=False),
        ],
        logger_factory=structlog.PrintLoggerFactory(stream),
        cache_logger_on_first_use=False,
    )
    try:
        yield raw
    finally:
        structlog.reset_defaults()
        clear_logging_context()


@pytest.mark.parametrize("hashed", [False, True])
async def test_an_agent_logs_a_lone_surrogate_as_its_escape(
    utf8_output: io.BytesIO, hashed: bool
) -> None:
    agent = Keeper(AgentConfig(name="worker", type="custom", description="w"), redact_pii=hashed)
    state = {**make_test_state(), "user_id": "u\ud800", "session_id": "s\udfff"}
    update = await agent.invoke(state)  # type: ignore[arg-type]
    assert update["context_slots"] == {"k\ud800": 1}  # the data itself is untouched
    logged = utf8_output.getvalue().decode("utf-8")
    assert "agent_invoke_completed" in logged
    assert "slot_keys_updated=['k\\\\ud800']" in logged  # escaped, then in a list's repr
    if hashed:
        assert f"user_id={redact_pii('u' + chr(0xD800))}\n" in logged
    else:
        assert "user_id=u\\ud800" in logged and "session_id=s\\udfff" in logged
