"""``DynamicAgent``: an LLM agent defined by a configuration dict (see ``_config``).

One evaluation::

    render the sandboxed Jinja2 prompt (blackboard, state, memory, context ...)
      + output format instruction and JSON schema
      + user context and RAG documents (when include_context)
      + language directive (always, when set)
    + session instructions (AgentContext.agent_config_overrides)
    → agent.llm.generate_json(...) (an LLMClient over the engine's adapter by default;
      any object with an async generate_json can replace it, e.g. a fake in tests)
    → read the reply with the output format → AgentResponse

A template error or a reply that is not valid JSON for the format raises; the engine turns
that into an ``error`` insight and applies none of the agent's updates.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from deskwork.realtime.core._problems import (
    AgentConfigurationError,
    ConfigProblem,
    ProblemLog,
    default_strict,
)
from deskwork.realtime.core.agent import BaseAgent
from deskwork.realtime.core.llm import AgentOutputError, LLMClient
from deskwork.realtime.core.models import AgentContext, AgentResponse
from deskwork.realtime.library._config import DynamicAgentConfig, parse_config
from deskwork.realtime.library._prompt import (
    compile_template,
    render_prompt,
    template_variables,
)
from deskwork.realtime.library.output_formats import OutputFormat, get_output_format

if TYPE_CHECKING:
    from deskwork.adapters.base import BaseModelAdapter

__all__ = ["DynamicAgent"]


class DynamicAgent(BaseAgent):
    """A configurable LLM agent whose prompt and triggers come from a dict (or database row).

    Example:
        ```python
        agent = DynamicAgent({
            "name": "Sales Coach",
            "trigger_config": {"mode": "turn_based", "cooldown": 10},
            "model_config": {"model": "openai/gpt-4o-mini", "context_turns": 10},
            "text": "You coach a seller. Phase: {{ blackboard.variables.phase }}",
        })
        ```
    """

    def __init__(
        self,
        config: Mapping[str, Any],
        *,
        adapter: BaseModelAdapter | None = None,
        output_format: OutputFormat | None = None,
        strict: bool | None = None,
    ) -> None:
        """Validate ``config`` and compile its prompt.

        Args:
            config: The configuration dict (schema in ``deskwork.realtime.library._config``).
            adapter: Model adapter for this agent (default: the engine's adapter).
            output_format: A format object to use instead of looking up
                ``config["output_format"]`` in the registry.
            strict: Raise on any configuration problem (``True``), or repair it and log one
                structured warning per problem (``False``). ``None``: lenient, unless the
                ``DESKWORK_REALTIME_STRICT_CONFIG`` environment variable is set.

        Raises:
            AgentConfigurationError: ``name`` or ``text`` is missing or blank, the prompt
                template has a syntax error, ``output_format`` is not an ``OutputFormat``, or
                (strict) the configuration has any problem.
        """
        strict = default_strict() if strict is None else strict
        if not isinstance(config, Mapping):
            raise AgentConfigurationError("a DynamicAgent config must be a mapping")
        if output_format is not None and not isinstance(output_format, OutputFormat):
            raise AgentConfigurationError(
                "DynamicAgent: output_format= must be an OutputFormat, got "
                f"{type(output_format).__name__}; to use a registered format by name, set "
                'config["output_format"]'
            )
        label = str(config.get("id") or config.get("name") or "?")
        log = ProblemLog(label, strict=strict)
        settings = parse_config(config, log)
        agent_config = settings.agent_config(log)
        self.problems: list[ConfigProblem] = log.finish()
        """Problems repaired while loading (lenient mode)."""
        agent_config.strict = strict
        super().__init__(agent_config)
        self.settings: DynamicAgentConfig = settings
        """The validated configuration."""
        self.raw_config = dict(config)
        """The configuration as given."""
        self.output_format = output_format or get_output_format(settings.output_format)
        """How replies are requested and read."""
        self.template = compile_template(settings.text, label=f"agent {self.config.id!r} text")
        self._format_prompt = self.output_format.prompt()
        self._adapter = adapter
        if adapter is not None:
            self.llm = LLMClient(adapter)

    @property
    def adapter(self) -> BaseModelAdapter:
        """This agent's adapter, else the engine's, else a default ``LiteLLMAdapter``."""
        if self._adapter is not None:
            return self._adapter
        if self.adapter_provider is not None:
            return self.adapter_provider()
        from deskwork.adapters.litellm import LiteLLMAdapter

        self._adapter = LiteLLMAdapter()
        return self._adapter

    async def evaluate(self, context: AgentContext) -> AgentResponse:
        """Render the prompt, ask ``self.llm`` for JSON once and read the reply.

        Raises:
            jinja2.TemplateError: the prompt failed to render (e.g. a sandbox violation).
            AgentOutputError: no usable reply (the model call failed, or the reply is not
                valid JSON for the output format); the cause is chained.
        """
        messages = self.build_messages(context)
        llm = self.llm if self.llm is not None else LLMClient(adapter_provider=lambda: self.adapter)
        reply = await _ask(
            llm, self.config.id, model=self.config.model, messages=messages, **self._llm_kwargs()
        )
        if reply is None:
            error = getattr(llm, "last_error", None)
            if isinstance(error, BaseException):
                raise error
            raise AgentOutputError("the model returned no usable JSON reply")
        response = self.output_format.parse_object(
            reply, agent_id=self.config.id, agent_name=self.config.name
        )
        result = getattr(llm, "last_result", None)
        response.debug_info["model"] = getattr(result, "model", None) or self.config.model
        response.debug_info["usage"] = getattr(result, "usage", None) or {}
        return response

    def _llm_kwargs(self) -> dict[str, Any]:
        """The optional call settings, sent only when configured (fakes may not take them)."""
        config, llm = self.config, self.settings.llm
        kwargs: dict[str, Any] = {}
        if config.reasoning_effort is not None:
            kwargs["reasoning_effort"] = config.reasoning_effort
        if llm.timeout is not None:
            kwargs["timeout"] = llm.timeout
        if config.max_tokens is not None:
            kwargs["max_tokens"] = config.max_tokens
        if config.temperature is not None:
            kwargs["extra_params"] = {"temperature": config.temperature}
        return kwargs

    def build_messages(self, context: AgentContext) -> list[dict[str, Any]]:
        """The system and user messages for ``context`` (renders the template)."""
        override = context.agent_config_overrides.get(self.config.id)
        turns = self.settings.llm.context_turns
        if override is not None:  # None: the whole transcript; 0 from the config stays none
            chosen = override.context_turns(turns)
            turns = len(context.recent_segments) if chosen is None else chosen
        variables = template_variables(
            context,
            agent_id=self.config.id,
            agent_name=self.config.name,
            private_state=self.private_state,
            context_turns=turns,
        )
        sections = [render_prompt(self.template, variables).strip(), self._format_prompt]
        if override is not None and override.instructions_append:
            sections.append(f"## Session instructions\n{override.instructions_append.strip()}")
        if self.settings.include_context:
            if context.user_context:
                sections.append(f"## User context\n{context.user_context}")
            if context.rag_docs:
                docs = "\n\n".join(f"[{i}] {doc}" for i, doc in enumerate(context.rag_docs, 1))
                sections.append(f"## Reference documents\n{docs}")
        if context.language_directive:
            sections.append(f"## Language\n{context.language_directive}")
        system = "\n\n".join(section for section in sections if section)
        return [
            {"role": "system", "content": system},
            {"role": "user", "content": _user_message(context, variables)},
        ]


async def _ask(llm: Any, agent_id: str, **kwargs: Any) -> Any:
    """``llm.generate_json(**kwargs)``, awaited when it is async. A sync client's answer is
    used as it is (it was a model call, maybe a paid one; it blocked the loop while it ran);
    an ``llm`` without ``generate_json`` is a ``TypeError`` naming the agent."""
    generate = getattr(llm, "generate_json", None)
    if not callable(generate):
        raise TypeError(
            f"agent {agent_id!r}: agent.llm ({type(llm).__name__}) has no generate_json; it"
            " needs `async def generate_json(model, messages, **kwargs)`"
        )
    reply = generate(**kwargs)
    return await reply if inspect.isawaitable(reply) else reply


def _user_message(context: AgentContext, variables: dict[str, Any]) -> str:
    """Transcript, trigger and (in event phases) the events of the turn."""
    parts = [f"## Recent conversation\n{variables['transcript'] or '(no transcript yet)'}"]
    trigger = f"## Trigger\n{context.trigger_type.value}"
    if variables["trigger_metadata"]:
        trigger += f" {json.dumps(variables['trigger_metadata'])}"
    parts.append(trigger)
    events = variables["blackboard"]["events"]
    if context.phase > 1 and events:
        listed = [{"name": e["name"], "payload": e["payload"]} for e in events]
        parts.append(f"## Events this turn\n{json.dumps(listed)}")
    return "\n\n".join(parts)
