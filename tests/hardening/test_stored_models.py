"""Stored models accept the model instances they hold, not only their dict forms."""

from __future__ import annotations

from pydantic import BaseModel

from approvalkit import paused_send
from deskwork import Job
from deskwork.core.event import Event
from deskwork.core.payloads import LLMFailedPayload
from deskwork.core.state import RunState
from deskwork.utils import new_id, utc_now


class Answer(BaseModel):
    value: int


def _state(**changes: object) -> RunState:
    fields: dict[str, object] = {
        "run_id": "r1",
        "status": "paused",
        "runner_type": "worker",
        "runner_name": "w",
        "job": Job(input="hi", response_schema=Answer, metadata={"k": 1}),
    }
    return RunState(**{**fields, **changes})  # type: ignore[arg-type]


def test_run_state_accepts_a_job_instance() -> None:
    job = Job(input="hi", response_schema=Answer, metadata={"k": 1})
    state = _state(job=job)
    assert state.job == job.to_state()
    assert Job.from_state(state.job) == job


def test_a_run_state_built_from_a_job_round_trips_through_json() -> None:
    state = _state()
    again = RunState.model_validate_json(state.model_dump_json())
    assert again == state
    assert Job.from_state(again.job).response_schema is Answer


def test_run_state_payload_accepts_a_model() -> None:
    assert _state(payload=Answer(value=3)).payload == {"value": 3}


def test_event_accepts_a_typed_payload() -> None:
    payload = LLMFailedPayload(model="m", latency_ms=1.5, error_type="E", error_message="boom")
    event = Event(
        event_id=new_id(),
        type="llm.failed",
        timestamp=utc_now(),
        run_id="r",
        source="w",
        payload=payload,  # type: ignore[arg-type]
    )
    assert event.payload["error_message"] == "boom"
    assert Event.model_validate_json(event.model_dump_json()) == event


def test_a_hand_built_state_resumes_a_paused_run() -> None:
    """A state assembled from model instances is as good as a stored one."""
    desk, worker, paused, _ = paused_send(final="done")
    job = Job(input="send it")  # the paused run's job, as a model instance
    stored = desk.run_store.get_run(paused.run_id)
    assert stored is not None and stored.state is not None
    fields = {name: getattr(stored.state, name) for name in RunState.model_fields}
    state = RunState(**{**fields, "job": job})
    # as desk.resume does first: a store takes no events of a paused run
    assert desk.run_store.claim_paused(paused.run_id)
    report, _ = worker.resume(desk.config(paused.run_id), state, "approve")
    assert (report.status, report.content) == ("completed", "done")
    assert report.tool_calls[0].result is not None
    assert report.tool_calls[0].result.content == "sent to ann"
