"""A prompt template from the database cannot freeze the engine with nested loops: all its
``{% for %}`` loops together get a budget of iterations, and the prompt's size is checked
while it renders. Three nested ranges of 1,000 spun for minutes on the event loop (every
session waited), since each range was within its own cap and no output was produced."""

from __future__ import annotations

import time

import pytest
from jinja2 import TemplateError
from rt_support import dynamic_config, make_context

from deskwork.realtime import Blackboard
from deskwork.realtime.library import DynamicAgent

SPINNERS = [
    "{% for i in range(1000) %}{% for j in range(1000) %}{% for k in range(1000) %}"
    "{% endfor %}{% endfor %}{% endfor %}",
    "{% set s = 'x' * 100000 %}{% for a in s %}{% for b in s %}{% endfor %}{% endfor %}",
    "{% macro m() %}{% for i in range(1000) %}{% endfor %}{% endmacro %}"
    "{% for j in range(1000) %}{% for k in range(1000) %}{{ m() }}{% endfor %}{% endfor %}",
    "{% for i in range(1000) %}{% for j in range(1000) %}{% for k in range(100) %}x"
    "{% endfor %}{% endfor %}{% endfor %}",
    "{% for x in range(2) recursive %}{% if loop.depth < 40 %}{{ loop(range(2)) }}{% endif %}"
    "{% endfor %}done",
    "{% for x in range(2) recursive %}{% if loop.depth < 40 %}{{ loop(iterable=range(2)) }}"
    "{% endif %}{% endfor %}done",
]


@pytest.mark.parametrize(
    "template",
    SPINNERS,
    ids=["ranges", "texts", "macro", "output", "recursive", "recursive by keyword"],
)
def test_nested_loops_stop_at_the_budget_at_once(template: str) -> None:
    agent = DynamicAgent(dynamic_config(text=template))
    started = time.perf_counter()
    with pytest.raises(TemplateError, match=r"too large|too long|too deep"):
        agent.build_messages(make_context(board=Blackboard()))
    assert time.perf_counter() - started < 5


def test_ordinary_loops_still_render() -> None:
    text = (
        "{% for i in range(3) %}{{ loop.index }}{% endfor %}|"
        "{% for i in range(10) if i % 2 %}{{ i }}{% endfor %}|"
        "{% for x in [] %}{{ x }}{% else %}none{% endfor %}|"
        "{% for n in [{'c': [{'c': []}]}] recursive %}[{{ loop(n.c) }}]{% endfor %}|"
        "{% set loop_budget = 0 %}{% for i in range(300) %}{% for j in range(300) %}"
        "{% endfor %}{% endfor %}done"
    )
    agent = DynamicAgent(dynamic_config(text=text))
    system = agent.build_messages(make_context(board=Blackboard()))[0]["content"]
    assert system.startswith("123|13579|none|[[]]|done")
