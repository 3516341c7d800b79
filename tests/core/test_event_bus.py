"""EventBus: subscribe/unsubscribe, wildcard, async handlers, error collection."""

from __future__ import annotations

import asyncio
import threading

import pytest

from deskwork import Event, EventHandlerError, EventType
from deskwork.event_bus import EventBus
from deskwork.utils import new_id, utc_now


def _event(event_type: str = "run.started", **payload: object) -> Event:
    return Event(
        event_id=new_id(),
        type=event_type,
        timestamp=utc_now(),
        run_id="r",
        source="src",
        payload=dict(payload),
    )


def test_exact_and_wildcard_subscriptions() -> None:
    bus = EventBus()
    exact: list[str] = []
    everything: list[str] = []
    bus.subscribe("run.started", lambda e: exact.append(e.type))
    bus.subscribe("*", lambda e: everything.append(e.type))
    bus.emit(_event("run.started"))
    bus.emit(_event("tool.started"))
    assert exact == ["run.started"]
    assert everything == ["run.started", "tool.started"]
    assert bus.has_subscribers("anything") and bus.has_subscribers("run.started")


def test_enum_subscription_matches_string_events() -> None:
    bus = EventBus()
    got: list[Event] = []
    bus.subscribe(EventType.TOOL_FAILED, got.append)
    bus.emit(_event("tool.failed"))
    assert len(got) == 1


def test_unsubscribe_removes_only_that_handler() -> None:
    bus = EventBus()
    calls: list[str] = []

    def first(event: Event) -> None:
        calls.append("first")

    def second(event: Event) -> None:
        calls.append("second")

    bus.subscribe("run.started", first)
    bus.subscribe("run.started", second)
    bus.subscribe("*", first)
    bus.unsubscribe("run.started", first)
    bus.unsubscribe("run.started", lambda e: None)  # unknown handlers are ignored
    bus.emit(_event())
    assert calls == ["second", "first"]
    bus.unsubscribe("*", first)
    calls.clear()
    bus.emit(_event())
    assert calls == ["second"]
    assert not EventBus().has_subscribers("run.started")


def test_handlers_run_in_subscription_order() -> None:
    bus = EventBus()
    order: list[int] = []
    for i in range(5):

        def handler(event: Event, i: int = i) -> None:
            order.append(i)

        bus.subscribe("x", handler)
    bus.emit(_event("x"))
    assert order == [0, 1, 2, 3, 4]


def test_sync_handler_error_is_collected_and_later_handlers_still_run() -> None:
    bus = EventBus()
    after: list[str] = []

    def broken(event: Event) -> None:
        raise ValueError("handler broke")

    bus.subscribe("run.started", broken)
    bus.subscribe("run.started", lambda e: after.append("ran"))
    bus.emit(_event())
    assert after == ["ran"]
    errors = bus.get_errors()
    assert len(errors) == 1
    assert isinstance(errors[0], EventHandlerError)
    assert errors[0].event_type == "run.started"
    assert isinstance(errors[0].handler_error, ValueError)
    bus.clear_errors()
    assert bus.get_errors() == []


def test_async_handler_from_sync_code_runs_to_completion() -> None:
    bus = EventBus()
    done: list[str] = []

    async def handler(event: Event) -> None:
        await asyncio.sleep(0.01)
        done.append(event.type)

    bus.subscribe("run.started", handler)
    bus.emit(_event())
    assert done == ["run.started"]


async def test_async_handler_in_loop_is_scheduled_and_awaited_by_await_pending() -> None:
    bus = EventBus()
    done: list[str] = []

    async def handler(event: Event) -> None:
        await asyncio.sleep(0.02)
        done.append(event.type)

    bus.subscribe("*", handler)
    bus.emit(_event())
    assert done == []  # scheduled, not yet finished
    assert await bus.await_pending() == []
    assert done == ["run.started"]


async def test_await_pending_collects_async_errors_and_can_raise() -> None:
    bus = EventBus()

    async def broken(event: Event) -> None:
        await asyncio.sleep(0)
        raise RuntimeError("async broke")

    bus.subscribe("run.started", broken)
    bus.emit(_event())
    errors = await bus.await_pending()
    assert [type(e.handler_error) for e in errors] == [RuntimeError]
    bus.emit(_event())
    with pytest.raises(EventHandlerError) as info:
        await bus.await_pending(raise_on_error=True)
    assert info.value.event_type == "run.started"


async def test_aemit_awaits_async_handlers_and_awaitable_returns() -> None:
    bus = EventBus()
    done: list[str] = []

    async def handler(event: Event) -> None:
        await asyncio.sleep(0.01)
        done.append("async")

    async def later() -> None:
        done.append("returned")

    def sync_returning_awaitable(event: Event) -> object:
        return later()

    async def broken(event: Event) -> None:
        raise KeyError("k")

    bus.subscribe("x", handler)
    bus.subscribe("x", sync_returning_awaitable)
    bus.subscribe("x", broken)
    await bus.aemit(_event("x"))
    assert done == ["async", "returned"]
    assert len(bus.get_errors()) == 1


async def test_await_pending_ignores_handlers_of_other_loops() -> None:
    bus = EventBus()
    done: list[str] = []
    other_started = threading.Event()

    async def slow(event: Event) -> None:
        other_started.set()
        await asyncio.sleep(0.2)
        done.append(event.source)

    bus.subscribe("x", slow)

    def other_thread() -> None:
        async def main() -> None:
            bus.emit(_event("x"))
            await asyncio.sleep(0.3)

        asyncio.run(main())

    thread = threading.Thread(target=other_thread)
    thread.start()
    assert await asyncio.to_thread(other_started.wait, 2.0)
    assert await bus.await_pending() == []  # nothing of this loop; the other loop's task stays
    thread.join()
    assert done == ["src"]
