"""ReactExecutor: the pass loop, knowledge loading, errors, limits and cancellation."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
import structlog.testing
from langchain_core.runnables import RunnableConfig
from react_helpers import (
    MakeExecutor,
    SlowMockLLM,
    decide,
    human_text,
    note,
    system_text,
    xml,
)

from deskwork.graph._events import graph_emitter
from deskwork.graph.config.schema import RetryConfig, TimeoutConfig
from deskwork.graph.core.exceptions import (
    LLMInvocationError,
    LLMRetryExhaustedError,
    ReactCancellationError,
    ReactConsecutiveErrorsError,
    ReactError,
    ReactMaxPassesError,
    ReservedStateKeyError,
)
from deskwork.graph.core.rate_limiting import RateLimiter
from deskwork.graph.knowledge import ReactTemplateManager
from deskwork.graph.react import ReactExecutor, TerminalActionResult
from deskwork.graph.react.executor import RESERVED_STATE_KEYS
from deskwork.graph.testing import MockLLM

USAGE = {"input_tokens": 10, "output_tokens": 5}


# -- the happy path -----------------------------------------------------------------------


async def test_load_knowledge_then_decide(make_executor: MakeExecutor) -> None:
    llm = MockLLM(
        responses=[
            xml("request_slot", "I need the rules", slot="routing_rules"),
            xml("decide", "Billing it is", next_agent="billing"),
        ],
        usage_tokens=USAGE,
    )
    executor, _ = make_executor(llm=llm)
    result = await executor.execute("Why was I charged twice?", {"allowed_agents": "billing"})

    assert result["next_agent"] == "billing"
    assert result["content"] == "done"
    assert result["_token_usage"] == {"input_tokens": 20, "output_tokens": 10, "total_tokens": 30}
    assert result["_loaded_slot_contents"] == {
        "routing_rules": "RULE: billing questions go to billing."
    }
    assert llm.call_count == 2
    second = human_text(llm, 1)
    assert "Why was I charged twice?" in second
    assert "### routing_rules\nRULE: billing questions go to billing." in second
    assert "Thought: I need the rules" in second
    assert "Loaded knowledge slot 'routing_rules'" in second
    assert "This is pass 2 of 4" in second


async def test_system_prompt_is_the_filled_core_template(make_executor: MakeExecutor) -> None:
    executor, llm = make_executor([xml("decide", next_agent="billing")])
    await executor.execute("hi", {"allowed_agents": "billing, support"})
    system = system_text(llm, 0)
    assert system.startswith("You are supervisor. Route to one of: billing, support.")
    assert "- decide: Make a final routing decision" in system
    assert "- routing_rules: Rules for routing requests" in system
    assert '<action type="ACTION_NAME">' in system  # the reply format


async def test_dependencies_are_loaded_and_shown(make_executor: MakeExecutor) -> None:
    executor, llm = make_executor(
        [xml("request_slot", slot="escalation_policy"), xml("decide", next_agent="ops")]
    )
    result = await executor.execute("P1 outage", {})
    assert list(result["_loaded_slot_contents"]) == ["routing_rules", "escalation_policy"]
    assert result["_loaded_slot_contents"]["escalation_policy"] == "POLICY: page on-call for P1."
    assert "(with routing_rules)" in human_text(llm, 1)


async def test_no_knowledge_means_no_loaded_contents_key(make_executor: MakeExecutor) -> None:
    executor, _ = make_executor([xml("decide", next_agent="billing")])
    result = await executor.execute("hi", {})
    assert "_loaded_slot_contents" not in result
    assert result["_token_usage"] == {"input_tokens": 0, "output_tokens": 0, "total_tokens": 0}


async def test_handlers_see_state_and_updates_persist(make_executor: MakeExecutor) -> None:
    seen: list[dict[str, Any]] = []

    async def finish(params: dict[str, Any], state: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        seen.append(state)
        raise TerminalActionResult({"next_agent": "x", "notes": state["notes"]})

    executor, _ = make_executor(
        [xml("note", text="a"), xml("note", text="b"), xml("decide", next_agent="x")],
        handlers={"note": note, "decide": finish},
    )
    result = await executor.execute("input", {"tenant": "acme"})
    assert result["notes"] == ["a", "b"]
    state = seen[0]
    assert state["tenant"] == "acme"
    assert state["_user_input"] == "input"
    assert state["_pass_number"] == 3
    assert state["_observations"] == ["noted a", "noted b"]
    assert state["_previous_thoughts"] == ["thinking", "thinking"]


async def test_config_reaches_three_argument_handlers(make_executor: MakeExecutor) -> None:
    got: list[RunnableConfig | None] = []

    async def finish(
        params: dict[str, Any], state: dict[str, Any], config: RunnableConfig | None = None
    ) -> tuple[str, dict[str, Any]]:
        got.append(config)
        raise TerminalActionResult({})

    executor, _ = make_executor([xml("decide", next_agent="x")], handlers={"decide": finish})
    cfg: RunnableConfig = {"tags": ["t"]}
    await executor.execute("hi", {}, cfg)
    assert got == [cfg]


async def test_handler_cannot_change_loop_state_by_mutation(make_executor: MakeExecutor) -> None:
    async def vandal(params: dict[str, Any], state: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        state["_observations"].clear()
        state["_loaded_slots"].append("forged")
        return "ok", {}

    states: list[dict[str, Any]] = []

    async def finish(params: dict[str, Any], state: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        states.append(state)
        raise TerminalActionResult({})

    executor, _ = make_executor(
        [xml("note"), xml("decide", next_agent="x")], handlers={"note": vandal, "decide": finish}
    )
    await executor.execute("hi", {})
    assert states[0]["_observations"] == ["ok"]
    assert states[0]["_loaded_slots"] == []


# -- malformed output and invalid actions -------------------------------------------------


@pytest.mark.parametrize(
    ("bad_reply", "observation"),
    [
        ("I would route this to billing.", 'no <action type="..."> element'),
        ('<action type="decide">{"next_agent": "billing",}</action>', "not valid JSON"),
        ('<action type="decide">["billing"]</action>', "must be a JSON object"),
        ('<action type="nuke">{}</action>', "action 'nuke' is unknown. Available actions: decide"),
        ('<action type="decide">{"content": "x"}</action>', "missing required parameter(s)"),
        ('<action type="request_slot">{"slot": "ghost"}</action>', "no knowledge slot 'ghost'"),
    ],
    ids=["no-action", "bad-json", "not-object", "unknown", "missing-param", "unknown-slot"],
)
async def test_invalid_pass_becomes_an_observation(
    make_executor: MakeExecutor, bad_reply: str, observation: str
) -> None:
    executor, llm = make_executor([bad_reply, xml("decide", next_agent="billing")])
    result = await executor.execute("hi", {})
    assert result["next_agent"] == "billing"
    prompt = human_text(llm, 1)
    assert "Error:" in prompt
    assert observation in prompt


async def test_consecutive_error_cap(make_executor: MakeExecutor) -> None:
    executor, llm = make_executor(["garbage", '<action type="nope"/>', "<thought>hm</thought>"])
    with pytest.raises(ReactConsecutiveErrorsError, match="3 invalid ReAct passes in a row") as e:
        await executor.execute("hi", {})
    assert 'no <action type="..."> element' in str(e.value)  # the last error is named
    assert llm.call_count == 3


async def test_error_count_resets_after_a_valid_action(make_executor: MakeExecutor) -> None:
    executor, llm = make_executor(
        ["bad", xml("note", text="a"), "bad", xml("decide", next_agent="x")],
        max_consecutive_errors=2,
    )
    assert (await executor.execute("hi", {}))["next_agent"] == "x"
    assert llm.call_count == 4


async def test_custom_consecutive_error_cap(make_executor: MakeExecutor) -> None:
    executor, llm = make_executor(["bad"], max_consecutive_errors=1)
    with pytest.raises(ReactConsecutiveErrorsError):
        await executor.execute("hi", {})
    assert llm.call_count == 1


async def test_failing_handler_becomes_an_observation(make_executor: MakeExecutor) -> None:
    async def broken(params: dict[str, Any], state: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        raise KeyError("customer_id")

    executor, llm = make_executor(
        [xml("note"), xml("decide", next_agent="x")], handlers={"note": broken, "decide": decide}
    )
    await executor.execute("hi", {})
    assert "Error: action 'note' failed: KeyError: 'customer_id'" in human_text(llm, 1)


async def test_handler_with_a_wrong_return_shape(make_executor: MakeExecutor) -> None:
    async def sloppy(params: dict[str, Any], state: dict[str, Any]) -> Any:
        return "just a string"

    executor, llm = make_executor(
        [xml("note"), xml("decide", next_agent="x")], handlers={"note": sloppy, "decide": decide}
    )
    await executor.execute("hi", {})
    assert "returned str, expected (observation, state_updates)" in human_text(llm, 1)


async def test_token_usage_counts_invalid_passes_too(make_executor: MakeExecutor) -> None:
    llm = MockLLM(responses=["bad", xml("decide", next_agent="x")], usage_tokens=USAGE)
    executor, _ = make_executor(llm=llm)
    result = await executor.execute("hi", {})
    assert result["_token_usage"]["total_tokens"] == 30


# -- knowledge through the built-in request_slot -----------------------------------------


async def test_slot_over_budget_is_an_observation(make_executor: MakeExecutor) -> None:
    executor, llm = make_executor(
        [xml("request_slot", slot="manual"), xml("decide", next_agent="x")],
        max_loaded_tokens=100,
    )
    result = await executor.execute("hi", {})
    assert "_loaded_slot_contents" not in result
    assert "cannot load knowledge slot 'manual'" in human_text(llm, 1)
    assert "max_loaded_tokens=100" in human_text(llm, 1)


async def test_loading_twice_is_not_an_error(make_executor: MakeExecutor) -> None:
    executor, llm = make_executor(
        [
            xml("request_slot", slot="routing_rules"),
            xml("request_slot", slot="routing_rules"),
            xml("request_slot", slot="routing_rules"),
            xml("decide", next_agent="x"),
        ],
        max_consecutive_errors=1,
    )
    await executor.execute("hi", {})
    assert "is already loaded" in human_text(llm, 2)


async def test_request_slot_without_slot_param_when_undeclared(kb: Path) -> None:
    (kb / "supervisor" / "react_config.yaml").write_text(
        "slots:\n  r: {description: d, modules: [slots/routing_rules.md]}\n"
    )
    tm = ReactTemplateManager("supervisor", kb)
    llm = MockLLM(
        responses=['<action type="request_slot">{}</action>', xml("decide", next_agent="x")]
    )
    executor = ReactExecutor("supervisor", llm, tm, {"decide": decide})
    await executor.execute("hi", {})
    assert "request_slot needs a 'slot' parameter" in human_text(llm, 1)


async def test_own_request_slot_handler_replaces_the_builtin(make_executor: MakeExecutor) -> None:
    async def mine(params: dict[str, Any], state: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        return "custom loader", {}

    executor, llm = make_executor(
        [xml("request_slot", slot="routing_rules"), xml("decide", next_agent="x")],
        handlers={"request_slot": mine, "decide": decide},
    )
    result = await executor.execute("hi", {})
    assert "custom loader" in human_text(llm, 1)
    assert "_loaded_slot_contents" not in result


# -- limits -------------------------------------------------------------------------------


async def test_max_passes_from_the_config(make_executor: MakeExecutor) -> None:
    executor, llm = make_executor([xml("note", text=str(i)) for i in range(10)])
    assert executor.max_passes == 4
    with pytest.raises(ReactMaxPassesError, match="max_passes=4"):
        await executor.execute("hi", {})
    assert llm.call_count == 4


async def test_max_passes_argument_overrides_the_config(make_executor: MakeExecutor) -> None:
    executor, llm = make_executor([xml("note")] * 10, max_passes=2)
    with pytest.raises(ReactMaxPassesError, match="max_passes=2"):
        await executor.execute("hi", {})
    assert llm.call_count == 2


async def test_history_window_keeps_the_newest_steps(make_executor: MakeExecutor) -> None:
    replies = [xml("note", text=f"OBS{i}-" + "x" * 200) for i in range(1, 4)]
    executor, llm = make_executor([*replies, xml("decide", next_agent="x")], max_history_tokens=150)
    await executor.execute("hi", {})
    last = human_text(llm, 3)
    assert "noted OBS3-" in last
    assert "noted OBS1-" not in last
    assert "earlier steps omitted" in last


async def test_no_history_window_keeps_everything(make_executor: MakeExecutor) -> None:
    replies = [xml("note", text=f"OBS{i}-" + "x" * 200) for i in range(1, 4)]
    executor, llm = make_executor([*replies, xml("decide", next_agent="x")])
    await executor.execute("hi", {})
    last = human_text(llm, 3)
    assert all(f"noted OBS{i}-" in last for i in (1, 2, 3))
    assert "omitted" not in last


# -- reserved keys ------------------------------------------------------------------------


def test_reserved_keys_are_the_documented_six() -> None:
    assert (
        frozenset(
            {
                "_user_input",
                "_pass_number",
                "_previous_thoughts",
                "_observations",
                "_loaded_slots",
                "_loaded_slot_contents",
            }
        )
        == RESERVED_STATE_KEYS
    )


@pytest.mark.parametrize("key", sorted(RESERVED_STATE_KEYS))
async def test_context_may_not_set_reserved_keys(make_executor: MakeExecutor, key: str) -> None:
    executor, llm = make_executor([xml("decide", next_agent="x")])
    with pytest.raises(ReservedStateKeyError, match=key):
        await executor.execute("hi", {key: "forged"})
    assert llm.call_count == 0


async def test_handler_updates_may_not_set_reserved_keys(make_executor: MakeExecutor) -> None:
    async def forge(params: dict[str, Any], state: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        return "ok", {"_loaded_slot_contents": {"secret": "x"}, "fine": 1}

    executor, _ = make_executor(
        [xml("note"), xml("decide", next_agent="x")], handlers={"note": forge, "decide": decide}
    )
    with pytest.raises(ReservedStateKeyError, match=r"action 'note'.*_loaded_slot_contents"):
        await executor.execute("hi", {})
    assert issubclass(ReservedStateKeyError, ReactError)


# -- cancellation and timeouts ------------------------------------------------------------


async def test_cancelled_before_the_first_pass(make_executor: MakeExecutor) -> None:
    cancel = asyncio.Event()
    cancel.set()
    executor, llm = make_executor([xml("decide", next_agent="x")], cancel_event=cancel)
    with pytest.raises(ReactCancellationError, match="before pass 1"):
        await executor.execute("hi", {})
    assert llm.call_count == 0


async def test_cancel_during_a_pass_stops_before_the_next(make_executor: MakeExecutor) -> None:
    cancel = asyncio.Event()

    async def stop(params: dict[str, Any], state: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        cancel.set()
        return "stopping", {}

    executor, llm = make_executor(
        [xml("note"), xml("decide", next_agent="x")], handlers={"note": stop, "decide": decide}
    )
    with pytest.raises(ReactCancellationError, match="before pass 2"):
        await executor.execute("hi", {}, cancel_event=cancel)
    assert llm.call_count == 1


async def test_total_request_timeout(make_executor: MakeExecutor) -> None:
    llm = SlowMockLLM(responses=[xml("note")] * 5, delay=0.03)
    executor, _ = make_executor(llm=llm, total_request_seconds=0.05)
    with pytest.raises(TimeoutError, match=r"exceeded total_request_seconds=0.05"):
        await executor.execute("hi", {})
    assert llm.call_count <= 2


async def test_total_request_timeout_from_timeout_config(make_executor: MakeExecutor) -> None:
    llm = SlowMockLLM(responses=[xml("note")] * 5, delay=0.03)
    executor, _ = make_executor(llm=llm, timeout_config=TimeoutConfig(total_request_seconds=0.05))
    with pytest.raises(TimeoutError, match="total_request_seconds"):
        await executor.execute("hi", {})


async def test_per_call_llm_timeout(make_executor: MakeExecutor) -> None:
    llm = SlowMockLLM(responses=[xml("decide", next_agent="x")], delay=0.5)
    executor, _ = make_executor(llm=llm, timeout_config=TimeoutConfig(llm_call_seconds=0.02))
    with pytest.raises(LLMInvocationError) as info:
        await executor.execute("hi", {})
    assert isinstance(info.value.cause, TimeoutError)


async def test_transient_failures_are_retried(make_executor: MakeExecutor) -> None:
    llm = MockLLM(responses=[ConnectionError("reset"), xml("decide", next_agent="x")])
    retry = RetryConfig(max_attempts=2, initial_interval=0.001, jitter=False)
    executor, _ = make_executor(llm=llm, retry_config=retry)
    assert (await executor.execute("hi", {}))["next_agent"] == "x"
    assert llm.call_count == 2


async def test_retries_exhausted(make_executor: MakeExecutor) -> None:
    llm = MockLLM(responses=[ConnectionError("a"), ConnectionError("b")])
    retry = RetryConfig(max_attempts=2, initial_interval=0.001, jitter=False)
    executor, _ = make_executor(llm=llm, retry_config=retry)
    with pytest.raises(LLMRetryExhaustedError):
        await executor.execute("hi", {})


async def test_rate_limiter_wraps_every_call(make_executor: MakeExecutor) -> None:
    class Recording(RateLimiter):
        def __init__(self) -> None:
            self.log: list[str] = []

        async def acquire(self) -> None:
            self.log.append("acquire")

        async def release(self) -> None:
            self.log.append("release")

    limiter = Recording()
    executor, _ = make_executor([xml("note"), xml("decide", next_agent="x")], rate_limiter=limiter)
    await executor.execute("hi", {})
    assert limiter.log == ["acquire", "release"] * 2


# -- construction, events, repr -----------------------------------------------------------


@pytest.mark.parametrize(
    "kwargs",
    [
        {"max_passes": 0},
        {"max_consecutive_errors": 0},
        {"max_history_tokens": -1},
        {"total_request_seconds": 0},
    ],
)
def test_invalid_limits(make_executor: MakeExecutor, kwargs: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match=next(iter(kwargs))):
        make_executor([], **kwargs)


def test_optional_arguments_are_keyword_only(kb: Path) -> None:
    tm = ReactTemplateManager("supervisor", kb)
    with pytest.raises(TypeError):
        ReactExecutor("supervisor", MockLLM(), tm, {}, 5)  # type: ignore[call-arg]


async def test_events_are_emitted(make_executor: MakeExecutor) -> None:
    events: list[tuple[str, str, dict[str, Any]]] = []
    executor, _ = make_executor(["bad", xml("decide", next_agent="billing")])
    with graph_emitter(lambda kind, source, payload: events.append((kind, source, payload))):
        await executor.execute("hi", {})
    kinds = [kind for kind, _, _ in events]
    assert kinds == ["graph.react.pass", "graph.react.pass", "graph.react.completed"]
    assert events[0][2]["action"] == "(invalid reply)"
    assert "error" in events[0][2]
    assert events[2][1] == "supervisor"
    assert events[2][2]["next_agent"] == "billing"
    assert events[2][2]["passes"] == 2


def test_repr(make_executor: MakeExecutor) -> None:
    executor, _ = make_executor([])
    assert repr(executor) == (
        "ReactExecutor(agent_name='supervisor', actions=['decide', 'note', 'request_slot'], "
        "max_passes=4, max_consecutive_errors=3, output=xml)"
    )


async def test_context_may_be_omitted(make_executor: MakeExecutor) -> None:
    executor, llm = make_executor([xml("decide", next_agent="x")])
    assert (await executor.execute("hi"))["next_agent"] == "x"
    assert "{allowed_agents}" in system_text(llm, 0)  # unfilled placeholders stay visible


async def test_terminal_result_must_be_a_dict(make_executor: MakeExecutor) -> None:
    async def bad_end(params: dict[str, Any], state: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        raise TerminalActionResult("billing")  # type: ignore[arg-type]

    executor, llm = make_executor(
        [xml("decide", next_agent="x"), xml("note")],
        handlers={"decide": bad_end, "note": note},
        max_passes=2,
    )
    with pytest.raises(ReactMaxPassesError):
        await executor.execute("hi", {})
    assert "TypeError: TerminalActionResult needs a dict result, got str" in human_text(llm, 1)


async def test_declared_action_without_handler(make_executor: MakeExecutor) -> None:
    executor, llm = make_executor(
        [xml("note", text="a"), xml("decide", next_agent="x")], handlers={"decide": decide}
    )
    await executor.execute("hi", {})
    assert "action 'note' has no handler" in human_text(llm, 1)


@pytest.mark.parametrize("kwargs", [{"max_passes": 2.5}, {"max_history_tokens": True}])
def test_counts_must_be_integers(make_executor: MakeExecutor, kwargs: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match="an integer > 0"):
        make_executor([], **kwargs)


async def test_context_keys_named_like_prompt_arguments(make_executor: MakeExecutor) -> None:
    executor, llm = make_executor([xml("decide", next_agent="x")])
    await executor.execute("hi", {"agent_name": "Router", "self": 1, "bad key": 2})
    assert system_text(llm, 0).startswith("You are Router.")


async def test_logs_name_the_pass_and_redact_secrets(make_executor: MakeExecutor) -> None:
    secret = "sk-proj-abcdefghijklmnopqrstuvwxyz123456"
    executor, _ = make_executor(
        [xml("note", f"user pasted {secret}"), xml("decide", next_agent="billing")]
    )
    with structlog.testing.capture_logs() as logs:
        await executor.execute("hi", {}, request_id="req-1")
    passes = [e for e in logs if e["event"] == "react_pass"]
    assert [(e["agent_name"], e["pass_num"], e["action"]) for e in passes] == [
        ("supervisor", 1, "note"),
        ("supervisor", 2, "decide"),
    ]
    assert secret not in str(logs)
    assert "<redacted>" in passes[0]["thought"]
    terminal = [e for e in logs if e["event"] == "react_terminal"]
    assert terminal == [
        {
            "event": "react_terminal",
            "log_level": "info",
            "agent_name": "supervisor",
            "pass_num": 2,
            "next_agent": "billing",
            "request_id": "req-1",
        }
    ]
