"""Built-in middleware: metrics, tenant isolation, circuit breaker, memory injection."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

import pytest
from langchain_core.runnables import RunnableConfig
from structlog.testing import capture_logs

from deskwork.graph.agents.base import BaseAgent
from deskwork.graph.agents.circuit_breaker import CircuitBreakerMiddleware, CircuitBreakerState
from deskwork.graph.agents.memory_injection import MemoryInjectionMiddleware
from deskwork.graph.agents.metrics import (
    InMemoryMetricsCollector,
    InvocationRecord,
    MetricsCollector,
    MetricsMiddleware,
)
from deskwork.graph.agents.middleware import AgentMiddleware
from deskwork.graph.agents.tenant_isolation import TenantIsolationMiddleware
from deskwork.graph.config.schema import AgentConfig
from deskwork.graph.core.exceptions import (
    AgentProcessError,
    CircuitBreakerOpenError,
    TenantIsolationError,
)
from deskwork.graph.core.state import OrchestratorState
from deskwork.graph.core.types import AgentResponse
from deskwork.graph.session.in_memory import InMemorySessionManager
from deskwork.graph.session.models import Memory
from deskwork.graph.testing import make_test_state


class ScriptedAgent(BaseAgent):
    """Runs ``behaviour(state)`` as its process(): return a response or raise."""

    def __init__(self, name: str, behaviour: Any, middleware: list[AgentMiddleware]) -> None:
        super().__init__(
            AgentConfig(name=name, type="custom", description="test agent"),
            middleware=middleware,
        )
        self.behaviour = behaviour
        self.calls = 0
        self.states: list[OrchestratorState] = []

    async def process(
        self, state: OrchestratorState, config: RunnableConfig | None = None
    ) -> AgentResponse:
        self.calls += 1
        self.states.append(state)
        result = self.behaviour(state)
        if asyncio.iscoroutine(result):
            result = await result
        if isinstance(result, Exception):
            raise result
        assert isinstance(result, AgentResponse)
        return result


def ok(name: str = "agent", **kwargs: Any) -> Any:
    return lambda state: AgentResponse(agent_name=name, content="ok", **kwargs)


class TestMetrics:
    async def test_records_duration_usage_and_route_of_each_success(self) -> None:
        collector = InMemoryMetricsCollector()
        assert isinstance(collector, MetricsCollector)

        async def slow(state: OrchestratorState) -> AgentResponse:
            await asyncio.sleep(0.02)
            return AgentResponse(
                agent_name="agent",
                content="ok",
                next_agent="supervisor",
                token_usage={"input_tokens": 10, "output_tokens": 5},
            )

        agent = ScriptedAgent("agent", slow, [MetricsMiddleware(collector)])
        await agent.invoke(make_test_state())
        await agent.invoke(make_test_state())
        first, _second = collector.invocations
        assert first.agent_name == "agent"
        assert first.next_agent == "supervisor"
        assert first.duration_seconds >= 0.015
        assert collector.total_tokens() == {"input_tokens": 20, "output_tokens": 10}
        assert collector.total_tokens("other") == {}
        assert collector.errors == []

    async def test_records_errors_with_type_and_message(self) -> None:
        collector = InMemoryMetricsCollector()
        agent = ScriptedAgent("agent", lambda s: ValueError("nope"), [MetricsMiddleware(collector)])
        with pytest.raises(AgentProcessError):
            await agent.invoke(make_test_state())
        [error] = collector.errors
        assert (error.agent_name, error.error_type, error.error_message) == (
            "agent",
            "ValueError",
            "nope",
        )
        assert collector.invocations == []
        collector.clear()
        assert collector.errors == []

    async def test_concurrent_invocations_keep_their_own_timings(self) -> None:
        collector = InMemoryMetricsCollector()
        metrics = MetricsMiddleware(collector)

        slow_started, fast_done = asyncio.Event(), asyncio.Event()

        async def run_slow(state: OrchestratorState) -> AgentResponse:
            slow_started.set()
            await fast_done.wait()  # it ends only after the whole fast call
            return AgentResponse(agent_name="slow", content="ok")

        fast = ScriptedAgent("fast", ok("fast"), [metrics])
        slow = ScriptedAgent("slow", run_slow, [metrics])

        async def fast_later() -> None:
            await slow_started.wait()
            await asyncio.sleep(0.06)  # the slow call has run this long when the fast one starts
            await fast.invoke(make_test_state())
            fast_done.set()

        # the fast call starts and ends while the slow one runs; with the start time kept on
        # the shared middleware instead of a ContextVar, the slow call would be timed from the
        # fast call's start: about as long as the fast call, not 0.06 s longer
        await asyncio.wait_for(asyncio.gather(slow.invoke(make_test_state()), fast_later()), 60)
        durations = {r.agent_name: r.duration_seconds for r in collector.invocations}
        assert durations["slow"] >= durations["fast"] + 0.05

    async def test_custom_collector_satisfies_the_protocol(self) -> None:
        seen: list[InvocationRecord] = []

        class ListCollector:
            def record_invocation(self, record: InvocationRecord) -> None:
                seen.append(record)

            def record_error(self, record: Any) -> None:
                raise AssertionError("no errors expected")

        agent = ScriptedAgent("agent", ok(), [MetricsMiddleware(ListCollector())])
        await agent.invoke(make_test_state())
        assert [r.agent_name for r in seen] == ["agent"]


class TestTenantIsolation:
    async def test_unchanged_identity_passes(self) -> None:
        agent = ScriptedAgent("agent", ok(), [TenantIsolationMiddleware()])
        update = await agent.invoke(make_test_state())
        assert update["messages"][0].content == "ok"

    async def test_state_mutation_of_user_id_is_refused(self) -> None:
        def steal(state: OrchestratorState) -> AgentResponse:
            state["user_id"] = "victim"
            return AgentResponse(agent_name="agent", content="ok")

        agent = ScriptedAgent("agent", steal, [TenantIsolationMiddleware()])
        with pytest.raises(TenantIsolationError, match="user_id"):
            await agent.invoke(make_test_state())

    async def test_session_id_in_slots_update_is_refused(self) -> None:
        agent = ScriptedAgent(
            "agent", ok(slots_update={"session_id": "other"}), [TenantIsolationMiddleware()]
        )
        with pytest.raises(TenantIsolationError, match="session_id"):
            await agent.invoke(make_test_state())

    async def test_same_value_in_slots_update_is_allowed(self) -> None:
        agent = ScriptedAgent(
            "agent",
            ok(slots_update={"session_id": "test-session"}),
            [TenantIsolationMiddleware()],
        )
        await agent.invoke(make_test_state())

    async def test_concurrent_tenants_are_checked_against_their_own_identity(self) -> None:
        mw = TenantIsolationMiddleware()

        async def pause(state: OrchestratorState) -> AgentResponse:
            await asyncio.sleep(0.01)
            return AgentResponse(agent_name="agent", content=str(state["user_id"]))

        agent = ScriptedAgent("agent", pause, [mw])
        states = [make_test_state(user_id=f"user-{i}") for i in range(4)]
        updates = await asyncio.gather(*(agent.invoke(s) for s in states))
        assert [u["messages"][0].content for u in updates] == [f"user-{i}" for i in range(4)]


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class TestCircuitBreaker:
    def _agent(self, breaker: CircuitBreakerMiddleware, outcomes: list[bool]) -> ScriptedAgent:
        def run(state: OrchestratorState) -> Any:
            good = outcomes.pop(0)
            return AgentResponse(agent_name="agent", content="ok") if good else OSError("down")

        return ScriptedAgent("agent", run, [breaker])

    async def test_opens_after_threshold_and_rejects_without_calling_the_agent(self) -> None:
        breaker = CircuitBreakerMiddleware(failure_threshold=2, recovery_timeout_seconds=60)
        agent = self._agent(breaker, [False, False])
        for _ in range(2):
            with pytest.raises(AgentProcessError):
                await agent.invoke(make_test_state())
        assert breaker.state is CircuitBreakerState.OPEN
        with pytest.raises(CircuitBreakerOpenError, match="open"):
            await agent.invoke(make_test_state())
        assert agent.calls == 2  # the open circuit never reached process()
        assert breaker.failure_count == 2  # its own rejection is not counted as a failure

    async def test_success_resets_the_consecutive_failure_count(self) -> None:
        breaker = CircuitBreakerMiddleware(failure_threshold=2)
        agent = self._agent(breaker, [False, True, False])
        for _ in range(3):
            with contextlib.suppress(AgentProcessError):
                await agent.invoke(make_test_state())
        assert breaker.state is CircuitBreakerState.CLOSED
        assert breaker.failure_count == 1

    async def test_half_open_probe_success_closes_the_circuit(self) -> None:
        clock = FakeClock()  # a real 10 ms timeout elapses before the OPEN check under load
        breaker = CircuitBreakerMiddleware(
            failure_threshold=1, recovery_timeout_seconds=10, clock=clock
        )
        agent = self._agent(breaker, [False, True, True])
        with pytest.raises(AgentProcessError):
            await agent.invoke(make_test_state())
        assert breaker.state is CircuitBreakerState.OPEN
        clock.now += 9.9
        assert breaker.state is CircuitBreakerState.OPEN
        clock.now += 0.1
        assert breaker.state is CircuitBreakerState.HALF_OPEN
        await agent.invoke(make_test_state())
        assert breaker.state is CircuitBreakerState.CLOSED
        await agent.invoke(make_test_state())
        assert agent.calls == 3

    async def test_half_open_probe_failure_reopens_and_restarts_the_timer(self) -> None:
        clock = FakeClock()
        breaker = CircuitBreakerMiddleware(
            failure_threshold=3, recovery_timeout_seconds=10, clock=clock
        )
        agent = self._agent(breaker, [False, False, False, False])
        for _ in range(3):
            with pytest.raises(AgentProcessError):
                await agent.invoke(make_test_state())
        clock.now += 10
        with pytest.raises(AgentProcessError):  # the probe runs and fails
            await agent.invoke(make_test_state())
        assert breaker.state is CircuitBreakerState.OPEN
        clock.now += 9.9
        with pytest.raises(CircuitBreakerOpenError):
            await agent.invoke(make_test_state())
        assert agent.calls == 4

    async def test_only_one_probe_at_a_time_in_half_open(self) -> None:
        clock = FakeClock()
        breaker = CircuitBreakerMiddleware(
            failure_threshold=1, recovery_timeout_seconds=1, clock=clock
        )
        release = asyncio.Event()
        outcomes = [False]

        async def run(state: OrchestratorState) -> Any:
            if outcomes:
                outcomes.pop()
                return OSError("down")
            await release.wait()
            return AgentResponse(agent_name="agent", content="ok")

        agent = ScriptedAgent("agent", run, [breaker])
        with pytest.raises(AgentProcessError):
            await agent.invoke(make_test_state())
        clock.now += 1
        probe = asyncio.create_task(agent.invoke(make_test_state()))
        await asyncio.sleep(0)
        with pytest.raises(CircuitBreakerOpenError, match="probe"):
            await agent.invoke(make_test_state())
        release.set()
        await probe
        assert breaker.state is CircuitBreakerState.CLOSED

    def test_rejects_nonsense_settings_and_resets(self) -> None:
        with pytest.raises(ValueError, match="failure_threshold"):
            CircuitBreakerMiddleware(failure_threshold=0)
        with pytest.raises(ValueError, match="recovery_timeout_seconds"):
            CircuitBreakerMiddleware(recovery_timeout_seconds=-1)
        breaker = CircuitBreakerMiddleware()
        assert "state=closed" in repr(breaker)
        breaker.reset()
        assert breaker.state == "closed"


def _memory(key: str, value: str, importance: float, **kw: Any) -> Memory:
    return Memory(
        session_id=kw.pop("session_id", "test-session"),
        key=key,
        value=value,
        importance=importance,
        **kw,
    )


class TestMemoryInjection:
    async def test_injects_session_and_user_memories_deduped_and_sorted(self) -> None:
        mgr = InMemorySessionManager()
        await mgr.store_memory("test-session", _memory("theme", "dark theme", 0.4))
        await mgr.store_memory(
            "old-session",
            _memory("theme", "light theme", 0.9, session_id="old-session", user_id="test-user"),
            user_id="test-user",
        )
        await mgr.store_memory("test-session", _memory("language", "theme in french", 0.6))
        agent = ScriptedAgent("agent", ok(), [MemoryInjectionMiddleware(mgr, limit=5)])
        state = make_test_state("theme")
        await agent.invoke(state)
        injected = agent.states[0]["knowledge_context"]["_injected_memories"]
        # one memory per key, the more important one wins, most important first
        assert [(m["key"], m["value"]) for m in injected] == [
            ("theme", "light theme"),
            ("language", "theme in french"),
        ]
        assert "_injected_memories" not in state["knowledge_context"]  # caller's state untouched

    async def test_respects_limit(self) -> None:
        mgr = InMemorySessionManager()
        for i in range(4):
            await mgr.store_memory("test-session", _memory(f"k{i}", "topic", i / 10))
        agent = ScriptedAgent("agent", ok(), [MemoryInjectionMiddleware(mgr, limit=2)])
        await agent.invoke(make_test_state("topic"))
        injected = agent.states[0]["knowledge_context"]["_injected_memories"]
        assert [m["key"] for m in injected] == ["k3", "k2"]

    async def test_anonymous_users_get_no_cross_session_search(self) -> None:
        calls: list[str] = []

        class Spy(InMemorySessionManager):
            async def search_memories_by_user(
                self, user_id: str, query: str, limit: int = 10
            ) -> list[Memory]:
                calls.append(user_id)
                return []

        agent = ScriptedAgent("agent", ok(), [MemoryInjectionMiddleware(Spy())])
        await agent.invoke(make_test_state("hi", user_id="anonymous"))
        assert calls == []
        await agent.invoke(make_test_state("hi", user_id="alice"))
        assert calls == ["alice"]

    async def test_backend_without_search_is_skipped_silently(self) -> None:
        class NoSearch(InMemorySessionManager):
            async def search_memories(self, *a: Any, **k: Any) -> list[Memory]:
                raise NotImplementedError

            async def search_memories_by_user(self, *a: Any, **k: Any) -> list[Memory]:
                raise NotImplementedError

        agent = ScriptedAgent("agent", ok(), [MemoryInjectionMiddleware(NoSearch())])
        with capture_logs() as logs:
            await agent.invoke(make_test_state("hi"))
        assert "_injected_memories" not in agent.states[0]["knowledge_context"]
        assert not [e for e in logs if e["event"] == "memory_injection_failed"]

    async def test_broken_backend_never_blocks_the_agent(self) -> None:
        class Broken(InMemorySessionManager):
            async def search_memories(self, *a: Any, **k: Any) -> list[Memory]:
                raise ConnectionError("db down")

        agent = ScriptedAgent("agent", ok(), [MemoryInjectionMiddleware(Broken())])
        with capture_logs() as logs:
            update = await agent.invoke(make_test_state("hi"))
        assert update["messages"][0].content == "ok"
        [warning] = [e for e in logs if e["event"] == "memory_injection_failed"]
        assert warning["exc_type"] == "ConnectionError"

    def test_limit_must_be_positive(self) -> None:
        with pytest.raises(ValueError, match="limit"):
            MemoryInjectionMiddleware(InMemorySessionManager(), limit=0)
