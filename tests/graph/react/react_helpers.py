"""A real knowledge folder and helpers shared by the ReAct tests (fixtures via conftest)."""

from __future__ import annotations

import asyncio
import json
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from langchain_core.callbacks import AsyncCallbackManagerForLLMRun
from langchain_core.messages import BaseMessage
from langchain_core.outputs import ChatResult
from langchain_core.runnables import RunnableConfig

from deskwork.graph.knowledge import ReactTemplateManager
from deskwork.graph.react import ReactExecutor, TerminalActionResult
from deskwork.graph.testing import MockLLM

CONFIG = """
max_passes: 4
actions:
  request_slot:
    description: Load a knowledge slot for reference
    parameters:
      slot: Name of the slot to load
    required: [slot]
  decide:
    description: Make a final routing decision
    parameters:
      next_agent: The agent to route to
      content: Summary of reasoning
    required: [next_agent]
  note:
    description: Write a note
    parameters:
      text: The note
slots:
  routing_rules:
    description: Rules for routing requests
    modules: [slots/routing_rules.md]
  escalation_policy:
    description: Escalation rules
    modules: [slots/escalation_policy.md]
    dependencies: [routing_rules]
  manual:
    description: The big manual
    modules: [slots/manual.md]
"""

CORE = (
    "You are {agent_name}. Route to one of: {allowed_agents}.\n"
    "Actions:\n{available_actions}\nSlots:\n{available_slots}\n"
)


def xml(action: str, thought: str = "thinking", **params: Any) -> str:
    """A well-formed XML reply."""
    return f'<thought>{thought}</thought><action type="{action}">{json.dumps(params)}</action>'


@pytest.fixture
def kb(tmp_path: Path) -> Path:
    base = tmp_path / "llm_resources"
    folder = base / "supervisor"
    (folder / "slots").mkdir(parents=True)
    (folder / "react_config.yaml").write_text(textwrap.dedent(CONFIG), encoding="utf-8")
    (folder / "react_core.md").write_text(CORE, encoding="utf-8")
    (folder / "slots" / "routing_rules.md").write_text("RULE: billing questions go to billing.")
    (folder / "slots" / "escalation_policy.md").write_text("POLICY: page on-call for P1.")
    (folder / "slots" / "manual.md").write_text("M" * 4000)
    return base


async def decide(
    params: dict[str, Any], state: dict[str, Any], config: RunnableConfig | None = None
) -> tuple[str, dict[str, Any]]:
    raise TerminalActionResult({"next_agent": params["next_agent"], "content": "done"})


async def note(
    params: dict[str, Any], state: dict[str, Any], config: RunnableConfig | None = None
) -> tuple[str, dict[str, Any]]:
    notes = [*state.get("notes", []), params.get("text", "")]
    return f"noted {params.get('text', '')}", {"notes": notes}


MakeExecutor = Callable[..., tuple[ReactExecutor, MockLLM]]


@pytest.fixture
def make_executor(kb: Path) -> MakeExecutor:
    """``make_executor(responses, handlers=..., llm=..., **executor_kwargs)``."""

    def make(
        responses: list[Any] | None = None,
        *,
        handlers: dict[str, Any] | None = None,
        llm: MockLLM | None = None,
        max_loaded_tokens: int = 8192,
        **kwargs: Any,
    ) -> tuple[ReactExecutor, MockLLM]:
        model = llm or MockLLM(responses=responses or [])
        tm = ReactTemplateManager("supervisor", kb, max_loaded_tokens=max_loaded_tokens)
        executor = ReactExecutor(
            "supervisor",
            model,
            tm,
            handlers if handlers is not None else {"decide": decide, "note": note},
            **kwargs,
        )
        return executor, model

    return make


class SlowMockLLM(MockLLM):
    """A MockLLM whose every call takes ``delay`` seconds."""

    delay: float = 0.0

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        await asyncio.sleep(self.delay)
        return await super()._agenerate(messages, stop, run_manager, **kwargs)


def human_text(llm: MockLLM, call: int) -> str:
    """The per-pass prompt of call number ``call`` (0-based)."""
    return str(llm.calls[call][-1].content)


def system_text(llm: MockLLM, call: int) -> str:
    """The system prompt of call number ``call`` (0-based)."""
    return str(llm.calls[call][0].content)
