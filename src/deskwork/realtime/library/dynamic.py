"""``DynamicAgent``: an LLM agent defined by a configuration dict (see ``_config``).

One evaluation::

    render the sandboxed Jinja2 prompt (blackboard, state, memory, context ...)
      + output format instruction and JSON schema
      + user context and RAG documents (when include_context)
      + language directive (always, when set)
    → one call through a deskwork BaseModelAdapter (the engine's; LiteLLM by default)
    → parse the reply with the output format → AgentResponse

A template error or a reply that is not valid JSON for the format raises; the engine turns
that into an ``error`` insight and applies none of the agent's updates.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Mapping
from functools import cache
from typing import TYPE_CHECKING, Any

from deskwork.adapters.base import ModelResponse, assemble_stream
from deskwork.realtime.core.agent import BaseAgent
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

_JSON_MODE = {"type": "json_object"}


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
    ) -> None:
        """Validate ``config`` and compile its prompt.

        Args:
            config: The configuration dict (schema in ``deskwork.realtime.library._config``).
            adapter: Model adapter for this agent (default: the engine's adapter).
            output_format: A format object to use instead of looking up
                ``config["output_format"]`` in the registry.

        Raises:
            ConfigurationError: invalid field or trigger rule, unknown output format, or a
                prompt template with a syntax error.
        """
        settings = parse_config(config)
        super().__init__(settings.agent_config())
        self.settings: DynamicAgentConfig = settings
        """The validated configuration."""
        self.raw_config = dict(config)
        """The configuration as given."""
        self.output_format = output_format or get_output_format(settings.output_format)
        """How replies are requested and read."""
        self.template = compile_template(settings.text, label=f"agent {self.config.id!r} text")
        self._format_prompt = self.output_format.prompt()
        self._adapter = adapter

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
        """Render the prompt, call the model once and parse its reply.

        Raises:
            jinja2.TemplateError: the prompt failed to render (e.g. a sandbox violation).
            AgentOutputError: the reply is not valid JSON for the output format.
        """
        messages = self.build_messages(context)
        reply = await self._call_model(messages)
        response = self.output_format.parse(
            reply.content, agent_id=self.config.id, agent_name=self.config.name
        )
        response.debug_info.update(
            {"model": reply.model or self.settings.llm.model, "usage": reply.usage}
        )
        return response

    def build_messages(self, context: AgentContext) -> list[dict[str, Any]]:
        """The system and user messages for ``context`` (renders the template)."""
        variables = template_variables(
            context,
            agent_id=self.config.id,
            agent_name=self.config.name,
            private_state=self.private_state,
            context_turns=self.settings.llm.context_turns,
        )
        sections = [render_prompt(self.template, variables).strip(), self._format_prompt]
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

    async def _call_model(self, messages: list[dict[str, Any]]) -> ModelResponse:
        adapter = self.adapter
        llm = self.settings.llm
        extra: dict[str, Any] = {}
        if _accepts_response_format(adapter):
            extra["response_format"] = _JSON_MODE
        result = await adapter.acomplete(
            model=llm.model,
            messages=messages,
            tools=None,
            tool_choice=None,
            temperature=llm.temperature,
            max_tokens=llm.max_tokens,
            stream=False,
            stream_options=None,
            drop_params=True,
            **extra,
        )
        if isinstance(result, ModelResponse):
            return result
        return assemble_stream([chunk async for chunk in result], model=llm.model)


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


def _accepts_response_format(adapter: BaseModelAdapter) -> bool:
    """Whether the adapter's ``acomplete`` takes ``response_format`` (or ``**kwargs``)."""
    return _accepts_response_format_cls(type(adapter))


@cache
def _accepts_response_format_cls(adapter_type: type[BaseModelAdapter]) -> bool:
    params = inspect.signature(adapter_type.acomplete).parameters
    return "response_format" in params or any(
        p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()
    )
