"""The runtime's side of the model port: every call to an adapter goes through here.

It checks what the adapter returned (a wrong type fails the run with a message naming the
adapter and the expected type, not a confusing ``'async for'`` error deep in the loop).
"""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator
from typing import Any

from deskwork.adapters.base import BaseModelAdapter, ModelResponse, StreamChunk, assemble_stream
from deskwork.exceptions import DeskworkError

__all__ = ["AdapterContractError", "acomplete", "aresponse", "astructured"]

_EXPECTED = "a ModelResponse, or (when streaming) an async iterator of StreamChunk"


class AdapterContractError(DeskworkError, TypeError):
    """An adapter returned something the runtime cannot use."""


def _adapter_name(adapter: BaseModelAdapter) -> str:
    return type(adapter).__qualname__


def _wrong_type(adapter: BaseModelAdapter, method: str, value: Any, expected: str) -> str:
    return (
        f"model adapter {_adapter_name(adapter)}.{method}() returned"
        f" {type(value).__name__}; expected {expected}"
    )


async def acomplete(
    adapter: BaseModelAdapter, **params: Any
) -> ModelResponse | AsyncIterator[StreamChunk]:
    """``adapter.acomplete(**params)``, checked.

    Raises:
        AdapterContractError: the adapter returned neither a response nor a chunk stream.
    """
    result: Any = adapter.acomplete(**params)
    if inspect.isawaitable(result):
        result = await result
    if isinstance(result, ModelResponse):
        return result
    if hasattr(result, "__aiter__"):
        return _checked(adapter, result)
    raise AdapterContractError(_wrong_type(adapter, "acomplete", result, _EXPECTED))


async def _checked(
    adapter: BaseModelAdapter, stream: AsyncIterator[Any]
) -> AsyncIterator[StreamChunk]:
    async for chunk in stream:
        if not isinstance(chunk, StreamChunk):
            raise AdapterContractError(
                _wrong_type(
                    adapter, "acomplete", chunk, "each streamed item to be a StreamChunk"
                ).replace("returned", "streamed", 1)
            )
        yield chunk


async def aresponse(adapter: BaseModelAdapter, **params: Any) -> ModelResponse:
    """A non-streaming call; a stream the adapter returns anyway is assembled."""
    result = await acomplete(adapter, **{**params, "stream": False})
    if isinstance(result, ModelResponse):
        return result
    return assemble_stream([chunk async for chunk in result], model=params.get("model"))


async def astructured(adapter: BaseModelAdapter, **params: Any) -> ModelResponse:
    """``adapter.astructured_complete(**params)``, checked.

    Raises:
        AdapterContractError: the adapter did not return a ModelResponse.
    """
    result: Any = await adapter.astructured_complete(**params)
    if not isinstance(result, ModelResponse):
        raise AdapterContractError(
            _wrong_type(adapter, "astructured_complete", result, "a ModelResponse")
        )
    return result
