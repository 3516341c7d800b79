"""The realtime LLM client calls adapters through the runtime's seam, like every runner."""

from __future__ import annotations

from typing import Any

from deskwork.realtime.core.llm import LLMClient
from deskwork.testing import ScriptedAdapter
from deskwork.testing.scripted import reply

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
