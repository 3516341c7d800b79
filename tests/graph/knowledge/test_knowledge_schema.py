"""react_config.yaml schema: defaults, strictness, dependency references and cycles."""

from __future__ import annotations

import graphlib
import itertools
import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from deskwork.graph.knowledge import (
    DEFAULT_MAX_PASSES,
    KnowledgeSlotDef,
    ReactActionSchema,
    ReactConfigSchema,
    ReactSlotSchema,
)


def _slot(*deps: str) -> dict[str, Any]:
    return {"description": "d", "modules": ["slots/x.md"], "dependencies": list(deps)}


def test_defaults() -> None:
    cfg = ReactConfigSchema()
    assert DEFAULT_MAX_PASSES == 5
    assert cfg.max_passes == 5
    assert cfg.actions == {}
    assert cfg.slots == {}
    slot = ReactSlotSchema(description="d", modules=["a.md"])
    assert (slot.dependencies, slot.triggers, slot.max_tokens) == ([], "", None)
    action = ReactActionSchema(description="d")
    assert (action.parameters, action.required) == ({}, [])


def test_seed_example_validates() -> None:
    cfg = ReactConfigSchema.model_validate(
        {
            "max_passes": 5,
            "actions": {
                "request_slot": {
                    "description": "Load a knowledge slot",
                    "parameters": {"slot": "Name of the slot"},
                    "required": ["slot"],
                },
                "decide": {
                    "description": "Final decision",
                    "parameters": {"next_agent": "target", "content": "why"},
                    "required": ["next_agent"],
                },
            },
            "slots": {
                "routing_rules": {
                    "description": "Rules",
                    "modules": ["slots/routing_rules.md"],
                    "triggers": "When deciding",
                    "max_tokens": 2000,
                },
                "escalation_policy": {
                    "description": "Escalation",
                    "modules": ["slots/escalation_policy.md"],
                    "dependencies": ["routing_rules"],
                },
            },
        }
    )
    assert cfg.slots["escalation_policy"].dependencies == ["routing_rules"]
    assert cfg.actions["decide"].required == ["next_agent"]


@pytest.mark.parametrize(
    "data",
    [
        {"max_passes": 0},
        {"max_passes": -1},
        {"unknown_field": 1},
        {"slots": {"a": {"description": "d", "modules": []}}},
        {"slots": {"a": {"description": "d", "modules": ["a.md"], "max_tokens": 0}}},
        {"slots": {"a": {"description": "d", "modules": ["a.md"], "extra": 1}}},
        {"slots": {"a": {"modules": ["a.md"]}}},
        {"actions": {"x": {"description": "d", "bogus": True}}},
        {"actions": {"x": {"description": "d", "required": ["p"]}}},
    ],
    ids=[
        "zero-passes",
        "negative-passes",
        "typo-top-level",
        "no-modules",
        "zero-max-tokens",
        "typo-in-slot",
        "slot-without-description",
        "typo-in-action",
        "required-not-declared",
    ],
)
def test_invalid_configs_are_rejected(data: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        ReactConfigSchema.model_validate(data)


def test_models_are_frozen() -> None:
    cfg = ReactConfigSchema()
    with pytest.raises(ValidationError):
        cfg.max_passes = 3


def test_unknown_dependency_is_named() -> None:
    with pytest.raises(ValidationError, match="'a' depends on unknown slot 'ghost'"):
        ReactConfigSchema.model_validate({"slots": {"a": _slot("ghost")}})


def test_self_dependency_is_rejected() -> None:
    with pytest.raises(ValidationError, match="'a' depends on itself"):
        ReactConfigSchema.model_validate({"slots": {"a": _slot("a")}})


def test_two_slot_cycle_is_reported_with_its_path() -> None:
    with pytest.raises(ValidationError, match=r"circular slot dependency: a -> b -> a"):
        ReactConfigSchema.model_validate({"slots": {"a": _slot("b"), "b": _slot("a")}})


def test_long_cycle_behind_an_acyclic_prefix_is_found() -> None:
    slots = {
        "root": _slot("c1"),
        "c1": _slot("c2"),
        "c2": _slot("c3"),
        "c3": _slot("c1"),
        "free": _slot(),
    }
    with pytest.raises(ValidationError, match=r"c1 -> c2 -> c3 -> c1"):
        ReactConfigSchema.model_validate({"slots": slots})


def test_diamond_is_not_a_cycle() -> None:
    slots = {"top": _slot("l", "r"), "l": _slot("base"), "r": _slot("base"), "base": _slot()}
    cfg = ReactConfigSchema.model_validate({"slots": slots})
    assert set(cfg.slots) == {"top", "l", "r", "base"}


def test_slot_def_from_schema() -> None:
    schema = ReactSlotSchema(
        description="d", modules=["a.md", "b.md"], dependencies=["x"], triggers="t", max_tokens=9
    )
    slot = KnowledgeSlotDef.from_schema("s", schema)
    assert slot.name == "s"
    assert slot.modules == ("a.md", "b.md")
    assert slot.dependencies == ("x",)
    assert (slot.triggers, slot.max_tokens) == ("t", 9)


_NAMES = ["a", "b", "c", "d", "e", "f"]


@settings(max_examples=100, deadline=None)
@given(
    st.dictionaries(
        st.sampled_from(_NAMES),
        st.lists(st.sampled_from(_NAMES), max_size=3, unique=True),
        min_size=1,
    )
)
def test_cycle_detection_agrees_with_graphlib(graph: dict[str, list[str]]) -> None:
    # Keep only references to declared slots and no self-references: those fail earlier.
    graph = {name: [d for d in deps if d in graph and d != name] for name, deps in graph.items()}
    try:
        graphlib.TopologicalSorter(graph).prepare()
        acyclic = True
    except graphlib.CycleError:
        acyclic = False
    data = {"slots": {name: _slot(*deps) for name, deps in graph.items()}}
    if acyclic:
        assert set(ReactConfigSchema.model_validate(data).slots) == set(graph)
    else:
        with pytest.raises(ValidationError, match="circular slot dependency") as info:
            ReactConfigSchema.model_validate(data)
        # The reported path is a real cycle: closed, and every hop is a declared dependency.
        path = re.search(r"circular slot dependency: ([a-f ->]+)", str(info.value))
        assert path is not None
        hops = path.group(1).strip().split(" -> ")
        assert hops[0] == hops[-1]
        assert all(b in graph[a] for a, b in itertools.pairwise(hops))
