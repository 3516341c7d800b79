"""A session override that changes only the cooldown leaves an agent configured with
``context_turns: 0`` (a widget tracker) without transcript: it was sent the whole one."""

from __future__ import annotations

import pytest
from rt_support import dynamic_config, make_context

from deskwork.realtime import AgentConfigOverride
from deskwork.realtime.library import DynamicAgent


@pytest.mark.parametrize(
    ("override", "lines"),
    [
        (AgentConfigOverride(cooldown_modifier=10), 0),
        (AgentConfigOverride(instructions_append="Be brief."), 0),
        (AgentConfigOverride(context_turns_modifier=3), 3),
        (AgentConfigOverride(context_turns_modifier=-1), 40),  # 0 or less: the whole one
    ],
)
def test_an_override_keeps_context_turns_zero_unless_it_changes_them(
    override: AgentConfigOverride, lines: int
) -> None:
    agent = DynamicAgent(dynamic_config(model_config={"context_turns": 0}))
    context = make_context(segments=[("CUSTOMER", f"line {i}") for i in range(40)])
    context.agent_config_overrides["coach"] = override
    user = agent.build_messages(context)[1]["content"]
    assert user.count("CUSTOMER: line") == lines
