"""The realtime LLM client calls adapters through the runtime's seam, like every runner."""

from __future__ import annotations

from typing import Any

import pytest
from rt_support import dynamic_config

from deskwork.exceptions import ConfigurationError
from deskwork.realtime import DynamicAgent
from deskwork.realtime.core.llm import LLMClient
from deskwork.testing import ScriptedAdapter
from deskwork.testing.scripted import fail, reply

MESSAGES = [{"role": "user", "content": "Say something."}]


async def test_an_adapter_returning_the_wrong_type_is_named_in_the_error() -> None:
    class DictAdapter(ScriptedAdapter):
        async def acomplete(self, **kwargs: Any) -> Any:
            return {"content": "{}"}

    result = await LLMClient(adapter=DictAdapter([])).generate("s/m", MESSAGES)
    assert result.parsed is None
    assert "DictAdapter.acomplete() returned dict" in str(result.error)


async def test_the_client_never_asks_the_provider_client_to_retry() -> None:
    adapter = ScriptedAdapter([reply('{"has_insight": false}')])
    result = await LLMClient(adapter=adapter).generate("s/m", MESSAGES)
    assert result.error is None and result.parsed == {"has_insight": False}
    assert adapter.calls[0]["num_retries"] == 0


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"adapter": "openai/gpt-4o-mini"}, "adapter must be a BaseModelAdapter, got str"),
        ({"adapter_provider": 5}, "adapter_provider must be callable"),
        ({"timeout": -1}, "timeout must be a number of seconds above 0"),
        ({"timeout": "30"}, "timeout must be a number of seconds above 0"),
        ({"timeout": float("inf")}, "timeout must be a number of seconds above 0"),
        ({"max_tokens": 0}, "max_tokens must be an integer above 0"),
        ({"max_tokens": 2.5}, "max_tokens must be an integer above 0"),
    ],
)
def test_llm_client_refuses_arguments_that_fail_every_call(
    kwargs: dict[str, Any], message: str
) -> None:
    """Before, each was kept: every call then failed (result.error "type object 'str' has no
    attribute 'acomplete'", or "model call timed out after -1s")."""
    with pytest.raises(ConfigurationError, match=f"LLMClient: {message}"):
        LLMClient(**kwargs)


def test_a_dynamic_agent_given_an_adapter_that_is_not_one_fails_when_built() -> None:
    with pytest.raises(ConfigurationError, match="adapter must be a BaseModelAdapter"):
        DynamicAgent(dynamic_config(), adapter="openai/gpt-4o-mini")  # type: ignore[arg-type]


class UnreadableTimeout(TimeoutError):
    def __str__(self) -> str:
        raise RuntimeError("__str__ broke")


async def test_generate_never_raises_even_for_an_unreadable_timeout() -> None:
    """Before, reading the timeout's text raised out of generate(), documented never to."""
    error = UnreadableTimeout()
    result = await LLMClient(adapter=ScriptedAdapter([fail(error)])).generate("s/m", MESSAGES)
    assert result.error is error and result.parsed is None
