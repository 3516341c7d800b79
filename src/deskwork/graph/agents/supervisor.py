"""The built-in routing agent: :class:`SupervisorAgent`.

Two modes:

- **Simple** (no template manager, no ReAct executor): one LLM call per turn. With
  ``use_structured_output=True`` the model is asked for a ``RouteDecision`` through
  ``with_structured_output`` (models without it fall back to text, once, and the answer is cached);
  otherwise, and whenever the structured answer is unusable, the reply text is searched for an
  allowed agent name at word boundaries. Streams with :meth:`SupervisorAgent.astream_process`.
- **ReAct** (with a ``ReactTemplateManager`` or a ``ReactExecutor``; an agent whose config has
  ``knowledge_enabled: true`` but neither raises :class:`ReactExecutorNotConfiguredError`): a
  thought/action/observation loop that loads knowledge and ends with a ``decide`` action
  (``next_agent``, ``content``).

Either way the choice is checked against the topology: routing to itself raises
:class:`RoutingSelfLoopError`; a target the topology does not allow falls back to
``default_return`` (ending the turn when that is the supervisor itself). Each decision is logged
(``routing_decision``) and recorded as a ``graph.route`` event.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from langchain_core.messages import BaseMessage, SystemMessage

from deskwork.graph._events import emit_graph_event
from deskwork.graph.agents._react_handlers import decide_handler, last_user_text
from deskwork.graph.agents._routing import (
    RouteChoice,
    RouteDecision,
    build_routing_prompt,
    choose_route,
    render_memories,
)
from deskwork.graph.agents.base import BaseAgent
from deskwork.graph.agents.memory_injection import INJECTED_MEMORIES_KEY
from deskwork.graph.core.exceptions import (
    LLMInvocationError,
    LLMNotConfiguredError,
    ReactExecutorNotConfiguredError,
    RoutingSelfLoopError,
)
from deskwork.graph.core.llm_utils import ainvoke_with_retry, astream_with_limits
from deskwork.graph.core.logging_context import get_graph_logger
from deskwork.graph.core.types import AgentResponse

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel
    from langchain_core.runnables import RunnableConfig

    from deskwork.graph.agents.middleware import AgentMiddleware
    from deskwork.graph.config.schema import AgentConfig, RetryConfig, TimeoutConfig
    from deskwork.graph.core.rate_limiting import RateLimiter
    from deskwork.graph.core.state import OrchestratorState
    from deskwork.graph.knowledge.template_manager import ReactTemplateManager
    from deskwork.graph.react.executor import ReactExecutor
    from deskwork.graph.routing.topology import TopologyResolver

__all__ = ["SupervisorAgent"]

logger = get_graph_logger("deskwork.graph.agents")

_STRUCTURED_UNSUPPORTED = (NotImplementedError, AttributeError)


class SupervisorAgent(BaseAgent):
    """Routes each turn to a worker agent, within the topology.

    Args:
        config: The supervisor's ``AgentConfig``.
        llm: A LangChain chat model (``MockLLM`` in tests, the deskwork adapter bridge, ...).
        topology: The legal hops; the supervisor only routes where it allows.
        template_manager: Turns on ReAct mode (knowledge modules + ``decide`` action).
        react_executor: A ready ReAct loop (ReAct mode without building one).
        middleware: Hooks around every invocation.
        rate_limiter: Acquired around every LLM call.
        use_structured_output: Ask for a structured ``RouteDecision`` first (simple mode).
        retry_config: Retries of transient LLM failures (``None``: a single attempt).
        timeout_config: ``llm_call_seconds`` limits each LLM call.
        agent_descriptions: What each worker does, shown in the routing prompt.
        redact_pii: Hash ``session_id``/``user_id`` in logs.

    Raises:
        LLMNotConfiguredError: ``llm`` is ``None``.
    """

    def __init__(
        self,
        config: AgentConfig,
        llm: BaseChatModel,
        topology: TopologyResolver,
        *,
        template_manager: ReactTemplateManager | None = None,
        react_executor: ReactExecutor | None = None,
        middleware: Sequence[AgentMiddleware] | None = None,
        rate_limiter: RateLimiter | None = None,
        use_structured_output: bool = False,
        retry_config: RetryConfig | None = None,
        timeout_config: TimeoutConfig | None = None,
        agent_descriptions: Mapping[str, str] | None = None,
        redact_pii: bool = False,
    ) -> None:
        if llm is None:
            raise LLMNotConfiguredError(f"SupervisorAgent {config.name!r} needs an llm")
        super().__init__(
            config,
            template_manager=template_manager,
            react_executor=react_executor,
            middleware=middleware,
            redact_pii=redact_pii,
        )
        self.llm = llm
        self.topology = topology
        self.rate_limiter = rate_limiter
        self.use_structured_output = use_structured_output
        self.retry_config = retry_config
        self.timeout_config = timeout_config
        self.agent_descriptions = dict(agent_descriptions or {})
        self._structured_supported: bool | None = None

    @property
    def is_react_mode(self) -> bool:
        """True with a template manager, a ReAct executor, or ``config.knowledge_enabled``."""
        return (
            self.template_manager is not None
            or self.react_executor is not None
            or self.config.knowledge_enabled
        )

    def allowed_targets(self) -> list[str]:
        """The agents this supervisor may route to (never itself), sorted."""
        return [t for t in self.topology.get_allowed_targets(self.name) if t != self.name]

    async def process(
        self, state: OrchestratorState, config: RunnableConfig | None = None
    ) -> AgentResponse:
        """Decide where the turn goes next (simple or ReAct mode)."""
        if self.is_react_mode:
            return await self._process_react(state, config)
        return await self._process_simple(state, config)

    # -- simple mode -------------------------------------------------------------------------

    async def _process_simple(
        self, state: OrchestratorState, config: RunnableConfig | None
    ) -> AgentResponse:
        messages = self._routing_messages(state)
        decision = await self._structured_decision(messages, config)
        if decision is not None:
            choice = self._choose(decision.next_agent, decision.content)
            usage = None
        else:
            reply = await self._call_llm(messages, config)
            text = _text_of(reply)
            choice = self._choose(text, text)
            usage = _token_usage(reply)
        return self._response(choice, usage)

    async def _structured_decision(
        self, messages: list[BaseMessage], config: RunnableConfig | None
    ) -> RouteDecision | None:
        if not self.use_structured_output or self._structured_supported is False:
            return None
        try:
            runnable = self.llm.with_structured_output(RouteDecision)
            result = await self._call_llm(messages, config, runnable=runnable)
        except _STRUCTURED_UNSUPPORTED:
            self._structured_unsupported()
            return None
        except LLMInvocationError as exc:
            if not isinstance(exc.cause, _STRUCTURED_UNSUPPORTED):
                raise
            self._structured_unsupported()
            return None
        self._structured_supported = True
        if isinstance(result, RouteDecision):
            return result
        if isinstance(result, Mapping):
            return RouteDecision.model_validate(result)
        return None

    def _structured_unsupported(self) -> None:
        logger.info("structured_output_unsupported", agent_name=self.name)
        self._structured_supported = False

    async def _call_llm(
        self,
        messages: list[BaseMessage],
        config: RunnableConfig | None,
        *,
        runnable: Any = None,
    ) -> Any:
        timeout = self.timeout_config.llm_call_seconds if self.timeout_config else None
        return await ainvoke_with_retry(
            runnable if runnable is not None else self.llm,
            messages,
            retry_config=self.retry_config,
            timeout_seconds=timeout,
            config=config,
            rate_limiter=self.rate_limiter,
        )

    def _routing_messages(self, state: OrchestratorState) -> list[BaseMessage]:
        knowledge = state.get("knowledge_context") or {}
        prompt = build_routing_prompt(
            self.name,
            self.description,
            self.allowed_targets(),
            self.agent_descriptions,
            memories=knowledge.get(INJECTED_MEMORIES_KEY) or (),
        )
        return [SystemMessage(content=prompt), *state.get("messages", [])]

    def _choose(self, requested: str | None, content: str) -> RouteChoice:
        """Validate a requested route; raise on a self-loop; record the decision."""
        if requested is not None and requested.strip().lower() == self.name.lower():
            raise RoutingSelfLoopError(
                f"Supervisor {self.name!r} tried to route to itself; "
                f"allowed targets: {self.allowed_targets()}"
            )
        targets = self.allowed_targets()
        choice = choose_route(
            self.name,
            targets,
            requested=requested,
            content=content,
            fallback=self.topology.default_return,
        )
        logger.info(
            "routing_decision",
            agent_name=self.name,
            next_agent=choice.next_agent,
            allowed_targets=targets,
            fell_back=choice.fell_back,
        )
        emit_graph_event(
            "graph.route",
            self.name,
            {
                "from": self.name,
                "requested": _short(choice.requested),
                "chosen": choice.next_agent,
                "fell_back": choice.fell_back,
                "by": "supervisor",
            },
        )
        return choice

    def _response(self, choice: RouteChoice, usage: dict[str, int] | None) -> AgentResponse:
        content = choice.content.strip()
        if choice.next_agent is not None and content.lower() in ("", choice.next_agent.lower()):
            content = f"Routing to {choice.next_agent}."
        return AgentResponse(
            agent_name=self.name,
            content=content,
            next_agent=choice.next_agent,
            token_usage=usage,
        )

    # -- streaming ---------------------------------------------------------------------------

    async def astream_process(
        self, state: OrchestratorState, config: RunnableConfig | None = None
    ) -> AsyncGenerator[tuple[dict[str, Any], str], None]:
        """Stream the routing reply: ``({"chunk_type": "token", "delta": ...}, accumulated)``
        pairs, then ``({"chunk_type": "final", "next_agent": ..., "content": ...}, accumulated)``.

        Raises:
            NotImplementedError: in ReAct mode (its XML parsing needs the whole reply).
        """
        if self.is_react_mode:
            raise NotImplementedError("SupervisorAgent streams in simple mode only, not ReAct")
        messages = self._routing_messages(state)
        accumulated = ""
        async for delta in self._stream_llm(messages, config):
            accumulated += delta
            yield {"chunk_type": "token", "delta": delta}, accumulated
        choice = self._choose(accumulated, accumulated)
        response = self._response(choice, None)
        final = {
            "chunk_type": "final",
            "next_agent": response.next_agent,
            "content": response.content,
        }
        yield final, accumulated

    async def _stream_llm(
        self, messages: list[BaseMessage], config: RunnableConfig | None
    ) -> AsyncGenerator[str, None]:
        timeout = self.timeout_config.llm_call_seconds if self.timeout_config else None
        stream = astream_with_limits(
            self.llm,
            messages,
            timeout_seconds=timeout,
            config=config,
            rate_limiter=self.rate_limiter,
        )
        async for chunk in stream:
            delta = _text_of(chunk)
            if delta:
                yield delta

    # -- ReAct mode --------------------------------------------------------------------------

    async def _process_react(
        self, state: OrchestratorState, config: RunnableConfig | None
    ) -> AgentResponse:
        executor = self._react_executor()
        result = await executor.execute(
            last_user_text(state),
            self._react_context(state),
            config,
            request_id=state.get("request_id"),
        )
        next_agent = result.get("next_agent")
        content = str(result.get("content") or "")
        choice = self._choose(None if next_agent is None else str(next_agent), content)
        slots: dict[str, Any] = {}
        loaded = result.get("_loaded_slot_contents")
        if loaded:
            slots["_loaded_slot_contents"] = loaded
        base = self._response(choice, _usage_dict(result.get("_token_usage")))
        return AgentResponse(
            agent_name=base.agent_name,
            content=base.content,
            next_agent=base.next_agent,
            slots_update=slots,
            token_usage=base.token_usage,
        )

    def _react_executor(self) -> ReactExecutor:
        if self.react_executor is not None:
            return self.react_executor
        if self.template_manager is None:
            raise ReactExecutorNotConfiguredError(
                f"Supervisor {self.name!r} needs a ReactTemplateManager for ReAct mode"
            )
        from deskwork.graph.react.executor import ReactExecutor

        self.react_executor = ReactExecutor(
            self.name,
            self.llm,
            self.template_manager,
            {"decide": decide_handler},
            retry_config=self.retry_config,
            timeout_config=self.timeout_config,
            rate_limiter=self.rate_limiter,
            use_structured_output=self.use_structured_output,
        )
        return self.react_executor

    def _react_context(self, state: OrchestratorState) -> dict[str, Any]:
        targets = self.allowed_targets()
        knowledge = state.get("knowledge_context") or {}
        return {
            "allowed_agents": ", ".join(targets),
            "agent_descriptions": "\n".join(
                f"- {t}: {self.agent_descriptions.get(t, '')}" for t in targets
            ),
            "context_slots": dict(state.get("context_slots") or {}),
            "injected_memories": render_memories(knowledge.get(INJECTED_MEMORIES_KEY) or ()),
        }

    def __repr__(self) -> str:
        mode = "react" if self.is_react_mode else "simple"
        return (
            f"SupervisorAgent(name={self.name!r}, mode={mode}, targets={self.allowed_targets()}, "
            f"middleware={[type(m).__name__ for m in self.middleware]})"
        )


def _text_of(message: Any) -> str:
    content = getattr(message, "content", message)
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            p if isinstance(p, str) else str(p.get("text", "")) for p in content if p is not None
        )
    return str(content)


def _token_usage(message: Any) -> dict[str, int] | None:
    usage = getattr(message, "usage_metadata", None)
    if usage:
        return {k: int(v) for k, v in usage.items() if isinstance(v, int)}
    return None


def _usage_dict(value: Any) -> dict[str, int] | None:
    if isinstance(value, Mapping) and value:
        return {str(k): int(v) for k, v in value.items() if isinstance(v, int)}
    return None


def _short(text: str | None, limit: int = 80) -> str | None:
    if text is None:
        return None
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
