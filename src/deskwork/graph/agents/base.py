"""The agent lifecycle: :class:`BaseAgent`, the LangGraph node every graph agent is.

``invoke()`` (called by LangGraph) wraps the ``process()`` you write::

    bind logging context -> graph.agent.started
    before_invoke (first -> last) -> process() -> after_invoke (last -> first)
    (each must give an AgentResponse with fields of their declared types: else AgentProcessError)
    identity check -> state update {messages, current_agent, context_slots[, knowledge_context]}
    -> graph.agent.completed
    on failure: on_error (last -> first) -> graph.agent.failed -> raise
                (anything that is not an OrchestratorError becomes an AgentProcessError)

``current_agent`` in the update is ``response.next_agent`` when the agent hands off, or the agent's
own name when it terminates (``next_agent=None``), the sentinel the graph builders turn into END.
The AI message's ``response_metadata`` carries ``request_id``, ``session_id``, ``user_id``,
``langgraph_step``, ``langgraph_node``, ``token_usage`` and the ``slots_tier`` of updated slots.
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from collections.abc import AsyncGenerator, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Optional, cast

from langchain_core.messages import AIMessage
from langgraph.errors import GraphBubbleUp

from deskwork.core.redact import describe_exception, redact_exception, redacted_preview
from deskwork.graph._events import emit_graph_event
from deskwork.graph.agents.middleware import AgentMiddleware
from deskwork.graph.core.exceptions import AgentProcessError, OrchestratorError
from deskwork.graph.core.logging_context import bind_logging_context, get_graph_logger
from deskwork.graph.core.types import AgentResponse

if TYPE_CHECKING:
    from langchain_core.runnables import RunnableConfig

    from deskwork.graph.config.schema import AgentConfig
    from deskwork.graph.core.state import OrchestratorState
    from deskwork.graph.knowledge.template_manager import ReactTemplateManager
    from deskwork.graph.react.executor import ReactExecutor

__all__ = ["BaseAgent"]

logger = get_graph_logger("deskwork.graph.agents")

IDENTITY_FIELDS: tuple[str, ...] = ("session_id", "user_id")
"""State keys that name the tenant; agents must never change them."""

LOADED_SLOT_CONTENTS_KEY = "_loaded_slot_contents"
"""The ReAct result key whose knowledge ``invoke()`` moves into ``knowledge_context`` (AD-52)."""

_PREVIEW_CHARS = 80


class BaseAgent(ABC):
    """Base class of every graph agent: implement :meth:`process`, LangGraph calls :meth:`invoke`.

    Args:
        config: The agent's name, type and description (``AgentConfig``).
        template_manager: Knowledge modules for ReAct-mode agents.
        react_executor: A ready ReAct loop for ReAct-mode agents.
        middleware: Hooks run around every invocation, in onion order.
        redact_pii: Hash ``session_id``/``user_id`` in log output.
    """

    def __init__(
        self,
        config: AgentConfig,
        template_manager: ReactTemplateManager | None = None,
        react_executor: ReactExecutor | None = None,
        middleware: Sequence[AgentMiddleware] | None = None,
        *,
        redact_pii: bool = False,
    ) -> None:
        self.config = config
        self.template_manager = template_manager
        self.react_executor = react_executor
        self.middleware: tuple[AgentMiddleware, ...] = tuple(middleware or ())
        self.redact_pii = redact_pii

    @property
    def name(self) -> str:
        """The agent's name: its graph node name and its routing target."""
        return self.config.name

    @property
    def description(self) -> str:
        """What the agent does (shown to routing supervisors)."""
        return self.config.description

    @abstractmethod
    async def process(
        self, state: OrchestratorState, config: RunnableConfig | None = None
    ) -> AgentResponse:
        """The agent's logic: read ``state``, return an :class:`AgentResponse`."""

    async def astream_process(
        self, state: OrchestratorState, config: RunnableConfig | None = None
    ) -> AsyncGenerator[tuple[dict[str, Any], str], None]:
        """Stream ``(chunk_meta, accumulated_text)`` pairs. Not supported by default."""
        raise NotImplementedError(f"{type(self).__name__} does not support streaming")
        yield {}, ""  # pragma: no cover - makes this an async generator

    async def invoke(
        self,
        state: OrchestratorState,
        # LangGraph passes ``config`` only to nodes whose annotation reads exactly
        # "RunnableConfig" or "Optional[RunnableConfig]" (not "RunnableConfig | None")
        config: Optional[RunnableConfig] = None,  # noqa: UP045
    ) -> dict[str, Any]:
        """Run middleware and :meth:`process`; return the LangGraph state update."""
        bind_logging_context(state, config, redact_pii=self.redact_pii)
        request_id = state.get("request_id")
        logger.info("agent_invoke_start", agent_name=self.name, request_id=request_id)
        emit_graph_event("graph.agent.started", self.name, {"agent_name": self.name})
        started = time.monotonic()
        try:
            run_state, response = await self._run_onion(state, config)
        except GraphBubbleUp:  # interrupt() or a Command: LangGraph's control flow, not a failure
            emit_graph_event("graph.agent.interrupted", self.name, {"agent_name": self.name})
            raise
        except OrchestratorError as exc:
            self._report_failure(exc, started, request_id)
            redact_exception(exc)  # with its causes: an application's span records them
            raise
        except Exception as exc:
            self._report_failure(exc, started, request_id)
            redacted = redact_exception(exc)  # a copy of a group whose message told a secret
            raise AgentProcessError(
                f"Agent {self.name!r} failed: {describe_exception(redacted)}",
                agent_name=self.name,
                cause=redacted,
            ) from redacted
        update = self._build_update(run_state, response, config)
        _log_and_emit_completed(self.name, response, update, started, request_id)
        return update

    async def _run_onion(
        self, state: OrchestratorState, config: RunnableConfig | None
    ) -> tuple[OrchestratorState, AgentResponse]:
        # each layer exits exactly once: through after_invoke, or through on_error
        open_layers: list[AgentMiddleware] = []
        current = state
        try:
            for mw in self.middleware:
                current = await _hook(
                    self.name, mw, "before_invoke", mw.before_invoke, current, config
                )
                open_layers.append(mw)
            identity = _identity(current)
            response = _checked(self.name, "process()", await self.process(current, config))
            self._check_identity(identity, current, state.get("request_id"))
            while open_layers:
                mw = open_layers.pop()
                response = await _hook(
                    self.name, mw, "after_invoke", mw.after_invoke, current, response, config
                )
                response = _checked(self.name, f"{type(mw).__name__}.after_invoke", response)
        except GraphBubbleUp:  # the node runs again from the start when the graph resumes
            raise
        except Exception as exc:
            await self._run_on_error(reversed(open_layers), current, exc, config)
            raise
        return current, response

    async def _run_on_error(
        self,
        middleware: Iterable[AgentMiddleware],
        state: OrchestratorState,
        error: Exception,
        config: RunnableConfig | None,
    ) -> None:
        for mw in middleware:
            try:
                await mw.on_error(self.name, state, error, config)
            except Exception as hook_exc:  # on_error never masks the original failure
                _report_hook_failure(self.name, mw, "on_error", hook_exc)

    def _check_identity(
        self, before: dict[str, Any], state: OrchestratorState, request_id: Any
    ) -> None:
        after = _identity(state)
        changed = sorted(k for k in IDENTITY_FIELDS if before.get(k) != after.get(k))
        if changed:
            logger.warning(
                "identity_field_mutated",
                agent_name=self.name,
                fields=changed,
                request_id=request_id,
            )

    def _report_failure(self, exc: Exception, started: float, request_id: Any) -> None:
        logger.error(
            "agent_invoke_failed",
            agent_name=self.name,
            exc_type=type(exc).__name__,
            exc_msg=str(exc),
            request_id=request_id,
        )
        emit_graph_event(
            "graph.agent.failed",
            self.name,
            {
                "agent_name": self.name,
                "error_type": type(exc).__name__,
                "error": redacted_preview(str(exc), 200),
                "duration_ms": _elapsed_ms(started),
            },
        )

    def _build_update(
        self,
        state: OrchestratorState,
        response: AgentResponse,
        config: RunnableConfig | None,
    ) -> dict[str, Any]:
        slots = dict(response.slots_update)
        loaded = slots.pop(LOADED_SLOT_CONTENTS_KEY, None)
        message = AIMessage(
            content=response.content,
            name=self.name,
            response_metadata=_response_metadata(state, config, response),
        )
        update: dict[str, Any] = {
            "messages": [message],
            "current_agent": response.next_agent or self.name,
            "context_slots": slots,
        }
        if isinstance(loaded, Mapping) and loaded:
            update["knowledge_context"] = dict(loaded)
        return update

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(name={self.name!r}, "
            f"middleware={[type(m).__name__ for m in self.middleware]})"
        )


async def _hook(agent_name: str, mw: AgentMiddleware, hook: str, fn: Any, *args: Any) -> Any:
    try:
        return await fn(agent_name, *args)
    except Exception as exc:
        _report_hook_failure(agent_name, mw, hook, exc)
        raise


def _report_hook_failure(agent_name: str, mw: AgentMiddleware, hook: str, exc: Exception) -> None:
    logger.warning(
        "middleware_hook_failed",
        agent_name=agent_name,
        middleware=type(mw).__name__,
        hook=hook,
        exc_type=type(exc).__name__,
        exc_msg=str(exc),
    )
    emit_graph_event(
        "graph.middleware.failed",
        agent_name,
        {
            "agent_name": agent_name,
            "middleware": type(mw).__name__,
            "hook": hook,
            "error_type": type(exc).__name__,
            "error": redacted_preview(str(exc), 200),
        },
    )


def _checked(agent_name: str, source: str, response: Any) -> AgentResponse:
    """``response`` when it is an :class:`AgentResponse` whose fields have their declared types.

    Raises:
        AgentProcessError: naming the agent, what returned the response and what is wrong with it,
            instead of an ``AttributeError`` or a pydantic error from building the state update.
    """
    problem = _response_problem(response)
    if problem is None:
        return cast("AgentResponse", response)  # _response_problem checked its type
    raise AgentProcessError(f"Agent {agent_name!r}: {source} {problem}", agent_name=agent_name)


def _response_problem(response: Any) -> str | None:
    if not isinstance(response, AgentResponse):
        return f"returned {type(response).__name__}, not an AgentResponse"
    fields: tuple[tuple[str, Any, type | tuple[type, ...], str], ...] = (
        ("content", response.content, str, "a str"),
        ("next_agent", response.next_agent, (str, type(None)), "a str or None"),
        ("slots_update", response.slots_update, Mapping, "a mapping"),
        ("slots_tier", response.slots_tier, Mapping, "a mapping"),
        ("token_usage", response.token_usage, (Mapping, type(None)), "a mapping or None"),
    )
    for name, value, expected, wanted in fields:
        if not isinstance(value, expected):
            return f"returned an AgentResponse whose {name} is {type(value).__name__}, not {wanted}"
    return None


def _identity(state: Mapping[str, Any]) -> dict[str, Any]:
    return {key: state.get(key) for key in IDENTITY_FIELDS}


def _response_metadata(
    state: OrchestratorState, config: RunnableConfig | None, response: AgentResponse
) -> dict[str, Any]:
    meta = (config or {}).get("metadata") or {}
    data: dict[str, Any] = {
        "agent_name": response.agent_name,
        "request_id": state.get("request_id"),
        "session_id": state.get("session_id"),
        "user_id": state.get("user_id"),
        "langgraph_step": meta.get("langgraph_step"),
        "langgraph_node": meta.get("langgraph_node"),
    }
    if response.token_usage is not None:
        data["token_usage"] = dict(response.token_usage)
    if response.slots_tier:
        data["slots_tier"] = {key: str(tier) for key, tier in response.slots_tier.items()}
    return data


def _log_and_emit_completed(
    agent_name: str,
    response: AgentResponse,
    update: dict[str, Any],
    started: float,
    request_id: Any,
) -> None:
    slot_keys = sorted(update["context_slots"])
    logger.info(
        "agent_invoke_completed",
        agent_name=agent_name,
        next_agent=response.next_agent,
        slot_keys_updated=slot_keys,
        token_usage=response.token_usage,
        request_id=request_id,
    )
    emit_graph_event(
        "graph.agent.completed",
        agent_name,
        {
            "agent_name": agent_name,
            "next_agent": response.next_agent,
            "token_usage": dict(response.token_usage) if response.token_usage else None,
            "slot_keys_updated": slot_keys,
            "content_preview": redacted_preview(str(response.content), _PREVIEW_CHARS),
            "duration_ms": _elapsed_ms(started),
        },
    )


def _elapsed_ms(started: float) -> float:
    return round((time.monotonic() - started) * 1000, 3)
