"""SessionManagerAgent works on the state's session: without a session_id it raises
InvalidStateError (the documented "required key missing from OrchestratorState") instead of
letting the model call session actions on an empty id."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from deskwork.graph import InvalidStateError, OrchestratorError
from deskwork.graph.agents.session_manager_agent import SessionManagerAgent
from deskwork.graph.config.schema import AgentConfig
from deskwork.graph.knowledge import ReactTemplateManager
from deskwork.graph.session.in_memory import InMemorySessionManager
from deskwork.graph.testing import MockLLM, make_test_state

CONFIG = AgentConfig(name="historian", type="session_manager", description="Knows the past")
REACT_CONFIG = """
actions:
  get_messages:
    description: Read the conversation
    parameters: {limit: How many}
  respond:
    description: Answer
    parameters: {content: The answer}
    required: [content]
"""


def agent(tmp_path: Path, llm: MockLLM) -> SessionManagerAgent:
    folder = tmp_path / "historian"
    folder.mkdir()
    (folder / "react_config.yaml").write_text(textwrap.dedent(REACT_CONFIG))
    manager = ReactTemplateManager("historian", tmp_path)
    return SessionManagerAgent(CONFIG, llm, InMemorySessionManager(), template_manager=manager)


@pytest.mark.parametrize("session_id", [None, ""])
async def test_a_state_without_session_id_is_invalid(
    tmp_path: Path, session_id: str | None
) -> None:
    llm = MockLLM(responses=[])
    state = make_test_state("what did I say?")
    if session_id is None:
        del state["session_id"]
    else:
        state["session_id"] = session_id
    with pytest.raises(InvalidStateError, match="session_id") as caught:
        await agent(tmp_path, llm).invoke(state)
    assert isinstance(caught.value, OrchestratorError)
    assert llm.calls == []  # the model was never asked


async def test_a_state_with_session_id_runs(tmp_path: Path) -> None:
    reply = '<thought>t</thought><action type="respond">{}</action>'.replace(
        "{}", json.dumps({"content": "nothing yet"})
    )
    update = await agent(tmp_path, MockLLM(responses=[reply])).invoke(make_test_state("hi"))
    assert update["messages"][0].content == "nothing yet"
