"""What users need to test their own agents offline.

- :class:`ScriptedAdapter` and its turn helpers: a deterministic model.
- :class:`OpenAICompatServer`: a local OpenAI-compatible HTTP server for the real
  LiteLLM/HTTP path (imported lazily).
- :func:`recorded`: record a test's HTTP exchanges with a provider once, replay them offline
  (imported lazily; needs the ``testing`` extra).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from deskwork.testing.scripted import (
    ScriptedAdapter,
    ScriptExhaustedError,
    Turn,
    call_tool,
    call_tools,
    fail,
    reply,
    structured,
)

if TYPE_CHECKING:
    from deskwork.testing._recording import (
        Cassette,
        CassetteMissError,
        NetworkBlockedError,
        recorded,
        request_key,
    )
    from deskwork.testing.openai_server import OpenAICompatServer, ServerReply

__all__ = [
    "Cassette",
    "CassetteMissError",
    "NetworkBlockedError",
    "OpenAICompatServer",
    "ScriptExhaustedError",
    "ScriptedAdapter",
    "ServerReply",
    "Turn",
    "call_tool",
    "call_tools",
    "fail",
    "recorded",
    "reply",
    "request_key",
    "structured",
]

_RECORDING = ("Cassette", "CassetteMissError", "NetworkBlockedError", "recorded", "request_key")


def __getattr__(name: str) -> Any:
    if name in ("OpenAICompatServer", "ServerReply"):
        from deskwork.testing import openai_server

        return getattr(openai_server, name)
    if name in _RECORDING:
        from deskwork.testing import _recording

        return getattr(_recording, name)
    raise AttributeError(f"module 'deskwork.testing' has no attribute {name!r}")
