"""``max_loaded_tokens`` is a budget per request, not per manager lifetime.

A supervisor keeps one ``ReactTemplateManager`` for every request it serves; each request must
start with the whole budget free, whether requests come one after another or at once.
"""

from __future__ import annotations

import asyncio
import json
import textwrap
from pathlib import Path
from typing import Any

import pytest

from deskwork.graph.agents._react_handlers import decide_handler
from deskwork.graph.agents.supervisor import SupervisorAgent
from deskwork.graph.config.schema import AgentConfig, TopologyConfig, TopologyEdgeConfig
from deskwork.graph.core.exceptions import KnowledgeLoadError
from deskwork.graph.knowledge import ReactTemplateManager
from deskwork.graph.react import ReactExecutor
from deskwork.graph.routing.topology import TopologyResolver
from deskwork.graph.testing import MockLLM, make_test_state

CONFIG = """
actions:
  decide:
    description: Route the request
    parameters: {next_agent: The agent, content: Why}
    required: [next_agent]
slots:
  manual:
    description: The operations manual
    modules: [slots/manual.md]
  runbook:
    description: The incident runbook
    modules: [slots/runbook.md]
"""
BUDGET = 1500  # each slot is 1000 tokens (4000 characters): one fits, two do not


@pytest.fixture
def manager(tmp_path: Path) -> ReactTemplateManager:
    folder = tmp_path / "supervisor"
    (folder / "slots").mkdir(parents=True)
    (folder / "react_config.yaml").write_text(textwrap.dedent(CONFIG), encoding="utf-8")
    (folder / "slots" / "manual.md").write_text("M" * 4000, encoding="utf-8")
    (folder / "slots" / "runbook.md").write_text("R" * 4000, encoding="utf-8")
    return ReactTemplateManager("supervisor", tmp_path, max_loaded_tokens=BUDGET)


def xml(action: str, **params: Any) -> str:
    return f'<thought>t</thought><action type="{action}">{json.dumps(params)}</action>'


def script(slot: str) -> list[str]:
    return [xml("request_slot", slot=slot), xml("decide", next_agent="worker", content=slot)]


def supervisor(llm: MockLLM, manager: ReactTemplateManager) -> SupervisorAgent:
    topology = TopologyResolver(
        TopologyConfig(
            edges=[
                TopologyEdgeConfig(from_agent="supervisor", to_agent="worker"),
                TopologyEdgeConfig(from_agent="worker", to_agent="supervisor"),
            ]
        )
    )
    config = AgentConfig(name="supervisor", type="supervisor", description="Routes")
    return SupervisorAgent(config, llm, topology, template_manager=manager)


async def test_consecutive_supervisor_requests_each_get_the_whole_budget(
    manager: ReactTemplateManager,
) -> None:
    llm = MockLLM(responses=[*script("manual"), *script("runbook")])
    agent = supervisor(llm, manager)
    first = await agent.invoke(make_test_state("restart the database"))
    second = await agent.invoke(make_test_state("the API is down"))
    assert set(first["knowledge_context"]) == {"manual"}
    assert set(second["knowledge_context"]) == {"runbook"}  # not refused for the first's manual
    assert "R" * 100 in str(llm.calls[3][-1].content)  # the runbook reached the model


async def test_concurrent_requests_on_one_manager_have_separate_budgets(
    manager: ReactTemplateManager,
) -> None:
    async def request(slot: str) -> dict[str, Any]:
        executor = ReactExecutor(
            "supervisor", MockLLM(responses=script(slot)), manager, {"decide": decide_handler}
        )
        return await executor.execute(f"load {slot}")

    results = await asyncio.gather(request("manual"), request("runbook"))
    assert [set(r["_loaded_slot_contents"]) for r in results] == [{"manual"}, {"runbook"}]


async def test_the_budget_still_holds_within_one_request(manager: ReactTemplateManager) -> None:
    llm = MockLLM(
        responses=[
            xml("request_slot", slot="manual"),
            xml("request_slot", slot="runbook"),
            xml("decide", next_agent="worker", content="done"),
        ]
    )
    executor = ReactExecutor("supervisor", llm, manager, {"decide": decide_handler})
    result = await executor.execute("load both")
    assert set(result["_loaded_slot_contents"]) == {"manual"}
    assert "max_loaded_tokens=1500" in str(llm.calls[2][-1].content)  # the refusal was observed
    assert manager.loaded_slots == ("manual",)  # what this request loaded


async def test_outside_requests_loads_count_until_reset(manager: ReactTemplateManager) -> None:
    await manager.load_slot("manual")
    with pytest.raises(KnowledgeLoadError, match="max_loaded_tokens"):
        await manager.load_slot("runbook")
    await manager.reset()
    assert (await manager.load_slot("runbook")).newly_loaded == ("runbook",)
    manager.begin_request()
    assert manager.loaded_slots == () and manager.loaded_tokens == 0
    assert (await manager.load_slot("manual")).total_loaded_tokens == 1000
