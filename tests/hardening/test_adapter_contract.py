"""What an adapter returns is checked at the seam: a wrong type fails the run clearly."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from pydantic import BaseModel

from deskwork import Desk, Job, Worker
from deskwork.adapters import BaseModelAdapter, ModelResponse
from deskwork.store import InMemoryRunStore


class DictAdapter(BaseModelAdapter):
    """Returns the provider's raw dict instead of a ModelResponse."""

    async def acomplete(self, **kwargs: Any) -> Any:
        return {"choices": [{"message": {"content": "hi"}}]}

    async def astructured_complete(self, **kwargs: Any) -> Any:
        return {"answer": 42}


class BadChunkAdapter(BaseModelAdapter):
    """Streams plain strings instead of StreamChunk objects."""

    async def acomplete(self, **kwargs: Any) -> Any:
        async def chunks() -> AsyncIterator[str]:
            yield "hello"

        return chunks()


def _run(adapter: BaseModelAdapter, job: Job, *, stream: bool = False) -> Any:
    desk = Desk(model="custom/m", adapter=adapter, run_store=InMemoryRunStore(), stream=stream)
    return desk.run(Worker(name="w"), job)


def test_a_dict_from_acomplete_fails_the_run_naming_adapter_and_type() -> None:
    report = _run(DictAdapter(), Job(input="hi"))
    assert report.status == "failed"
    (error,) = report.errors
    assert "DictAdapter.acomplete() returned dict" in error
    assert "expected a ModelResponse" in error
    assert "__aiter__" not in error


def test_a_dict_from_a_streaming_call_fails_the_same_way() -> None:
    report = _run(DictAdapter(), Job(input="hi"), stream=True)
    assert report.status == "failed"
    assert "DictAdapter.acomplete() returned dict" in report.errors[0]


def test_a_stream_of_non_chunks_fails_naming_the_adapter() -> None:
    report = _run(BadChunkAdapter(), Job(input="hi"), stream=True)
    assert report.status == "failed"
    assert "BadChunkAdapter.acomplete() streamed str" in report.errors[0]
    assert "StreamChunk" in report.errors[0]


class Answer(BaseModel):
    answer: int


def test_a_dict_from_astructured_complete_fails_naming_adapter_and_type() -> None:
    report = _run(DictAdapter(), Job(input="hi", response_schema=Answer))
    assert report.status == "failed"
    assert "DictAdapter.astructured_complete() returned dict" in report.errors[0]
    assert "expected a ModelResponse" in report.errors[0]


def test_a_correct_adapter_still_works() -> None:
    class Good(BaseModelAdapter):
        async def acomplete(self, **kwargs: Any) -> Any:
            return ModelResponse(content="fine")

    report = _run(Good(), Job(input="hi"))
    assert (report.status, report.content) == ("completed", "fine")
