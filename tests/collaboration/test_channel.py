"""Tests for deskwork.collaboration.Channel."""

from __future__ import annotations

import dataclasses
import json
import sys
import threading
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest
from pydantic import BaseModel

from deskwork.collaboration import Channel, ChannelMessage


class Task(BaseModel):
    name: str


def _contents(messages: list[ChannelMessage]) -> list[Any]:
    return [message.content for message in messages]


# --------------------------------------------------------------------------- send


def test_send_returns_message() -> None:
    channel = Channel()
    message = channel.send(
        sender="worker_a",
        recipient="worker_b",
        content={"task": "analyze data"},
        metadata={"priority": "high"},
    )
    assert isinstance(message, ChannelMessage)
    assert (message.sender, message.recipient) == ("worker_a", "worker_b")
    assert message.content == {"task": "analyze data"}
    assert message.metadata == {"priority": "high"}
    assert message.timestamp.tzinfo is not None
    assert not message.is_broadcast
    assert message.id != channel.send("worker_a", "worker_b", "again").id


def test_metadata_defaults_to_empty_dict() -> None:
    assert Channel().send("a", "b", "hi").metadata == {}


def test_broadcast_has_no_recipient() -> None:
    message = Channel().broadcast(sender="manager", content={"status": "starting"})
    assert message.recipient is None
    assert message.is_broadcast


def test_pydantic_content_is_stored_as_json() -> None:
    channel = Channel()
    channel.send("a", "b", Task(name="t"))
    assert _contents(channel.receive("b")) == [{"name": "t"}]


@pytest.mark.parametrize("content", [{1, 2}, object(), b"x"])
def test_non_json_content_is_rejected(content: Any) -> None:
    channel = Channel()
    with pytest.raises(TypeError, match="not JSON-serializable"):
        channel.send("a", "b", content)
    with pytest.raises(TypeError, match="not JSON-serializable"):
        channel.broadcast("a", content)
    assert channel.all_messages() == []


def test_bad_metadata_is_rejected() -> None:
    channel = Channel()
    with pytest.raises(TypeError, match="metadata"):
        channel.send("a", "b", "hi", metadata={"x": object()})
    with pytest.raises(TypeError, match="must be a dict"):
        channel.send("a", "b", "hi", metadata=[1])  # type: ignore[arg-type]  # wrong on purpose
    assert channel.all_messages() == []


def test_message_is_frozen() -> None:
    message = Channel().send("a", "b", "hi")
    with pytest.raises(dataclasses.FrozenInstanceError):
        message.sender = "c"  # type: ignore[misc]  # testing that the dataclass is frozen


def test_stored_content_is_isolated_from_callers() -> None:
    channel = Channel()
    content: dict[str, Any] = {"items": [1]}
    sent = channel.send("a", "b", content, metadata={"tags": ["x"]})
    content["items"].append(2)
    sent.content["items"].append(3)
    sent.metadata["tags"].append("y")
    channel.peek("b")[0].content["items"].append(4)
    [received] = channel.receive("b")
    assert received.content == {"items": [1]}
    assert received.metadata == {"tags": ["x"]}


def test_broadcast_copies_are_independent_per_recipient() -> None:
    channel = Channel()
    channel.broadcast("m", {"items": []})
    channel.receive("a")[0].content["items"].append("evil")
    assert _contents(channel.receive("b")) == [{"items": []}]


# ------------------------------------------------------------------------ receive


def test_receive_returns_and_clears_direct_messages() -> None:
    channel = Channel()
    channel.send("a", "b", 1)
    channel.send("c", "b", 2)
    channel.send("a", "other", 3)
    messages = channel.receive("b")
    assert _contents(messages) == [1, 2]
    assert [m.sender for m in messages] == ["a", "c"]
    assert channel.receive("b") == []
    assert _contents(channel.receive("other")) == [3]


def test_receive_without_clear_keeps_messages() -> None:
    channel = Channel()
    channel.send("a", "b", 1)
    channel.broadcast("m", 2)
    first = channel.receive("b", clear=False, broadcast_mode="one_shot")
    assert _contents(first) == [1, 2]
    assert channel.receive("b", clear=False) == first
    assert _contents(channel.receive("b")) == [1, 2]
    assert channel.receive("b") == []


def test_peek_does_not_consume() -> None:
    channel = Channel()
    channel.send("a", "b", 1)
    channel.broadcast("m", 2)
    assert _contents(channel.peek("b")) == [1, 2]
    assert _contents(channel.peek("b")) == [1, 2]
    assert _contents(channel.receive("b")) == [1, 2]
    assert channel.peek("b") == []
    assert _contents(channel.peek("b", broadcast_mode="all")) == [2]


def test_messages_come_in_send_order() -> None:
    channel = Channel()
    channel.send("a", "b", 1)
    channel.broadcast("m", 2)
    channel.send("c", "b", 3)
    channel.broadcast("n", 4)
    assert _contents(channel.receive("b")) == [1, 2, 3, 4]


def test_one_shot_delivers_each_broadcast_once_per_recipient() -> None:
    channel = Channel()
    channel.broadcast("manager", "go")
    assert _contents(channel.receive("a")) == ["go"]
    assert channel.receive("a") == []
    assert _contents(channel.receive("b")) == ["go"]
    channel.broadcast("manager", "stop")
    assert _contents(channel.receive("a")) == ["stop"]


def test_all_mode_returns_every_broadcast_every_time() -> None:
    channel = Channel()
    channel.broadcast("m", 1)
    channel.receive("a")
    channel.broadcast("m", 2)
    assert _contents(channel.receive("a", broadcast_mode="all")) == [1, 2]
    assert _contents(channel.receive("a", broadcast_mode="all")) == [1, 2]


def test_consuming_receive_in_all_mode_marks_broadcasts_seen() -> None:
    channel = Channel()
    channel.broadcast("m", 1)
    channel.receive("a", broadcast_mode="all")
    assert channel.receive("a") == []


def test_sender_does_not_receive_own_broadcast() -> None:
    channel = Channel()
    channel.broadcast("manager", "hello")
    assert channel.receive("manager") == []
    assert channel.receive("manager", broadcast_mode="all") == []
    channel.send("manager", "manager", "note to self")
    assert _contents(channel.receive("manager")) == ["note to self"]


@pytest.mark.parametrize("mode", ["once", "ALL", ""])
def test_invalid_broadcast_mode_is_rejected(mode: Any) -> None:
    channel = Channel()
    channel.send("a", "b", 1)
    with pytest.raises(ValueError, match="broadcast_mode"):
        channel.receive("b", broadcast_mode=mode)
    with pytest.raises(ValueError, match="broadcast_mode"):
        channel.peek("b", broadcast_mode=mode)
    assert _contents(channel.receive("b")) == [1]


# ---------------------------------------------------------------- all and clear


def test_all_messages_lists_pending_direct_and_broadcast_log() -> None:
    channel = Channel()
    channel.send("a", "b", 1)
    channel.broadcast("m", 2)
    channel.send("a", "c", 3)
    assert _contents(channel.all_messages()) == [1, 2, 3]
    channel.receive("b")
    assert _contents(channel.all_messages()) == [2, 3]


def test_clear_recipient_drops_its_messages_and_marks_broadcasts_seen() -> None:
    channel = Channel()
    channel.send("a", "b", 1)
    channel.send("a", "c", 2)
    channel.broadcast("m", 3)
    channel.clear("b")
    assert channel.receive("b") == []
    assert _contents(channel.receive("c")) == [2, 3]
    assert _contents(channel.receive("b", broadcast_mode="all")) == [3]


def test_clear_all_drops_everything() -> None:
    channel = Channel()
    channel.send("a", "b", 1)
    channel.broadcast("m", 2)
    channel.receive("x")
    channel.clear()
    assert channel.all_messages() == []
    assert channel.receive("b", broadcast_mode="all") == []
    channel.broadcast("m", 3)
    assert _contents(channel.receive("x")) == [3]


def test_repr_counts_messages() -> None:
    channel = Channel()
    channel.send("a", "b", 1)
    channel.broadcast("m", 2)
    assert repr(channel) == "Channel(direct=1, broadcasts=1)"


# -------------------------------------------------------------------- persistence


def test_message_dict_round_trip() -> None:
    message = Channel().send("a", "b", {"x": 1}, metadata={"p": "high"})
    data = json.loads(json.dumps(message.to_dict()))
    assert ChannelMessage.from_dict(data) == message


def test_message_from_bad_dict_is_rejected() -> None:
    with pytest.raises(ValueError, match="ChannelMessage"):
        ChannelMessage.from_dict({"id": "1"})


def test_state_round_trips_through_json() -> None:
    channel = Channel()
    channel.send("a", "b", {"x": [1]}, metadata={"p": 1})
    channel.broadcast("m", "news")
    channel.send("a", "c", 2)
    channel.receive("c")
    state = json.loads(json.dumps(channel.to_state()))
    restored = Channel.from_state(state)
    assert restored.all_messages() == channel.all_messages()
    assert restored.receive("c") == []
    restored.send("z", "b", "after restart")
    assert _contents(restored.receive("b")) == [{"x": [1]}, "news", "after restart"]
    assert restored.to_state()["cursors"] == {"c": 3, "b": 4}


def test_restore_keeps_sequence_ahead_of_stored_messages() -> None:
    channel = Channel()
    channel.send("a", "b", 1)
    channel.send("a", "b", 2)
    state = channel.to_state()
    state["next_seq"] = 0
    restored = Channel.from_state(state)
    restored.send("a", "b", 3)
    assert _contents(restored.receive("b")) == [1, 2, 3]


def test_restore_replaces_contents() -> None:
    channel = Channel()
    channel.send("a", "b", "old")
    channel.restore(Channel().to_state())
    assert channel.all_messages() == []


@pytest.mark.parametrize(
    "state",
    [
        {},
        {"version": 2, "next_seq": 0, "messages": [], "cursors": {}},
        {"version": 1, "messages": [], "cursors": {}},
        {"version": 1, "next_seq": 0, "messages": [{"seq": 0}], "cursors": {}},
        {"version": 1, "next_seq": 0, "messages": [], "cursors": []},
    ],
)
def test_invalid_state_is_rejected_and_channel_unchanged(state: dict[str, Any]) -> None:
    channel = Channel()
    channel.send("a", "b", 1)
    with pytest.raises(ValueError):
        channel.restore(state)
    assert _contents(channel.all_messages()) == [1]


# ------------------------------------------------------------------------- async


async def test_async_variants() -> None:
    channel = Channel()
    sent = await channel.asend("a", "b", 1, {"m": 1})
    assert sent.metadata == {"m": 1}
    await channel.abroadcast("m", 2, None)
    assert _contents(await channel.apeek("b")) == [1, 2]
    assert _contents(await channel.aall_messages()) == [1, 2]
    assert _contents(await channel.areceive("b", clear=True, broadcast_mode="one_shot")) == [1, 2]
    assert _contents(await channel.areceive("b", broadcast_mode="all")) == [2]
    await channel.asend("a", "c", 3)
    await channel.aclear("c")
    assert await channel.areceive("c") == []
    await channel.aclear()
    assert await channel.aall_messages() == []


# ---------------------------------------------------------------------- hammering


@pytest.fixture
def fast_thread_switching() -> Iterator[None]:
    """Switch threads very often so that missing locks show up as lost or doubled messages."""
    previous = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    yield
    sys.setswitchinterval(previous)


def _run_threads(targets: list[Any]) -> None:
    start = threading.Barrier(len(targets))

    def run(target: Any) -> None:
        start.wait()
        target()

    threads = [threading.Thread(target=run, args=(target,)) for target in targets]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


def _drain_while(channel: Channel, produce: Any, recipient: str) -> list[ChannelMessage]:
    """Run ``produce()`` while 4 threads receive for ``recipient``; return what they got."""
    produced = threading.Event()
    received: list[ChannelMessage] = []
    lock = threading.Lock()

    def receiver() -> None:
        while True:
            done = produced.is_set()
            batch = channel.receive(recipient)
            with lock:
                received.extend(batch)
            if done and not batch:
                return

    def producer() -> None:
        produce()
        produced.set()

    _run_threads([producer, receiver, receiver, receiver, receiver])
    return received


@pytest.mark.usefixtures("fast_thread_switching")
def test_concurrent_sends_are_received_exactly_once() -> None:
    channel = Channel()
    sent_ids: list[str] = []

    def sender(index: int) -> None:
        for i in range(200):
            sent_ids.append(channel.send(f"s{index}", "r", {"s": index, "i": i}).id)

    def senders() -> None:
        _run_threads([lambda index=index: sender(index) for index in range(8)])

    received = _drain_while(channel, senders, "r")
    assert channel.to_state()["next_seq"] == 1600
    ids = Counter(message.id for message in received)
    assert len(received) == 1600
    assert set(ids.values()) == {1}
    assert set(ids) == set(sent_ids)
    for index in range(8):
        mine = [m.content["i"] for m in received if m.content["s"] == index]
        assert sorted(mine) == list(range(200))


@pytest.mark.usefixtures("fast_thread_switching")
def test_concurrent_one_shot_receivers_get_each_broadcast_once() -> None:
    channel = Channel()

    def broadcaster() -> None:
        for i in range(500):
            channel.broadcast("m", i)

    received = _drain_while(channel, broadcaster, "r")
    assert sorted(_contents(received)) == list(range(500))
