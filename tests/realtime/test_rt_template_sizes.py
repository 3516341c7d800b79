"""A prompt template from the database cannot exhaust memory by building strings it never
prints: ``{% set a = a ~ a %}`` repeated (or ``a + a``, ``a|replace(...)``, a macro or a
``{% set %}`` block around a loop ...) doubled a string until the process died, before the
rendered prompt's limit was ever reached. Each such string or list is now refused, with the
prompt limit's error, as soon as it would pass the limit."""

from __future__ import annotations

import time
import tracemalloc

import pytest
from jinja2 import TemplateError
from rt_support import dynamic_config, make_context

from deskwork.realtime import Blackboard, Fact
from deskwork.realtime.library import DynamicAgent

BIG = "{% set a = 'x' * 100000 %}"
NESTED = "{% set l = [a, a, a, a, a, a, a, a, a, a] %}{% set l = [l, l, l, l, l, l, l, l, l, l] %}"
DOUBLINGS = 9

BUILDERS = {
    "concat": BIG + "{% set a = a ~ a %}" * DOUBLINGS + "{{ a|length }}",
    "plus": BIG + "{% set a = a + a %}" * DOUBLINGS + "{{ a|length }}",
    "list plus": "{% set a = [1] * 100000 %}" + "{% set a = a + a %}" * DOUBLINGS,
    "namespace": "{% set ns = namespace(a='x' * 100000) %}"
    + "{% set ns.a = ns.a ~ ns.a %}" * DOUBLINGS,
    "replace": BIG + "{% set a = a|replace('x', 'xxxxxxxxxx') %}" * 3 + "{{ a|length }}",
    "replace method": BIG + "{% set a = a.replace('x', 'xxxxxxxxxx') %}" * 3,
    "join": BIG + "{% set a = ([a] * 500)|join %}{{ a|length }}",
    "join separator": "{% set a = (['y'] * 100000)|join('x' * 500) %}",
    "join method": BIG + "{% set a = ''.join([a] * 500) %}",
    "indent": "{% set a = ('\\n' * 5000)|indent(10000) %}",
    "indent by string": "{% set a = ('\\n' * 50000)|indent('x' * 1000, true, true) %}",
    "wordwrap": "{% set a = ('w ' * 50000)|wordwrap(1, wrapstring='y' * 1000) %}",
    "format filter": "{% set a = ('%(x)s' * 500)|format(x='x' * 100000) %}",
    "percent": "{% set a = '%(x)s' * 500 % {'x': 'x' * 100000} %}",
    "str format": "{% set a = ('{0}' * 500).format('x' * 100000) %}",
    "expandtabs": "{% set a = ('\\t' * 5000).expandtabs(10000) %}",
    "sum": "{% set a = ([[1] * 100000] * 30)|sum(start=[]) %}",
    "set block": BIG + "{% set b %}{% for i in range(500) %}{{ a }}{% endfor %}{% endset %}",
    "macro": BIG + "{% macro m() %}{% for i in range(500) %}{{ a }}{% endfor %}{% endmacro %}"
    "{% set b = m() %}",
    "block call": BIG + "{% if false %}{% block b %}{% for i in range(500) %}{{ a }}"
    "{% endfor %}{% endblock %}{% endif %}{% set c = self.b() %}",
    "printed nested list": BIG + NESTED + "{{ [l, l, l, l, l, l] }}",
    "stringified nested list": "{% set a = 'x' * 10000 %}" + NESTED + "{% set s = l|string %}",
    "lipsum": "{% set a = lipsum(2000, false, 500, 1000) %}",
    "mapped strings": BIG + "{% set l = ([a] * 300)|map('upper')|list %}",
    "mapped lists": BIG + "{% set l = ([a] * 250)|map('list')|list %}",
}


@pytest.mark.parametrize("template", list(BUILDERS.values()), ids=list(BUILDERS))
def test_a_huge_intermediate_is_refused_at_once(template: str) -> None:
    agent = DynamicAgent(dynamic_config(text=template))
    started = time.perf_counter()
    tracemalloc.start()
    try:
        with pytest.raises(TemplateError, match=r"characters is too long|characters in all"):
            agent.build_messages(make_context(board=Blackboard()))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert time.perf_counter() - started < 2
    assert peak < 20_000_000


def test_a_huge_number_is_refused() -> None:
    agent = DynamicAgent(dynamic_config(text="{% set n = (10 ** 128) ** 100 %}{{ n > 0 }}"))
    with pytest.raises(TemplateError, match=r"too large"):
        agent.build_messages(make_context(board=Blackboard()))


def test_ordinary_templates_render_as_before() -> None:
    board = Blackboard()
    board.set_var("phase", "discovery")
    board.push_queue("pending_questions", "price?")
    board.add_fact(Fact(type="intent", value="buy", confidence=0.9))
    text = (
        "Current phase: {{ blackboard.variables.phase }}\n"
        "Pending: {{ blackboard.queues.pending_questions | length }}\n"
        "{% for q in blackboard.queues.pending_questions %}- {{ q }}\n{% endfor %}"
        "{% for fact in blackboard.facts %}- {{ fact.type }}: {{ fact.value }}\n{% endfor %}"
        "{% set s = 'ab' ~ 'cd' + 'ef' %}{{ s|replace('c', 'C')|upper }} "
        "{{ ['x', 'y']|join(', ') }} {{ 'line\nline'|indent(2) }} {{ '%s-%d'|format('a', 2) }} "
        "{{ '{0}!'.format('hi') }} {{ [[1], [2]]|sum(start=[]) }} {{ 2 ** 10 * 3 }} "
        "{% macro m(x) %}<{{ x }}>{% endmacro %}{{ m(1) }}"
        "{% set b %}{% for i in range(3) %}{{ i }}{% endfor %}{% endset %}{{ b }}"
    )
    agent = DynamicAgent(dynamic_config(text=text))
    system = agent.build_messages(make_context(board=board))[0]["content"]
    assert system.startswith(
        "Current phase: discovery\nPending: 1\n- price?\n- intent: buy\n"
        "ABCDEF x, y line\n  line a-2 hi! [1, 2] 3072 <1>012"
    )


def test_a_prompt_just_under_the_limit_still_renders() -> None:
    text = "{% set a = 'x' * 50000 %}{% set a = a ~ a %}{% set a = a + a %}{{ a }}"
    agent = DynamicAgent(dynamic_config(text=text))
    system = agent.build_messages(make_context(board=Blackboard()))[0]["content"]
    assert system.startswith("x" * 200_000 + "\n")


SHARED = "{% set p = [1] %}{% set q = [1] %}" + "{% set p, q = [p, q], [q, p] %}" * 28


COMPARES = {
    "==": "{{ p == q }}",
    "eq": "{{ p is eq q }}",
    "in": "{{ p in [q] }}",
    "sort": "{% set r = [p, q]|sort %}",
    "sort by attribute": "{% set r = [{'k': p}, {'k': q}]|sort(attribute='k') %}",
    "max": "{% set r = [p, q]|max %}",
}


@pytest.mark.parametrize("compare", list(COMPARES.values()), ids=list(COMPARES))
def test_comparing_huge_shared_lists_is_refused_at_once(compare: str) -> None:
    agent = DynamicAgent(dynamic_config(text=SHARED + compare))
    started = time.perf_counter()
    with pytest.raises(TemplateError, match=r"too slow for a prompt template"):
        agent.build_messages(make_context(board=Blackboard()))
    assert time.perf_counter() - started < 2


def test_ordinary_comparisons_are_unchanged() -> None:
    text = (
        "{{ 1 < 2 < 3 }} {{ 1 < 3 < 2 }} {{ 'a' in ['a'] }} {{ 'b' not in 'abc' }} "
        "{{ [1, [2]] == [1, [2]] }} {{ missing == other }} {{ 2 is eq 2 }} {{ 3 is in [3] }} "
        "{{ [1, 2, 3]|select('gt', 1)|list }} {{ [3, 1, 2]|sort }} {{ [[2], [1]]|max }} "
        "{{ [{'a': 2}, {'a': 1}]|sort(attribute='a')|map(attribute='a')|list }}"
    )
    agent = DynamicAgent(dynamic_config(text=text))
    system = agent.build_messages(make_context(board=Blackboard()))[0]["content"]
    assert system.startswith(
        "True False True False True True True True [2, 3] [1, 2, 3] [2] [1, 2]"
    )
