"""FastAPI application for the DevOps Incident Response System.

    uvicorn app:app --app-dir examples/incident_response --host 127.0.0.1 --port 8000

Offline (scripted model) by default; ``INCIDENT_MODEL=openai/gpt-4o-mini`` uses a real model
through LiteLLM, ``INCIDENT_DATA_DIR`` moves the run store (default: ``.deskwork`` next to this
file). Every incident is a desk run: ``GET /incidents/{run_id}`` reads it back from the store.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import structlog
from fastapi import FastAPI, Header, HTTPException, Request
from fastapi.responses import StreamingResponse
from pydantic import BaseModel, Field
from system import (
    DATA_DIR,
    IncidentSystem,
    build_system,
    handle_incident,
    incident_summary,
    make_desk,
)

from deskwork import Desk, Event, Report
from deskwork.core.redact import describe_exception
from deskwork.graph import (
    CircuitBreakerOpenError,
    OrchestratorError,
    RateLimitExceededError,
    clear_logging_context,
)

structlog.configure(
    processors=[
        structlog.contextvars.merge_contextvars,
        structlog.processors.add_log_level,
        structlog.processors.TimeStamper(fmt="iso"),
        structlog.dev.ConsoleRenderer(colors=False),
    ],
)

# a run that failed with one of these (as the first agent failure) maps to this status code
_STATUS_BY_ERROR = {
    RateLimitExceededError.__name__: 429,
    CircuitBreakerOpenError.__name__: 503,
}


class IncidentRequest(BaseModel):
    """An alert from the monitoring system."""

    alert: str = Field(min_length=1, max_length=10_000, description="The raw alert text")


class IncidentResponse(BaseModel):
    """The outcome of one incident run."""

    incident_id: str
    run_id: str
    status: str
    severity: str | None = None
    service: str | None = None
    root_cause: str | None = None
    action_taken: str | None = None
    report: str | None = None


@asynccontextmanager
async def lifespan(app: FastAPI) -> AsyncIterator[None]:
    """Build the system once; ``OrchestratorContext`` closes its components on shutdown."""
    system = build_system()
    data_dir = Path(os.environ.get("INCIDENT_DATA_DIR") or DATA_DIR)
    desk = make_desk(os.environ.get("INCIDENT_MODEL") or None, data_dir)
    async with system.context() as ctx:
        app.state.ctx = ctx
        app.state.system = system
        app.state.desk = desk
        yield


app = FastAPI(title="DevOps Incident Response System", lifespan=lifespan)


@app.post("/incident")
async def create_incident(
    body: IncidentRequest,
    request: Request,
    x_user_id: str = Header(..., alias="X-User-Id", min_length=1, max_length=128),
) -> IncidentResponse:
    """Run the alert through the agents; the answer carries the incident report."""
    clear_logging_context()
    system: IncidentSystem = request.app.state.system
    desk: Desk = request.app.state.desk
    try:
        report = await handle_incident(desk, system, body.alert, user_id=x_user_id)
    except RateLimitExceededError as exc:
        raise HTTPException(status_code=429, detail="Rate limit exceeded") from exc
    except CircuitBreakerOpenError as exc:
        raise HTTPException(status_code=503, detail="Service temporarily unavailable") from exc
    except OrchestratorError as exc:  # its text may quote a secret: redacted
        raise HTTPException(status_code=500, detail=describe_exception(exc)) from exc
    if report.status != "completed":
        code = _failure_status(desk, report)
        raise HTTPException(
            status_code=code, detail={"run_id": report.run_id, "errors": report.errors}
        )
    data = report.data if isinstance(report.data, dict) else {}
    summary = incident_summary(report)
    return IncidentResponse(
        incident_id=str(data.get("session_id", "")),
        run_id=report.run_id,
        status=report.status,
        severity=summary.get("severity"),
        service=summary.get("service"),
        root_cause=summary.get("root_cause"),
        action_taken=summary.get("action_taken"),
        report=report.content,
    )


@app.post("/incident/stream")
async def stream_incident(
    body: IncidentRequest,
    request: Request,
    x_user_id: str = Header(..., alias="X-User-Id", min_length=1, max_length=128),
) -> StreamingResponse:
    """The same run, as Server-Sent Events: every event of the run as it happens (agents,
    routes, ReAct passes, model calls), then a ``report`` event with the outcome."""
    clear_logging_context()
    system: IncidentSystem = request.app.state.system
    desk: Desk = request.app.state.desk
    queue: asyncio.Queue[str | None] = asyncio.Queue()

    def forward(event: Event) -> None:
        queue.put_nowait(_sse(event.type, {"source": event.source, **event.payload}))

    async def run() -> None:
        try:
            report = await handle_incident(
                desk, system, body.alert, user_id=x_user_id, on_event=forward
            )
            outcome = {"run_id": report.run_id, "status": report.status, "errors": report.errors}
            queue.put_nowait(_sse("report", {**outcome, "report": report.content}))
        except Exception as exc:  # the run could not start: say so instead of just hanging up
            queue.put_nowait(_sse("error", {"error": describe_exception(exc)}))
        finally:
            queue.put_nowait(None)

    async def events() -> AsyncIterator[str]:
        task = asyncio.create_task(run())
        try:
            while (item := await queue.get()) is not None:
                yield item
        finally:
            if not task.done():  # the client went away
                task.cancel()

    return StreamingResponse(events(), media_type="text/event-stream")


@app.get("/incidents/{run_id}")
async def get_incident(run_id: str, request: Request) -> dict[str, Any]:
    """A stored incident run: its status, output and the agents' events, from the run store."""
    desk: Desk = request.app.state.desk
    record = desk.run_store.get_run(run_id)
    if record is None:
        raise HTTPException(status_code=404, detail=f"no incident run {run_id!r}")
    events = desk.run_store.get_events(run_id)
    return {
        "run_id": run_id,
        "status": record.status,
        "output": record.output,
        "events": [{"type": e.type, "source": e.source, "payload": e.payload} for e in events],
    }


@app.get("/health")
async def health(request: Request) -> dict[str, Any]:
    """Liveness: the orchestrator context and the session store."""
    ctx = request.app.state.ctx
    system: IncidentSystem = request.app.state.system
    return {
        "status": "ok" if not ctx.is_closed else "closed",
        "sessions": await system.sessions.health_check(),
    }


def _sse(event_type: str, data: dict[str, Any]) -> str:
    return f"event: {event_type}\ndata: {json.dumps(data, default=str)}\n\n"


def _failure_status(desk: Desk, report: Report) -> int:
    failures = [
        e.payload.get("error_type")
        for e in desk.run_store.get_events(report.run_id)
        if e.type == "graph.agent.failed"
    ]
    return _STATUS_BY_ERROR.get(str(failures[0]), 500) if failures else 500
