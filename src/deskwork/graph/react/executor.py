"""The ReAct loop: think, act, observe, until an action handler ends it.

Each pass of :meth:`ReactExecutor.execute`:

1. checks ``cancel_event`` (``ReactCancellationError``);
2. builds the prompt: the agent's core prompt, then user input, loaded knowledge and the
   (token-budgeted) history of earlier passes;
3. calls the model (rate limiter, per-call timeout, retries) and adds up its token usage;
4. parses the reply (XML, or ``ReactStructuredResponse`` when structured output is on);
5. runs the action's handler and records its observation.

The loop ends when a handler raises :class:`TerminalActionResult`. A reply that cannot be
parsed, an unknown action, missing required parameters or a failing handler all become an
observation the model sees on the next pass; ``max_consecutive_errors`` of them in a row raise
``ReactConsecutiveErrorsError``. ``max_passes`` passes without a terminal action raise
``ReactMaxPassesError``; ``total_request_seconds`` bounds the whole loop.

Unless ``action_handlers`` has its own, the executor answers ``request_slot`` itself: it loads
the slot (and its dependencies) through the template manager and shows it to the model.
"""

from __future__ import annotations

import asyncio
import inspect
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

from langchain_core.exceptions import OutputParserException
from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage
from pydantic import ValidationError

from deskwork.core.redact import describe_exception, redact_text
from deskwork.graph._events import emit_graph_event
from deskwork.graph.core.exceptions import (
    KnowledgeError,
    LLMInvocationError,
    ReactCancellationError,
    ReactConsecutiveErrorsError,
    ReactMaxPassesError,
    ReservedStateKeyError,
)
from deskwork.graph.core.llm_utils import ainvoke_with_retry
from deskwork.graph.core.logging_context import get_graph_logger
from deskwork.graph.observability.otel import otel_span
from deskwork.graph.react._parsing import (
    MalformedResponseError,
    message_text,
    parse_structured_response,
    parse_xml_response,
)
from deskwork.graph.react.models import (
    ActionHandler,
    ReactParsedResponse,
    ReactStructuredResponse,
    TerminalActionResult,
)
from deskwork.utils import check_seconds, is_integer

if TYPE_CHECKING:
    from langchain_core.language_models import BaseLanguageModel
    from langchain_core.runnables import Runnable, RunnableConfig

    from deskwork.graph.config.schema import RetryConfig, TimeoutConfig
    from deskwork.graph.core.rate_limiting import RateLimiter
    from deskwork.graph.knowledge.template_manager import ReactTemplateManager

__all__ = [
    "DEFAULT_MAX_CONSECUTIVE_ERRORS",
    "REQUEST_SLOT_ACTION",
    "RESERVED_STATE_KEYS",
    "ReactExecutor",
]

_log = get_graph_logger("deskwork.graph.react")

RESERVED_STATE_KEYS: frozenset[str] = frozenset(
    {
        "_user_input",
        "_pass_number",
        "_previous_thoughts",
        "_observations",
        "_loaded_slots",
        "_loaded_slot_contents",
    }
)
"""Loop state the executor owns; context and handler updates may not set these keys."""

DEFAULT_MAX_CONSECUTIVE_ERRORS = 3
REQUEST_SLOT_ACTION = "request_slot"

XML_FORMAT = """Reply in exactly this format, with one action per reply:
<thought>your reasoning</thought>
<action type="ACTION_NAME">{"parameter": "value"}</action>
The action body is a JSON object with the action's parameters ({} when it has none)."""

STRUCTURED_FORMAT = (
    "Reply with your reasoning as `thought`, the name of exactly one action as `action`, "
    "and its parameters as the JSON object `action_params`."
)

_LOG_TEXT_LIMIT = 200


def check_reserved_keys(data: Mapping[str, Any], where: str) -> None:
    """Raise ``ReservedStateKeyError`` if ``data`` sets a key the executor owns."""
    clash = sorted(RESERVED_STATE_KEYS.intersection(data))
    if clash:
        raise ReservedStateKeyError(f"{where} may not set reserved state keys: {', '.join(clash)}")


@dataclass(slots=True)
class _Observation:
    """The pass produced an observation (``is_error``: it counts as a consecutive error)."""

    text: str
    is_error: bool = False


@dataclass(slots=True)
class _Terminal:
    """A handler ended the loop with ``result``."""

    result: dict[str, Any]


_Outcome = _Observation | _Terminal


@dataclass(slots=True)
class _Step:
    thought: str
    action: str
    """The action name, or ``(invalid reply)``."""
    params: str
    """The parameters as JSON (empty for an invalid reply)."""
    observation: str


@dataclass(slots=True)
class _Run:
    """Everything one ``execute()`` call accumulates."""

    state: dict[str, Any]
    request_id: str | None
    steps: list[_Step] = field(default_factory=list)
    usage: dict[str, int] = field(
        default_factory=lambda: {"input_tokens": 0, "output_tokens": 0, "total_tokens": 0}
    )
    consecutive_errors: int = 0


@dataclass(frozen=True, slots=True)
class _Handler:
    call: ActionHandler
    takes_config: bool


def _takes_config(handler: Any) -> bool:
    try:
        signature = inspect.signature(handler)
    except (TypeError, ValueError):
        return True
    try:
        signature.bind(None, None, None)
    except TypeError:
        return False
    return True


def _positive(name: str, value: int | None) -> None:
    if value is None:
        return
    if not is_integer(value) or not value > 0:
        raise ValueError(f"{name} must be an integer > 0 or None, got {value!r}")


def _short(text: str, limit: int = _LOG_TEXT_LIMIT) -> str:
    """``text`` cut to ``limit`` characters, secrets redacted (it goes to logs and events)."""
    text = text if len(text) <= limit else text[: limit - 3] + "..."
    return redact_text(text)


def _add_usage(total: dict[str, int], message: Any) -> None:
    """Add a reply's token usage (``usage_metadata`` or OpenAI-style metadata) to ``total``."""
    usage = getattr(message, "usage_metadata", None)
    if not isinstance(usage, Mapping):
        meta = getattr(message, "response_metadata", None) or {}
        raw = meta.get("token_usage") or meta.get("usage") if isinstance(meta, Mapping) else None
        if not isinstance(raw, Mapping):
            return
        usage = {
            "input_tokens": raw.get("input_tokens", raw.get("prompt_tokens", 0)),
            "output_tokens": raw.get("output_tokens", raw.get("completion_tokens", 0)),
            "total_tokens": raw.get("total_tokens"),
        }
    inputs = usage.get("input_tokens") or 0
    outputs = usage.get("output_tokens") or 0
    counted = usage.get("total_tokens")
    for key, value in (
        ("input_tokens", inputs),
        ("output_tokens", outputs),
        ("total_tokens", counted if isinstance(counted, int) else inputs + outputs),
    ):
        if isinstance(value, int):
            total[key] += value


class ReactExecutor:
    """Runs the ReAct loop of one agent.

    Args:
        agent_name: The agent (used for its core prompt, logs and events).
        llm: A LangChain chat model.
        template_manager: The agent's knowledge (core prompt, actions, slots).
        action_handlers: Action name -> handler (see :class:`ActionHandler`).
        max_passes: Passes before ``ReactMaxPassesError`` (default: the config's ``max_passes``).
        retry_config: Retries of transient LLM failures (default: none).
        timeout_config: ``llm_call_seconds`` per call, ``total_request_seconds`` for the loop.
        max_consecutive_errors: Invalid passes in a row before ``ReactConsecutiveErrorsError``
            (default 3).
        max_history_tokens: Budget of earlier passes shown to the model; the newest are kept
            (default: all).
        rate_limiter: Acquired around every LLM call.
        cancel_event: When set, the loop stops at the start of the next pass.
        use_structured_output: Ask for ``ReactStructuredResponse`` through
            ``llm.with_structured_output()``; falls back to XML if the model cannot.
        total_request_seconds: Overrides ``timeout_config.total_request_seconds``.
    """

    def __init__(
        self,
        agent_name: str,
        llm: BaseLanguageModel[Any],
        template_manager: ReactTemplateManager,
        action_handlers: Mapping[str, ActionHandler],
        *,
        max_passes: int | None = None,
        retry_config: RetryConfig | None = None,
        timeout_config: TimeoutConfig | None = None,
        max_consecutive_errors: int | None = None,
        max_history_tokens: int | None = None,
        rate_limiter: RateLimiter | None = None,
        cancel_event: asyncio.Event | None = None,
        use_structured_output: bool = False,
        total_request_seconds: float | None = None,
    ) -> None:
        if not agent_name:
            raise ValueError("agent_name must not be empty")
        self._agent_name = agent_name
        self._llm = llm
        self._template_manager = template_manager
        self._handlers = self._wrap_handlers(action_handlers)
        self._builtin_request_slot = REQUEST_SLOT_ACTION not in self._handlers
        self._max_passes = max_passes if max_passes is not None else template_manager.max_passes
        self._max_errors = (
            max_consecutive_errors
            if max_consecutive_errors is not None
            else DEFAULT_MAX_CONSECUTIVE_ERRORS
        )
        self._max_history_tokens = max_history_tokens
        if total_request_seconds is None and timeout_config is not None:
            total_request_seconds = timeout_config.total_request_seconds
        self._total_request_seconds = total_request_seconds
        self._llm_call_seconds = timeout_config.llm_call_seconds if timeout_config else None
        for name, count in (
            ("max_passes", self._max_passes),
            ("max_consecutive_errors", self._max_errors),
            ("max_history_tokens", max_history_tokens),
        ):
            _positive(name, count)
        check_seconds(total_request_seconds, "total_request_seconds")
        self._retry_config = retry_config
        self._rate_limiter = rate_limiter
        self._cancel_event = cancel_event
        self._use_structured_output = use_structured_output
        self._structured_llm: Runnable[Any, Any] | None = None
        self._structured_supported: bool | None = None  # None: not probed yet
        unhandled = sorted(set(template_manager.actions) - set(self.available_actions))
        if unhandled:
            _log.warning("react_actions_without_handler", agent_name=agent_name, actions=unhandled)

    @staticmethod
    def _wrap_handlers(action_handlers: Mapping[str, ActionHandler]) -> dict[str, _Handler]:
        handlers = {}
        for name, handler in action_handlers.items():
            if not name or not callable(handler):
                raise TypeError(f"action handler {name!r} must be a named async callable")
            handlers[name] = _Handler(handler, _takes_config(handler))
        return handlers

    @property
    def agent_name(self) -> str:
        """The agent this loop runs for."""
        return self._agent_name

    @property
    def max_passes(self) -> int:
        """Passes allowed per ``execute()``."""
        return self._max_passes

    @property
    def structured_output_supported(self) -> bool | None:
        """The cached probe result: ``None`` until the first structured call is tried."""
        return self._structured_supported

    @property
    def available_actions(self) -> list[str]:
        """Actions the loop can run, sorted."""
        builtin = [REQUEST_SLOT_ACTION] if self._builtin_request_slot else []
        return sorted({*self._handlers, *builtin})

    # -- the loop --------------------------------------------------------------------------

    async def execute(
        self,
        user_input: str,
        context: Mapping[str, Any] | None = None,
        config: RunnableConfig | None = None,
        *,
        request_id: str | None = None,
        cancel_event: asyncio.Event | None = None,
    ) -> dict[str, Any]:
        """Run passes until an action handler raises ``TerminalActionResult``.

        Each call is one request for the template manager: it starts with no knowledge loaded
        and the whole ``max_loaded_tokens`` budget free (``ReactTemplateManager.begin_request``),
        however many calls share the manager, one after another or at the same time.

        Args:
            user_input: The request the agent works on.
            context: Extra state for handlers (default none); its entries also fill the core
                prompt's ``{placeholders}``.
            config: Passed to every LLM call and handler (callbacks, tracing).
            request_id: Added to logs and events.
            cancel_event: Overrides the constructor's ``cancel_event`` for this call.

        Returns:
            The terminal result, plus ``_token_usage`` (summed over all passes) and, if
            knowledge was loaded, ``_loaded_slot_contents`` (slot name -> content).

        Raises:
            ReservedStateKeyError: ``context`` or a handler's updates set a reserved key.
            ReactCancellationError: ``cancel_event`` was set.
            ReactConsecutiveErrorsError: Too many invalid passes in a row.
            ReactMaxPassesError: No terminal action within ``max_passes``.
            TimeoutError: The loop exceeded ``total_request_seconds``.
            LLMError: A model call failed (see ``core.llm_utils``).
        """
        context = dict(context or {})
        check_reserved_keys(context, "context")
        self._template_manager.begin_request()  # max_loaded_tokens is a budget per request
        run = _Run(state=self._initial_state(user_input, context), request_id=request_id)
        cancel = cancel_event if cancel_event is not None else self._cancel_event
        limit = self._total_request_seconds
        scope = asyncio.timeout(limit)
        try:
            async with scope:
                variables = {
                    k: v for k, v in context.items() if isinstance(k, str) and k.isidentifier()
                }
                system = await self._template_manager.load_core_prompt(
                    self._agent_name, **variables
                )
                return await self._run_passes(run, system, config, cancel)
        except TimeoutError as exc:
            if not scope.expired():
                raise
            raise TimeoutError(
                f"ReAct loop of agent {self._agent_name!r} exceeded "
                f"total_request_seconds={limit} after {len(run.steps)} completed passes"
            ) from exc

    def _initial_state(self, user_input: str, context: dict[str, Any]) -> dict[str, Any]:
        return {
            **context,
            "_user_input": user_input,
            "_pass_number": 0,
            "_previous_thoughts": [],
            "_observations": [],
            "_loaded_slots": [],
            "_loaded_slot_contents": {},
        }

    async def _run_passes(
        self,
        run: _Run,
        system: str,
        config: RunnableConfig | None,
        cancel: asyncio.Event | None,
    ) -> dict[str, Any]:
        for pass_num in range(1, self._max_passes + 1):
            if cancel is not None and cancel.is_set():
                raise ReactCancellationError(
                    f"ReAct loop of agent {self._agent_name!r} cancelled before pass {pass_num}"
                )
            run.state["_pass_number"] = pass_num
            async with otel_span(
                "react_pass", agent_name=self._agent_name, pass_num=pass_num
            ) as span:
                outcome, step = await self._run_pass(run, system, config)
                span.set_attribute("react.action", step.action)
                span.set_attribute("react.terminal", isinstance(outcome, _Terminal))
            if isinstance(outcome, _Terminal):
                return self._finish(run, outcome.result, pass_num)
            self._record(run, step)
            if not outcome.is_error:
                run.consecutive_errors = 0
                continue
            run.consecutive_errors += 1
            if run.consecutive_errors >= self._max_errors:
                raise ReactConsecutiveErrorsError(
                    f"agent {self._agent_name!r} made {run.consecutive_errors} invalid ReAct "
                    f"passes in a row (max_consecutive_errors={self._max_errors}); "
                    f"last: {outcome.text}"
                )
        raise ReactMaxPassesError(
            f"agent {self._agent_name!r} reached max_passes={self._max_passes} "
            "without a terminal action"
        )

    async def _run_pass(
        self, run: _Run, system: str, config: RunnableConfig | None
    ) -> tuple[_Outcome, _Step]:
        pass_num = run.state["_pass_number"]
        try:
            parsed = await self._ask_model(system, self._pass_prompt(run), config, run.usage)
        except MalformedResponseError as exc:
            text = f"Error: {exc}. Reply with one thought and one available action."
            self._log_pass(run, pass_num, "", "(invalid reply)", error=str(exc))
            return _Observation(text, is_error=True), _Step("", "(invalid reply)", "", text)
        params = json.dumps(parsed.action_params, ensure_ascii=False, default=str)
        self._log_pass(run, pass_num, parsed.thought, parsed.action)
        outcome = await self._run_action(parsed.action, parsed.action_params, run, config)
        text = outcome.text if isinstance(outcome, _Observation) else ""
        return outcome, _Step(parsed.thought, parsed.action, params, text)

    def _record(self, run: _Run, step: _Step) -> None:
        run.steps.append(step)
        run.state["_previous_thoughts"].append(step.thought)
        run.state["_observations"].append(step.observation)

    def _finish(self, run: _Run, result: dict[str, Any], pass_num: int) -> dict[str, Any]:
        final = dict(result)
        final["_token_usage"] = dict(run.usage)
        if run.state["_loaded_slot_contents"]:
            final["_loaded_slot_contents"] = dict(run.state["_loaded_slot_contents"])
        next_agent = final.get("next_agent")
        _log.info(
            "react_terminal",
            agent_name=self._agent_name,
            pass_num=pass_num,
            next_agent=next_agent,
            request_id=run.request_id,
        )
        emit_graph_event(
            "graph.react.completed",
            self._agent_name,
            {"passes": pass_num, "next_agent": next_agent, "token_usage": dict(run.usage)},
        )
        return final

    def _log_pass(
        self, run: _Run, pass_num: int, thought: str, action: str, *, error: str | None = None
    ) -> None:
        _log.info(
            "react_pass",
            agent_name=self._agent_name,
            pass_num=pass_num,
            thought=_short(thought),
            action=action,
            request_id=run.request_id,
            **({"error": _short(error)} if error else {}),
        )
        payload: dict[str, Any] = {"pass_num": pass_num, "action": action}
        if error:
            payload["error"] = _short(error)
        emit_graph_event("graph.react.pass", self._agent_name, payload)

    # -- prompts ---------------------------------------------------------------------------

    def _pass_prompt(self, run: _Run) -> str:
        parts = [f"User input:\n{run.state['_user_input']}"]
        loaded = run.state["_loaded_slot_contents"]
        if loaded:
            knowledge = "\n\n".join(f"### {name}\n{text}" for name, text in loaded.items())
            parts.append(f"Loaded knowledge:\n{knowledge}")
        history = self._render_history(run.steps)
        if history:
            parts.append(history)
        parts.append(
            f"This is pass {run.state['_pass_number']} of {self._max_passes}. "
            "Reply with one thought and one action."
        )
        return "\n\n".join(parts)

    def _render_history(self, steps: list[_Step]) -> str:
        """Earlier passes, newest kept first when ``max_history_tokens`` is set."""
        blocks = [
            f"Step {i}\nThought: {s.thought or '(none)'}\n"
            f"Action: {f'{s.action} {s.params}'.strip()}\nObservation: {s.observation}"
            for i, s in enumerate(steps, 1)
        ]
        if self._max_history_tokens is not None:
            counter = self._template_manager.token_counter
            kept: list[str] = []
            used = 0
            for block in reversed(blocks):
                used += counter.count(block)
                if used > self._max_history_tokens:
                    break
                kept.append(block)
            kept.reverse()
        else:
            kept = blocks
        omitted = len(blocks) - len(kept)
        if not blocks:
            return ""
        header = "Previous steps:"
        if omitted:
            header = f"Previous steps ({omitted} earlier steps omitted):"
        return "\n\n".join([header, *kept])

    # -- the model -------------------------------------------------------------------------

    def _structured_runnable(self) -> Runnable[Any, Any] | None:
        """The structured-output runnable, probed once and cached (AD-64)."""
        if not self._use_structured_output or self._structured_supported is False:
            return None
        if self._structured_llm is None:
            try:
                self._structured_llm = self._probe_structured()
            except (AttributeError, NotImplementedError) as exc:
                self._disable_structured(exc)
                return None
            self._structured_supported = True
        return self._structured_llm

    def _probe_structured(self) -> Runnable[Any, Any]:
        """``with_structured_output`` with the raw reply (token usage), or without if refused."""
        method = self._llm.with_structured_output
        try:
            return method(ReactStructuredResponse, include_raw=True)
        except TypeError:  # a model whose signature has no include_raw
            return method(ReactStructuredResponse)

    def _disable_structured(self, exc: BaseException) -> None:
        self._structured_supported = False
        self._structured_llm = None
        _log.info(
            "react_structured_output_unsupported",
            agent_name=self._agent_name,
            reason=f"{type(exc).__name__}: {_short(str(exc))}",
        )

    async def _ask_model(
        self, system: str, prompt: str, config: RunnableConfig | None, usage: dict[str, int]
    ) -> ReactParsedResponse:
        structured = self._structured_runnable()
        if structured is not None:
            messages = self._messages(system, STRUCTURED_FORMAT, prompt)
            try:
                output = await self._invoke(structured, messages, config)
            except LLMInvocationError as exc:
                if isinstance(exc.cause, NotImplementedError):
                    self._disable_structured(exc.cause)  # fall through to XML this pass
                elif isinstance(exc.cause, (ValidationError, OutputParserException)):
                    raise MalformedResponseError(
                        f"the structured reply is invalid: {_short(str(exc.cause), 500)}"
                    ) from exc
                else:
                    raise
            else:
                if isinstance(output, Mapping):
                    _add_usage(usage, output.get("raw"))
                return parse_structured_response(output)
        reply = await self._invoke(self._llm, self._messages(system, XML_FORMAT, prompt), config)
        _add_usage(usage, reply)
        return parse_xml_response(message_text(reply))

    @staticmethod
    def _messages(system: str, reply_format: str, prompt: str) -> list[BaseMessage]:
        return [SystemMessage(f"{system.rstrip()}\n\n{reply_format}"), HumanMessage(prompt)]

    async def _invoke(
        self, runnable: Any, messages: list[BaseMessage], config: RunnableConfig | None
    ) -> Any:
        return await ainvoke_with_retry(
            cast("BaseLanguageModel[Any]", runnable),
            messages,
            retry_config=self._retry_config,
            timeout_seconds=self._llm_call_seconds,
            config=config,
            rate_limiter=self._rate_limiter,
        )

    # -- actions ---------------------------------------------------------------------------

    async def _run_action(
        self, action: str, params: dict[str, Any], run: _Run, config: RunnableConfig | None
    ) -> _Outcome:
        handler = self._handlers.get(action)
        declared = self._template_manager.actions.get(action)
        if handler is None and not (action == REQUEST_SLOT_ACTION and self._builtin_request_slot):
            problem = "has no handler" if declared else "is unknown"
            return _Observation(
                f"Error: action {action!r} {problem}. "
                f"Available actions: {', '.join(self.available_actions)}.",
                is_error=True,
            )
        missing = [p for p in declared.required if p not in params] if declared else []
        if missing:
            return _Observation(
                f"Error: action {action!r} is missing required parameter(s): {', '.join(missing)}.",
                is_error=True,
            )
        if handler is None:
            return await self._request_slot(params, run)
        return await self._call_handler(action, handler, params, run, config)

    async def _call_handler(
        self,
        action: str,
        handler: _Handler,
        params: dict[str, Any],
        run: _Run,
        config: RunnableConfig | None,
    ) -> _Outcome:
        state = self._handler_state(run)
        try:
            if handler.takes_config:
                returned = await handler.call(params, state, config)
            else:
                returned = await cast(Any, handler.call)(params, state)
        except TerminalActionResult as terminal:
            return _Terminal(dict(terminal.result))
        except Exception as exc:
            return _Observation(
                f"Error: action {action!r} failed: {describe_exception(exc)}",
                is_error=True,
            )
        if not (
            isinstance(returned, tuple) and len(returned) == 2 and isinstance(returned[1], Mapping)
        ):
            return _Observation(
                f"Error: action {action!r} returned {type(returned).__name__}, "
                "expected (observation, state_updates)",
                is_error=True,
            )
        observation, updates = returned
        check_reserved_keys(updates, f"the state updates of action {action!r}")
        run.state.update(updates)
        return _Observation(str(observation))

    @staticmethod
    def _handler_state(run: _Run) -> dict[str, Any]:
        """A copy of the loop state: handlers change it only through their updates."""
        state = dict(run.state)
        for key in ("_previous_thoughts", "_observations", "_loaded_slots"):
            state[key] = list(state[key])
        state["_loaded_slot_contents"] = dict(state["_loaded_slot_contents"])
        return state

    async def _request_slot(self, params: dict[str, Any], run: _Run) -> _Outcome:
        """The built-in ``request_slot`` action: load a knowledge slot into the prompt."""
        slot = params.get("slot")
        if not isinstance(slot, str) or not slot:
            return _Observation(
                "Error: request_slot needs a 'slot' parameter naming a knowledge slot.",
                is_error=True,
            )
        loaded: list[str] = run.state["_loaded_slots"]
        if slot in loaded:
            return _Observation(f"Knowledge slot {slot!r} is already loaded.")
        try:
            result = await self._template_manager.load_slot(slot)
        except KnowledgeError as exc:
            detail = redact_text(str(exc))
            return _Observation(f"Error: cannot load knowledge slot {slot!r}: {detail}", True)
        contents: dict[str, str] = run.state["_loaded_slot_contents"]
        for name in (*result.dependencies, slot):
            if name not in loaded:
                text = self._template_manager.get_loaded_content(name)
                contents[name] = result.content if name == slot else (text or "")
                loaded.append(name)
        also = f" (with {', '.join(result.dependencies)})" if result.dependencies else ""
        return _Observation(
            f"Loaded knowledge slot {slot!r}{also}, {result.token_count} tokens; "
            "it is shown under 'Loaded knowledge'."
        )

    def __repr__(self) -> str:
        mode = "xml"
        if self._use_structured_output:
            mode = {None: "structured?", True: "structured", False: "xml (fallback)"}[
                self._structured_supported
            ]
        return (
            f"ReactExecutor(agent_name={self._agent_name!r}, "
            f"actions={self.available_actions}, max_passes={self._max_passes}, "
            f"max_consecutive_errors={self._max_errors}, output={mode})"
        )
