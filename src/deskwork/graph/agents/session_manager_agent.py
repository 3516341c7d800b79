"""The built-in history agent: :class:`SessionManagerAgent`.

A ReAct agent whose actions are the methods of a :class:`SessionManager`: it reads the
conversation history, summaries and memories the manager supports and answers with a terminal
``respond`` action (``content``, optional ``next_agent``). Which actions exist follows
``session_manager.get_capabilities()``; the mapping from capability to handler is checked when the
agent is built, so a missing handler fails at startup (``AttributeError``), not mid-conversation.

Identity never comes from the model: every handler reads ``session_id`` and ``user_id`` from the
graph state, so a prompt cannot make the agent read another tenant's data.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from deskwork.graph.agents._react_handlers import last_user_text, respond_handler
from deskwork.graph.agents.base import BaseAgent
from deskwork.graph.core.exceptions import (
    InvalidStateError,
    LLMNotConfiguredError,
    ReactExecutorNotConfiguredError,
    SessionManagerError,
    SessionManagerNotConfiguredError,
)
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
    from deskwork.graph.react.models import ActionHandler
    from deskwork.graph.session.interface import SessionManager

__all__ = ["SessionManagerAgent"]

RESPOND_ACTION = "respond"
"""The terminal action: ``{"content": ..., "next_agent": ... | null}``."""

_MAX_LIMIT = 100


class SessionManagerAgent(BaseAgent):
    """ReAct agent that uses :class:`SessionManager` methods as its actions.

    Args:
        config: The agent's ``AgentConfig``.
        llm: A LangChain chat model.
        session_manager: Where history, summaries and memories live.
        template_manager: The agent's knowledge/prompt (required to run: ReAct only).
        middleware: Hooks around every invocation.
        rate_limiter: Acquired around every LLM call.
        retry_config: Retries of transient LLM failures.
        timeout_config: LLM call and total ReAct timeouts.
        use_structured_output: Ask the model for structured ReAct replies.
        redact_pii: Hash ``session_id``/``user_id`` in logs.

    Raises:
        LLMNotConfiguredError: ``llm`` is ``None``.
        SessionManagerNotConfiguredError: ``session_manager`` is ``None``.
        AttributeError: a handler named in ``_CAPABILITY_HANDLER_MAP`` does not exist.
    """

    _CAPABILITY_HANDLER_MAP: ClassVar[Mapping[str, str]] = {
        "get_messages": "_handle_get_messages",
        "get_summary": "_handle_get_summary",
        "recall_memory": "_handle_recall_memory",
        "search_memories": "_handle_search_memories",
        "search_memories_by_user": "_handle_search_memories_by_user",
        "store_memory": "_handle_store_memory",
    }
    """Session capability (= action name) -> the method of this class that runs it."""

    def __init__(
        self,
        config: AgentConfig,
        llm: BaseChatModel,
        session_manager: SessionManager,
        *,
        template_manager: ReactTemplateManager | None = None,
        middleware: Sequence[AgentMiddleware] | None = None,
        rate_limiter: RateLimiter | None = None,
        retry_config: RetryConfig | None = None,
        timeout_config: TimeoutConfig | None = None,
        use_structured_output: bool = False,
        redact_pii: bool = False,
    ) -> None:
        if llm is None:
            raise LLMNotConfiguredError(f"SessionManagerAgent {config.name!r} needs an llm")
        if session_manager is None:
            raise SessionManagerNotConfiguredError(
                f"SessionManagerAgent {config.name!r} needs a session_manager"
            )
        super().__init__(
            config, template_manager=template_manager, middleware=middleware, redact_pii=redact_pii
        )
        self.llm = llm
        self.session_manager = session_manager
        self.rate_limiter = rate_limiter
        self.retry_config = retry_config
        self.timeout_config = timeout_config
        self.use_structured_output = use_structured_output
        self.action_handlers = self._build_action_handlers()

    def _build_action_handlers(self) -> dict[str, ActionHandler]:
        """One handler per supported capability, plus ``respond``; validates the map first."""
        missing = sorted(
            f"{cap} -> {method}"
            for cap, method in self._CAPABILITY_HANDLER_MAP.items()
            if not callable(getattr(self, method, None))
        )
        if missing:
            raise AttributeError(
                f"{type(self).__name__} has no handler method for: {', '.join(missing)}"
            )
        supported = self.session_manager.get_capabilities()
        handlers: dict[str, ActionHandler] = {
            cap: getattr(self, method)
            for cap, method in self._CAPABILITY_HANDLER_MAP.items()
            if cap in supported
        }
        handlers[RESPOND_ACTION] = respond_handler
        return handlers

    async def process(
        self, state: OrchestratorState, config: RunnableConfig | None = None
    ) -> AgentResponse:
        """Run the ReAct loop over the session actions and return its ``respond`` answer.

        Raises:
            InvalidStateError: ``state`` has no ``session_id`` (the session to work on).
        """
        session_id = state.get("session_id")
        if not isinstance(session_id, str) or not session_id:
            raise InvalidStateError(
                f"SessionManagerAgent {self.name!r} needs state['session_id'] (got "
                f"{session_id!r}); create the state with create_initial_state(session_id=...)"
            )
        executor = self._executor()
        result = await executor.execute(
            last_user_text(state),
            {
                "session_id": session_id,
                "user_id": state.get("user_id", ""),
                "available_session_actions": ", ".join(sorted(self.action_handlers)),
            },
            config,
            request_id=state.get("request_id"),
        )
        slots: dict[str, Any] = {}
        if result.get("_loaded_slot_contents"):
            slots["_loaded_slot_contents"] = result["_loaded_slot_contents"]
        usage = result.get("_token_usage")
        next_agent = result.get("next_agent")
        return AgentResponse(
            agent_name=self.name,
            content=str(result.get("content") or ""),
            next_agent=str(next_agent) if next_agent else None,
            slots_update=slots,
            token_usage=dict(usage) if usage else None,
        )

    def _executor(self) -> ReactExecutor:
        if self.react_executor is not None:
            return self.react_executor
        if self.template_manager is None:
            raise ReactExecutorNotConfiguredError(
                f"SessionManagerAgent {self.name!r} is a ReAct agent: it needs a "
                "ReactTemplateManager"
            )
        from deskwork.graph.react.executor import ReactExecutor

        self.react_executor = ReactExecutor(
            self.name,
            self.llm,
            self.template_manager,
            self.action_handlers,
            retry_config=self.retry_config,
            timeout_config=self.timeout_config,
            rate_limiter=self.rate_limiter,
            use_structured_output=self.use_structured_output,
        )
        return self.react_executor

    # -- action handlers (identity always from the state, never from params) ----------------

    async def _handle_get_messages(
        self, params: dict[str, Any], state: dict[str, Any]
    ) -> tuple[str, dict[str, Any]]:
        limit = _limit(params, 10)
        messages = await self._call(
            "get_messages", state["session_id"], limit=limit, user_id=state.get("user_id")
        )
        if not messages:
            return "No earlier messages in this session.", {}
        return "\n".join(f"{m.role}: {m.content}" for m in messages), {}

    async def _handle_get_summary(
        self, params: dict[str, Any], state: dict[str, Any]
    ) -> tuple[str, dict[str, Any]]:
        summary = await self._call("get_summary", state["session_id"])
        return (summary.content if summary else "This session has no summary yet."), {}

    async def _handle_recall_memory(
        self, params: dict[str, Any], state: dict[str, Any]
    ) -> tuple[str, dict[str, Any]]:
        key = _required(params, "key")
        memory = await self._call("recall_memory", state["session_id"], key)
        return (f"{memory.key}: {memory.value}" if memory else f"No memory named {key!r}."), {}

    async def _handle_search_memories(
        self, params: dict[str, Any], state: dict[str, Any]
    ) -> tuple[str, dict[str, Any]]:
        query = _required(params, "query")
        found = await self._call(
            "search_memories", state["session_id"], query, limit=_limit(params, 5)
        )
        return _render_memories(found, query), {}

    async def _handle_search_memories_by_user(
        self, params: dict[str, Any], state: dict[str, Any]
    ) -> tuple[str, dict[str, Any]]:
        query = _required(params, "query")
        user_id = state.get("user_id")
        if not user_id or user_id == "anonymous":
            return "The user is anonymous: there are no memories from other sessions.", {}
        found = await self._call(
            "search_memories_by_user", user_id, query, limit=_limit(params, 10)
        )
        return _render_memories(found, query), {}

    async def _handle_store_memory(
        self, params: dict[str, Any], state: dict[str, Any]
    ) -> tuple[str, dict[str, Any]]:
        from deskwork.graph.session.models import Memory

        key, value = _required(params, "key"), _required(params, "value")
        memory = Memory(
            session_id=state["session_id"],
            key=key,
            value=value,
            importance=float(params.get("importance", 0.5)),
            user_id=state.get("user_id"),
            source_agent=self.name,
        )
        await self._call("store_memory", state["session_id"], memory, user_id=state.get("user_id"))
        return f"Stored memory {key!r}.", {}

    async def _call(self, method: str, *args: Any, **kwargs: Any) -> Any:
        try:
            return await getattr(self.session_manager, method)(*args, **kwargs)
        except Exception as exc:
            raise SessionManagerError(
                f"SessionManager.{method}() failed: {type(exc).__name__}: {exc}"
            ) from exc

    def __repr__(self) -> str:
        return (
            f"SessionManagerAgent(name={self.name!r}, actions={sorted(self.action_handlers)}, "
            f"middleware={[type(m).__name__ for m in self.middleware]})"
        )


def _required(params: Mapping[str, Any], name: str) -> str:
    value = params.get(name)
    if value is None or not str(value).strip():
        raise ValueError(f"missing required parameter {name!r}")
    return str(value)


def _limit(params: Mapping[str, Any], default: int) -> int:
    try:
        return max(1, min(int(params.get("limit", default)), _MAX_LIMIT))
    except (TypeError, ValueError):
        return default


def _render_memories(memories: Sequence[Any], query: str) -> str:
    if not memories:
        return f"No memories match {query!r}."
    return "\n".join(f"{m.key}: {m.value} (importance {m.importance:.2f})" for m in memories)
