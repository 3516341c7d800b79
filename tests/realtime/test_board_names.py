"""The realtime board addresses variables, queues and memories by string names.

Before, a name that was not a string failed or, worse, was renamed: ``set_var(None, 1)``
raised ``AttributeError: 'NoneType' object has no attribute 'startswith'``,
``push_queue(None, x)`` and ``update_memory(None, ...)`` silently wrote under ``"null"``, and
``Blackboard(variables={1: 2})`` read back as ``{"1": 2}``. ``push_queue_items("q", "abc")``
pushed three letters. Each is now a ``TypeError`` naming the argument, and nothing is written.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from deskwork import Desk
from deskwork.realtime import Blackboard
from deskwork.testing import ScriptedAdapter

Write = Callable[[Blackboard], Any]


@pytest.mark.parametrize(
    ("write", "label"),
    [
        (lambda b: b.set_var(None, 1), "key"),
        (lambda b: b.set_var(5, 1), "key"),
        (lambda b: b.delete_var(None), "key"),
        (lambda b: b.push_queue(None, "x"), "queue_name"),
        (lambda b: b.push_queue_items(3, ["x"]), "queue_name"),
        (lambda b: b.pop_queue(None), "queue_name"),
        (lambda b: b.clear_queue(None), "queue_name"),
        (lambda b: b.update_memory(None, {"a": 1}), "agent_id"),
        (lambda b: b.set_memory(7, {"a": 1}), "agent_id"),
    ],
)
def test_a_name_that_is_not_a_string_is_refused(write: Write, label: str) -> None:
    board = Blackboard()
    before = board.to_dict()
    with pytest.raises(TypeError, match=f"{label} must be a string"):
        write(board)
    assert board.to_dict() == before


@pytest.mark.parametrize(
    ("containers", "label"),
    [
        ({"variables": {1: 2}}, "variable name"),
        ({"queues": {None: [1]}}, "queue name"),
        ({"memory": {5: {"a": 1}}}, "agent id"),
    ],
)
def test_a_board_is_not_built_with_names_that_are_not_strings(
    containers: dict[str, Any], label: str
) -> None:
    with pytest.raises(TypeError, match=f"{label} must be a string"):
        Blackboard(**containers)


@pytest.mark.parametrize("items", ["abc", b"abc", {"a": 1}, None, 5])
def test_push_queue_items_wants_a_list_of_items(items: Any) -> None:
    board = Blackboard()
    with pytest.raises(TypeError, match="items must be a list"):
        board.push_queue_items("q", items)
    with pytest.raises(TypeError, match="items of queue 'q' must be a list"):
        Blackboard(queues={"q": items})
    assert board.queues == {}


def test_names_that_are_strings_still_work() -> None:
    board = Blackboard(variables={"a": 1}, queues={"q": (1, 2)}, memory={"m": {"x": 1}})
    board.set_var("b", 2)
    board.push_queue_items("q", iter([3]))
    board.update_memory("m", {"y": 2})
    assert board.variables == {"a": 1, "b": 2}
    assert board.pop_queue("q") == 1 and board.get_queue("q") == [2, 3]
    assert board.get_memory("m") == {"x": 1, "y": 2}


@pytest.mark.parametrize(
    ("containers", "message"),
    [
        ({"variables": [1, 2]}, "variables must be a mapping, got list"),
        ({"queues": "abc"}, "queues must be a mapping, got str"),
        ({"memory": {"a": 5}}, "memory of agent 'a' must be a mapping, got int"),
        ({"events": 5}, "events must be a list of items, got int"),
        ({"facts": "x"}, "facts must be a list of items, got str"),
    ],
)
def test_a_container_of_the_wrong_type_is_named(containers: dict[str, Any], message: str) -> None:
    """Before: "'int' object is not iterable", "dictionary update sequence element #0 ...",
    or "variable name must be a string" for a list of variables."""
    with pytest.raises(TypeError, match=message):
        Blackboard(**containers)
    with pytest.raises(TypeError, match=message):
        Blackboard.from_dict(containers)


@pytest.mark.parametrize("data", [None, 5, "variables"])
def test_from_dict_needs_a_mapping(data: Any) -> None:
    with pytest.raises(TypeError, match="from_dict needs a mapping of containers"):
        Blackboard.from_dict(data)


@pytest.mark.parametrize(
    ("session_id", "error"), [(None, TypeError), (5, TypeError), ("", ValueError)]
)
def test_a_board_is_saved_and_loaded_under_a_real_session_id(
    session_id: Any, error: type[Exception], tmp_path: Path
) -> None:
    """Before, save_to(store, None) kept the board as session "realtime:None", which
    load_from(store, None) (or any other None id) then returned: sessions shared a board."""
    desk = Desk(adapter=ScriptedAdapter(), storage_dir=tmp_path)
    board = Blackboard(variables={"phase": "closing"})
    with pytest.raises(error, match="session_id must"):
        board.save_to(desk.session_store, session_id)
    with pytest.raises(error, match="session_id must"):
        Blackboard.load_from(desk.session_store, session_id)
    assert desk.session_store.get_session("realtime:None") is None


@pytest.mark.parametrize(
    "write",
    [
        lambda b: b.set_var("note \ud83d", 1),
        lambda b: b.set_var("note", {"by \ud83d": 1}),
        lambda b: b.push_queue("q\udc00", 1),
        lambda b: b.update_memory("coach", {"k\ud800": 1}),
        lambda b: Blackboard(variables={"v\ud800": 1}),
        lambda b: b.set_var("note", ({"\ud83d": 1},)),  # a tuple, saved as a list
        lambda b: b.set_var("note", OrderedDict([("\ud83d", 1)])),
        lambda b: b.write("variables", {"v\ud800": 1}, "host"),  # the shared board's API
        lambda b: b.update("queues", lambda q: {**q, "q\ud800": []}, "host"),
    ],
)
def test_a_lone_surrogate_in_a_name_or_key_is_refused(write: Write) -> None:
    """Before, the board took it and then could not be saved: to_state() (so save_to and a
    desk run's state) raised UnicodeEncodeError, for good, on every later save."""
    board = Blackboard(variables={"phase": "closing"})
    with pytest.raises(TypeError, match="lone surrogate"):
        write(board)
    assert board.to_state()["entries"]
    board.set_var("emoji", "half \ud83d")  # in a value it is kept (saved escaped)
    assert Blackboard.from_state(board.to_state()).get_var("emoji") == "half \ud83d"


async def test_a_lone_surrogate_in_shared_state_is_refused_before_the_turn() -> None:
    from rt_support import ScriptAgent, make_context

    from deskwork.realtime import AgentEngine

    engine = AgentEngine(adapter=ScriptedAdapter())
    agent = ScriptAgent("a")
    engine.register_agent(agent)
    context = make_context(shared_state={"k\ud800": 1})
    with pytest.raises(TypeError, match="lone surrogate"):
        await engine.process_turn(context)
    assert agent.calls == []


@pytest.mark.parametrize(
    ("write", "message"),
    [
        (lambda b: b.update_memory("coach", ["a"]), "updates must be a mapping, got list"),
        (lambda b: b.update_memory("coach", "ab"), "updates must be a mapping, got str"),
        (lambda b: b.set_memory("coach", None), "data must be a mapping, got NoneType"),
        (lambda b: b.emit_events(None), "events must be a list of items, got NoneType"),
    ],
)
def test_memory_and_event_writes_name_a_wrong_argument(write: Write, message: str) -> None:
    """Before: "'list' object is not a mapping", "dictionary update sequence element #0 has
    length 1", "'NoneType' object is not iterable"."""
    board = Blackboard()
    with pytest.raises(TypeError, match=message):
        write(board)
    assert board.memory == {} and board.events == []


@pytest.mark.parametrize("store", [None, "sessions"])
def test_save_to_and_load_from_need_a_session_store(store: Any, tmp_path: Path) -> None:
    """Before: AttributeError: 'NoneType' object has no attribute 'get_session'."""
    with pytest.raises(TypeError, match="store must be a SessionStore"):
        Blackboard().save_to(store, "s1")
    with pytest.raises(TypeError, match="store must be a SessionStore"):
        Blackboard.load_from(store, "s1")
    desk = Desk(adapter=ScriptedAdapter(), storage_dir=tmp_path)
    with pytest.raises(TypeError, match="got Desk"):
        Blackboard().save_to(desk, "s1")  # type: ignore[arg-type]


def _damaged(key: str, value: Any) -> dict[str, Any]:
    state = Blackboard(variables={"phase": "closing"}).to_state()
    for entry in state["entries"]:
        if entry["key"] == key:
            entry["value"] = value
    return state


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("variables", [1, 2], "variables must be an object, got list"),
        ("queues", "q", "queues must be an object, got str"),
        ("facts", {"type": "budget"}, "facts must be a list, got dict"),
        ("facts", [{"value": 1}], r"facts\[0\] is not a valid Fact \(type: Field required\)"),
        ("events", [5], r"events\[0\] is not a valid Event"),
    ],
)
def test_a_damaged_state_is_refused_not_read_as_empty(key: str, value: Any, message: str) -> None:
    """Before, a container of the wrong type read as empty (its data then lost at the next
    write, which itself failed: "'list' object is not a mapping") and a broken fact failed
    each read of board.facts with pydantic's ValidationError."""
    with pytest.raises(ValueError, match=message):
        Blackboard.from_state(_damaged(key, value))
    board = Blackboard(variables={"kept": 1})
    with pytest.raises(ValueError, match=message):
        board.restore(_damaged(key, value))
    assert board.variables == {"kept": 1}
