"""The 2.6.0-style quick start proposed for the README's realtime section runs as written.

``QUICKSTART`` is the exact block for README.md ("Realtime agents on a live conversation").
tests/test_readme.py runs the README's realtime block the same way: the one line
``engine = AgentEngine()`` gets a scripted model, nothing else changes.
"""

from __future__ import annotations

import ast
import json
from typing import Any

import pytest

from deskwork.testing import ScriptedAdapter

QUICKSTART = """\
from deskwork.realtime import AgentContext, AgentEngine, Blackboard, DynamicAgent
from deskwork.realtime.core.models import TranscriptSegment

agent = DynamicAgent({
    "id": "echo-coach",
    "name": "Echo Coach",
    "text": "You observe a live conversation. If the customer sounds hesitant, "
            "give the salesperson ONE short, concrete suggestion.",
    "trigger_config": {"mode": "turn_based", "cooldown": 0},
})
engine = AgentEngine()     # LiteLLM by default; AgentEngine(adapter=...) or (desk=...)
engine.register_agent(agent)
context = AgentContext(
    session_id="demo",
    recent_segments=[
        TranscriptSegment(speaker="customer", timestamp=0.0,
                          text="I'm not sure this fits our budget..."),
        TranscriptSegment(speaker="sales", timestamp=4.2,
                          text="What range did you have in mind?"),
    ],
    blackboard=Blackboard(),
)
response = await engine.process_turn(context)   # in a script: inside asyncio.run(main())
for insight in response.insights:
    print(f"[{insight.type.value}] {insight.content}")
"""

REPLY = {"has_insight": True, "type": "suggestion", "content": "Ask what budget they have."}


async def run_quickstart(engine_line: str) -> dict[str, Any]:
    code = QUICKSTART.replace("engine = AgentEngine()", engine_line, 1)
    assert code != QUICKSTART
    body = "\n".join("    " + line for line in code.splitlines())
    namespace: dict[str, Any] = {"ScriptedAdapter": ScriptedAdapter, "REPLY": json.dumps(REPLY)}
    exec(f"async def example():\n{body}\n    return locals()\n", namespace)
    result: dict[str, Any] = await namespace["example"]()
    return result


def test_quickstart_compiles_as_a_readme_block() -> None:
    compile(QUICKSTART, "README.md", "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
    assert QUICKSTART.count("engine = AgentEngine()") == 1
    assert "from deskwork.realtime import" in QUICKSTART


async def test_quickstart_runs_and_prints_the_insight(capsys: pytest.CaptureFixture[str]) -> None:
    scope = await run_quickstart("engine = AgentEngine(adapter=ScriptedAdapter(default=REPLY))")
    assert [i.content for i in scope["response"].insights] == [REPLY["content"]]
    assert capsys.readouterr().out == "[suggestion] Ask what budget they have.\n"
    call = scope["engine"].get_adapter().calls[0]
    assert call["model"] == "gpt-4o-mini"
    assert "ONE short, concrete suggestion" in call["messages"][0]["content"]
    assert "customer: I'm not sure this fits our budget..." in call["messages"][1]["content"]


async def test_quickstart_with_a_fake_llm_as_the_2_6_guide_tests_it() -> None:
    class FakeLLM:
        async def generate_json(self, model: str, messages: Any) -> dict[str, Any]:
            return REPLY

    code = QUICKSTART.replace(
        "engine.register_agent(agent)", "engine.register_agent(agent)\nagent.llm = FAKE", 1
    ).replace("engine = AgentEngine()", "engine = AgentEngine(adapter=ScriptedAdapter())", 1)
    body = "\n".join("    " + line for line in code.splitlines())
    namespace: dict[str, Any] = {"ScriptedAdapter": ScriptedAdapter, "FAKE": FakeLLM()}
    exec(f"async def example():\n{body}\n    return locals()\n", namespace)
    scope = await namespace["example"]()
    assert [i.content for i in scope["response"].insights] == [REPLY["content"]]
    assert scope["engine"].get_adapter().calls == []  # the fake answered; no model call
