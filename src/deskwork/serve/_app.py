"""The FastAPI application: REST routes, Server-Sent Events and the web viewer."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from functools import partial
from importlib.resources import files
from typing import Annotated, Any

from ag_ui.core import RunAgentInput
from fastapi import APIRouter, Depends, FastAPI, Header, Query, Request
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse, StreamingResponse
from fastapi.staticfiles import StaticFiles

from deskwork.core.types import RunStatus
from deskwork.exceptions import ConfigurationError
from deskwork.runtime.desk import Desk
from deskwork.runtime.runner import Runner
from deskwork.serve._agui import agui_stream
from deskwork.serve._direct import SERVER_SEND
from deskwork.serve._hub import EventHub
from deskwork.serve._models import (
    HistoryOut,
    MessageIn,
    ResumeIn,
    RunAccepted,
    RunIn,
    RunList,
    RunnerOut,
    RunOut,
    RunReport,
    RunSummary,
    SessionIn,
    SessionOut,
)
from deskwork.serve._ratelimit import RateLimitMiddleware, check_rate
from deskwork.serve._security import (
    DEFAULT_MAX_BODY_BYTES,
    Receive,
    Scope,
    SecurityMiddleware,
    Send,
    check_token,
)
from deskwork.serve._service import ApiError, RunService, json_bytes
from deskwork.serve._sessions import SessionService
from deskwork.serve._sse import SSE_HEADERS, HubStreamResponse
from deskwork.utils import check_seconds, is_integer

__all__ = ["create_app"]

_ERRORS: dict[int | str, dict[str, Any]] = {
    404: {"description": "unknown runner, run or session"},
    409: {"description": "the run is not in a state that allows this"},
}


class _JSON(JSONResponse):
    """Every JSON answer of the API, written by :func:`json_bytes`: a text with a lone
    surrogate is escaped, not a 500 (FastAPI's and Starlette's JSON cannot encode it)."""

    def render(self, content: Any) -> bytes:
        return json_bytes(content)


class _App(FastAPI):
    """FastAPI that notes, in the scope of each HTTP request, the ``send`` its server gave
    it when no middleware but the app's own wraps the routes: an event stream may then
    write to the server's transport itself (:mod:`deskwork.serve._direct`), since nothing
    between could need to see or change the bytes."""

    own_middleware = 0
    """How many of ``user_middleware`` ``create_app`` added."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and len(self.user_middleware) == self.own_middleware:
            scope[SERVER_SEND] = send
        await super().__call__(scope, receive, send)


def create_app(
    desk: Desk,
    *,
    runners: Mapping[str, Runner] | None = None,
    token: str | None = None,
    cors_origins: list[str] | None = None,
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
    poll_interval: float = 0.5,
    rate_limit: float | None = None,
    rate_burst: int = 20,
    local_only: bool = False,
) -> FastAPI:
    """The HTTP API and web viewer of ``desk``.

    Args:
        desk: the desk whose runs are served.
        runners: the runners clients may start, by name (default: the desk's registered
            runners, looked up at each request).
        token: when set, every API request needs ``Authorization: Bearer <token>``.
        cors_origins: origins allowed by CORS (off when ``None``).
        max_body_bytes: larger request bodies get 413.
        poll_interval: how often streams of runs owned by another process poll the store.
        rate_limit: requests a second each client address may make (bursts of
            ``rate_burst``); over it, 429 with ``Retry-After``. Off when ``None``.
        rate_burst: the burst ``rate_limit`` allows.
        local_only: answer only requests addressed to this machine (``Host`` is
            ``localhost`` or a loopback address; 400 otherwise), so a web page whose name
            resolves to 127.0.0.1 (DNS rebinding) cannot use an API that has no token.
            :func:`~deskwork.serve.serve` sets it when it serves without a token.

    Raises:
        ConfigurationError: ``token`` is only whitespace (one with whitespace around it is
            stripped), ``rate_limit`` or ``poll_interval`` is not a finite number above 0,
            ``rate_burst`` not an int of 1 or more, or ``max_body_bytes`` not an int of 0 or
            more (here, not at the first request).
    """
    if rate_limit is not None:
        check_rate(rate_limit, rate_burst)
    token = check_token(token)
    check_seconds(poll_interval, "poll_interval")  # 0 or NaN broke every event stream
    if not is_integer(max_body_bytes) or max_body_bytes < 0:
        raise ConfigurationError(
            f"max_body_bytes must be an int of 0 or more, not {max_body_bytes!r}"
        )
    state: dict[str, Any] = {}

    def services() -> tuple[RunService, SessionService]:
        if "runs" not in state:
            hub = EventHub(desk.event_bus, asyncio.get_running_loop(), poll_interval)
            runs = RunService(desk, runners, hub, poll_interval=poll_interval)
            state["runs"], state["sessions"] = runs, SessionService(runs)
        return state["runs"], state["sessions"]

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        services()
        yield
        runs: RunService = state["runs"]
        await runs.shutdown()
        runs.hub.close()

    app = _App(
        title="deskwork",
        summary="Runs of a deskwork desk: start, follow (SSE), resume, cancel; sessions.",
        version="1",
        lifespan=lifespan,
        docs_url=None,  # Swagger UI and ReDoc load assets from a CDN: nothing here does
        redoc_url=None,
        default_response_class=_JSON,
    )
    app.state.services = services

    @app.exception_handler(ApiError)
    async def _api_error(_request: Request, exc: ApiError) -> JSONResponse:
        return _JSON({"detail": exc.message}, status_code=exc.status)

    @app.exception_handler(RequestValidationError)
    async def _invalid(_request: Request, exc: RequestValidationError) -> JSONResponse:
        # FastAPI's own 422, written with _JSON: pydantic refuses a lone surrogate
        # ("\ud800") in a str field and quotes it back, which UTF-8 cannot encode (a 500)
        return _JSON({"detail": jsonable_encoder(exc.errors())}, status_code=422)

    app.include_router(_run_routes())
    app.include_router(_run_stream_routes())
    app.include_router(_session_routes())
    app.include_router(_agui_routes())
    _viewer(app)
    if cors_origins:
        from fastapi.middleware.cors import CORSMiddleware

        app.add_middleware(
            CORSMiddleware,
            allow_origins=cors_origins,
            allow_methods=["GET", "POST"],
            allow_headers=["Authorization", "Content-Type", "Last-Event-ID"],
        )
    app.add_middleware(
        SecurityMiddleware, token=token, max_body_bytes=max_body_bytes, local_only=local_only
    )
    if rate_limit is not None:  # outermost: token guesses are limited too
        app.add_middleware(RateLimitMiddleware, rate=rate_limit, burst=rate_burst)
    app.own_middleware = len(app.user_middleware)
    return app


async def _runs(request: Request) -> RunService:
    service: RunService = request.app.state.services()[0]
    return service


async def _sessions(request: Request) -> SessionService:
    service: SessionService = request.app.state.services()[1]
    return service


Runs = Annotated[RunService, Depends(_runs)]
Sessions = Annotated[SessionService, Depends(_sessions)]


def _run_routes() -> APIRouter:
    router = APIRouter(responses=_ERRORS)

    @router.get("/runners", tags=["runs"])
    async def list_runners(svc: Runs) -> list[RunnerOut]:
        """The runners ``POST /runs`` can start."""
        return [RunnerOut(name=n, runner_type=r.runner_type) for n, r in svc.runners().items()]

    @router.post("/runs", tags=["runs"])
    async def start_run(body: RunIn, svc: Runs, wait: bool = False) -> RunAccepted | RunReport:
        """Start a run; with ``wait=true`` answer with its report when it ends or pauses."""
        run_id, task = await svc.start(body.runner, body.job)
        if wait:
            return await svc.wait(run_id, task)
        return RunAccepted(run_id=run_id, status="running")

    @router.get("/runs", tags=["runs"])
    async def list_runs(
        svc: Runs,
        status: RunStatus | None = None,
        runner: str | None = None,
        limit: Annotated[int, Query(ge=1, le=500)] = 50,
        offset: Annotated[int, Query(ge=0, le=100_000)] = 0,
    ) -> RunList:
        """Runs, most recently updated first."""
        records = svc.desk.run_store.list_runs(limit + offset + 1, status=status, runner=runner)
        page = records[offset : offset + limit]
        more = len(records) > offset + limit
        return RunList(
            runs=[
                RunSummary(
                    run_id=r.run_id,
                    status=r.status,
                    runner=r.runner,
                    created_at=r.created_at,
                    updated_at=r.updated_at,
                )
                for r in page
            ],
            next_offset=offset + limit if more else None,
        )

    @router.get("/runs/{run_id}", tags=["runs"])
    async def get_run(run_id: str, svc: Runs) -> RunOut:
        """The run's report, runner, input and timestamps."""
        return svc.view(run_id)

    return router


def _run_stream_routes() -> APIRouter:
    router = APIRouter(responses=_ERRORS)

    @router.get(
        "/runs/{run_id}/events",
        tags=["runs"],
        response_class=StreamingResponse,
        responses={200: {"content": {"text/event-stream": {}}}},
    )
    async def run_events(
        run_id: str,
        svc: Runs,
        last_event_id: Annotated[str | None, Header()] = None,
        after: Annotated[int | None, Query(ge=-1)] = None,
    ) -> HubStreamResponse:
        """Server-Sent Events: the stored events, then live ones until the run ends or
        pauses. ``id:`` is the event's position; reconnect with ``Last-Event-ID``."""
        start = after if after is not None else _last_id(last_event_id)
        svc.record(run_id)  # 404 before the stream starts
        return HubStreamResponse(svc.hub, run_id, partial(svc.follow_run, run_id, start))

    @router.post("/runs/{run_id}/resume", tags=["runs"])
    async def resume_run(
        run_id: str, body: ResumeIn, svc: Runs, wait: bool = False
    ) -> RunAccepted | RunReport:
        """Answer a paused run's pending action (true/false for approvals, text for input)."""
        task = await svc.resume(run_id, body.decision, body.action_id)
        if wait:
            return await svc.wait(run_id, task)
        return RunAccepted(run_id=run_id, status="running")

    @router.post("/runs/{run_id}/cancel", tags=["runs"])
    async def cancel_run(run_id: str, svc: Runs) -> RunOut:
        """Cancel a running run of this server, or end a paused run; it ends ``failed``."""
        await svc.cancel(run_id)
        return svc.view(run_id)

    @router.get(
        "/events",
        tags=["runs"],
        response_class=StreamingResponse,
        responses={200: {"content": {"text/event-stream": {}}}},
    )
    async def lifecycle(svc: Runs) -> HubStreamResponse:
        """Server-Sent Events: ``run.*`` events of every run as they happen (no replay)."""
        return HubStreamResponse(svc.hub, None, svc.follow_lifecycle)

    return router


def _last_id(header: str | None) -> int:
    if header is None:
        return -1
    try:
        return max(int(header.strip()), -1)
    except ValueError:
        raise ApiError(400, f"Last-Event-ID must be an event position, not {header!r}") from None


def _session_routes() -> APIRouter:
    router = APIRouter(responses=_ERRORS, tags=["sessions"])

    @router.post("/sessions")
    async def create_session(body: SessionIn, svc: Sessions) -> SessionOut:
        """Open (or create) a conversation with a worker runner."""
        return svc.create(body)

    @router.post(
        "/sessions/{session_id}/messages",
        responses={200: {"content": {"text/event-stream": {}, "application/json": {}}}},
        response_model=None,
    )
    async def send_message(
        session_id: str, body: MessageIn, svc: Sessions
    ) -> StreamingResponse | RunReport:
        """Send a message: its events (``stream.token`` included) as Server-Sent Events,
        ending with an ``end`` event carrying the report; or the report (``stream: none``)."""
        if body.stream == "none":
            return await svc.send(session_id, body.message)
        stream = svc.stream(session_id, body.message)
        return StreamingResponse(stream, media_type="text/event-stream", headers=SSE_HEADERS)

    @router.get("/sessions/{session_id}/messages")
    async def history(session_id: str, svc: Sessions) -> HistoryOut:
        """The session's stored conversation."""
        return svc.history(session_id)

    return router


def _agui_routes() -> APIRouter:
    router = APIRouter(responses=_ERRORS, tags=["ag-ui"])

    @router.post(
        "/agui/{runner}",
        response_class=StreamingResponse,
        responses={200: {"content": {"text/event-stream": {}}}},
    )
    async def agui(runner: str, body: RunAgentInput, svc: Runs) -> StreamingResponse:
        """AG-UI: run (or resume) ``runner`` with a ``RunAgentInput``; the answer is a stream
        of AG-UI events. A pause ends with an ``interrupt`` outcome; resume with ``resume``."""
        stream = await agui_stream(svc, runner, body)
        return StreamingResponse(stream, media_type="text/event-stream", headers=SSE_HEADERS)

    return router


_VIEWER_HEADERS = {
    # nothing but this server's own files and API; no page of another site may frame it
    # (it would lay its own content over the Approve button: clickjacking)
    "Content-Security-Policy": "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'",
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
}


def _viewer(app: FastAPI) -> None:
    static = files("deskwork.serve") / "static"
    index = (static / "index.html").read_text(encoding="utf-8")
    app.mount("/static", StaticFiles(directory=str(static)), name="static")

    @app.get("/", include_in_schema=False)
    async def viewer() -> HTMLResponse:
        return HTMLResponse(index, headers=_VIEWER_HEADERS)
