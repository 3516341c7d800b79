"""The DevOps incident-response example (seed 1.5), end to end and offline.

The command line runs as a user runs it (a subprocess), and each incident must be a stored desk
run with its events. The FastAPI app runs under uvicorn on 127.0.0.1 and is called over real
HTTP. The ``--model`` path goes through LiteLLM to a local OpenAI-compatible server.
"""

from __future__ import annotations

import asyncio
import importlib
import importlib.util
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from deskwork import Desk
from deskwork.testing import OpenAICompatServer, ServerReply

pytest.importorskip("langgraph")

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "incident_response"
PATH = ["supervisor", "monitor", "diagnostician", "remediator", "reporter"]
P1_ALERT = "CRITICAL: 5xx error rate above 10% on web-service"
CPU_ALERT = "High CPU usage on worker-3"
RESOLVED_ALERT = "RESOLVED: latency back to normal"
FIRST_STEP = "the monitor classifies it first."


def _run_cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(EXAMPLE / "run.py"), *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **(env or {})},
        check=False,
    )


def _lines(stdout: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]


def _oncall_turn() -> Any:
    spec = importlib.util.spec_from_file_location("incident_scripted", EXAMPLE / "scripted.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.oncall_turn


def test_cli_handles_alerts_offline_and_stores_each_run_with_its_events(tmp_path: Path) -> None:
    user = "alice@example.com"
    done = _run_cli(
        *("--json", "--verbose", "--user", user, "--data-dir", str(tmp_path)),
        *("--alert", P1_ALERT, "--alert", CPU_ALERT, "--alert", RESOLVED_ALERT),
    )
    assert done.returncode == 0, done.stderr
    p1, cpu, resolved = _lines(done.stdout)

    assert (p1["status"], p1["path"]) == ("completed", PATH)
    assert p1["incident"] == {
        "severity": "P1",
        "service": "web-service",
        "category": "availability",
        "root_cause": "Service web-service returning errors due to deployment regression",
        "recommended_action": "rollback_deployment",
        "confidence": 0.85,
        "action_taken": "rollback_deployment",
        "steps": [
            "Freeze deployments of the service (dry run: ok)",
            "Roll back to the previous release (dry run: ok)",
            "Watch the error rate for 10 minutes (dry run: ok)",
        ],
        "status": "completed",
    }
    assert p1["report"].startswith("# Incident Report\n\n**Severity:** P1\n**Service:** web")
    # the CPU alert takes another runbook and playbook
    assert (cpu["incident"]["service"], cpu["incident"]["action_taken"]) == (
        "compute",
        "scale_horizontally",
    )
    assert "Raise the replica count by 50% (dry run: ok)" in cpu["report"]
    # a resolved alert is closed by the supervisor without routing
    assert resolved["path"] == ["supervisor"]
    assert resolved["report"] == "The alert is already resolved; closing it without action."

    store = Desk(storage_dir=tmp_path).run_store
    record = store.get_run(p1["run_id"])
    assert record is not None and record.status == "completed"
    assert record.output == p1["report"]
    events = store.get_events(p1["run_id"])
    assert len(events) == p1["events"]
    assert (events[0].type, events[-1].type) == ("run.started", "run.completed")
    passes = [(e.source, e.payload["action"]) for e in events if e.type == "graph.react.pass"]
    assert passes == [
        ("supervisor", "request_slot"),
        ("supervisor", "decide"),
        ("diagnostician", "request_slot"),
        ("diagnostician", "diagnose"),
        ("remediator", "request_slot"),
        ("remediator", "execute_playbook"),
        ("remediator", "complete"),
    ]
    model_calls = [e for e in events if e.type == "llm.completed"]
    assert len(model_calls) == p1["metrics"]["llm_calls"] == 7
    assert {e.source for e in model_calls} == {"scripted/oncall"}
    # structured logs went to stderr, with the user id hashed (redact_pii=True)
    assert "agent_invoke_completed" in done.stderr
    assert user not in done.stderr


def test_cli_with_model_calls_the_provider_through_litellm(tmp_path: Path) -> None:
    oncall_turn = _oncall_turn()
    key = "sk-incident-secret-0123456789"

    def answer(request: Any) -> ServerReply:
        return ServerReply.text(oncall_turn(request.body["messages"], None))

    with OpenAICompatServer(default=answer) as server:
        done = _run_cli(
            *("--json", "--model", "openai/oncall-test", "--data-dir", str(tmp_path)),
            env={"OPENAI_API_KEY": key, "OPENAI_BASE_URL": server.base_url,
                 "OPENAI_API_BASE": server.base_url},
        )  # fmt: skip
        requests = [r for r in server.requests if r.path.endswith("/chat/completions")]
    assert done.returncode == 0, done.stderr
    (result,) = _lines(done.stdout)
    assert (result["status"], result["path"]) == ("completed", PATH)
    assert result["incident"]["action_taken"] == "rollback_deployment"
    assert len(requests) == 7
    assert {r.body["model"] for r in requests} == {"oncall-test"}
    events = Desk(storage_dir=tmp_path).run_store.get_events(result["run_id"])
    assert {e.source for e in events if e.type == "llm.completed"} == {"openai/oncall-test"}
    assert key not in json.dumps([e.payload for e in events], default=str)


# -- the FastAPI app, over HTTP -------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def app_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    port = _free_port()
    data_dir = tmp_path_factory.mktemp("incident-app")
    command = [sys.executable, "-m", "uvicorn", "app:app", "--app-dir", str(EXAMPLE)]
    command += ["--host", "127.0.0.1", "--port", str(port)]
    process = subprocess.Popen(
        command,
        env={**os.environ, "INCIDENT_DATA_DIR": str(data_dir)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_until_up(url, process)
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _wait_until_up(url: str, process: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 120  # returns once up: a loaded machine starts it slowly
    while time.monotonic() < deadline:
        if process.poll() is not None:
            errors = process.stderr.read() if process.stderr else ""
            raise AssertionError(f"uvicorn exited: {errors}")
        try:
            if httpx.get(f"{url}/health", timeout=1).status_code == 200:
                return
        except httpx.TransportError:
            time.sleep(0.1)
    raise AssertionError("the app did not start within 120 s")


def test_app_handles_an_incident_over_http(app_url: str) -> None:
    headers = {"X-User-Id": "ops-team"}
    with httpx.Client(base_url=app_url, timeout=30) as client:
        first = client.post("/incident", json={"alert": P1_ALERT}, headers=headers)
        assert first.status_code == 200, first.text
        body = first.json()
        assert body["incident_id"].startswith("incident-")
        assert (body["status"], body["severity"], body["service"]) == (
            "completed",
            "P1",
            "web-service",
        )
        assert body["action_taken"] == "rollback_deployment"
        assert "## Root Cause\nService web-service returning errors" in body["report"]

        stored = client.get(f"/incidents/{body['run_id']}").json()
        assert (stored["status"], stored["output"]) == ("completed", body["report"])
        done = [e["source"] for e in stored["events"] if e["type"] == "graph.agent.completed"]
        assert done == PATH

        # the same alert again: the first incident is recalled into the supervisor's prompt
        again = client.post("/incident", json={"alert": P1_ALERT}, headers=headers).json()
        events = client.get(f"/incidents/{again['run_id']}").json()["events"]
        said = [
            e["payload"]["content_preview"]
            for e in events
            if e["type"] == "graph.agent.completed" and e["source"] == "supervisor"
        ]
        assert said == [f"Recurring alert (seen before for this team): {FIRST_STEP}"]

        health = client.get("/health").json()
        assert health["status"] == "ok"
        assert health["sessions"]["status"] == "ok"
        assert health["sessions"]["sessions"] >= 2


async def test_app_handles_concurrent_incidents_of_several_teams(app_url: str) -> None:
    alerts = [P1_ALERT, CPU_ALERT, "p99 latency above 2s on checkout", RESOLVED_ALERT] * 2

    async with httpx.AsyncClient(base_url=app_url, timeout=60) as client:
        responses = await asyncio.gather(
            *(
                client.post("/incident", json={"alert": alert}, headers={"X-User-Id": f"team-{i}"})
                for i, alert in enumerate(alerts)
            )
        )
    assert [r.status_code for r in responses] == [200] * len(alerts)
    actions = [r.json()["action_taken"] for r in responses]
    expected = ["rollback_deployment", "scale_horizontally", "circuit_breaker_and_retry", None]
    assert actions == expected * 2
    assert len({r.json()["run_id"] for r in responses}) == len(alerts)


def test_app_streams_the_run_as_server_sent_events(app_url: str) -> None:
    headers = {"X-User-Id": "sse-team"}
    events: list[tuple[str, dict[str, Any]]] = []
    with httpx.stream(
        "POST", f"{app_url}/incident/stream", json={"alert": CPU_ALERT}, headers=headers, timeout=30
    ) as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        kind = ""
        for line in response.iter_lines():
            if line.startswith("event: "):
                kind = line.removeprefix("event: ")
            elif line.startswith("data: "):
                events.append((kind, json.loads(line.removeprefix("data: "))))

    kinds = [kind for kind, _ in events]
    assert kinds[0] == "run.started" and kinds[-2:] == ["run.completed", "report"]
    done = [data["source"] for kind, data in events if kind == "graph.agent.completed"]
    assert done == PATH
    assert kinds.count("llm.completed") == 7
    report = events[-1][1]
    assert (report["status"], report["errors"]) == ("completed", [])
    assert "**Action:** scale_horizontally" in report["report"]


@pytest.mark.parametrize(
    ("send", "where"),
    [
        ({"json": {"alrt": P1_ALERT}}, ["body", "alert"]),
        ({"json": {"alert": ""}}, ["body", "alert"]),
        ({"json": {"alert": ["not", "text"]}}, ["body", "alert"]),
        ({"content": b"{not json", "headers": {"Content-Type": "application/json"}}, ["body", 1]),
    ],
)
def test_app_rejects_malformed_bodies_with_422(
    app_url: str, send: dict[str, Any], where: list[Any]
) -> None:
    headers = {"X-User-Id": "ops-team", **send.pop("headers", {})}
    response = httpx.post(f"{app_url}/incident", headers=headers, timeout=10, **send)
    assert response.status_code == 422
    assert response.json()["detail"][0]["loc"] == where


def test_app_requires_the_user_header_and_knows_its_runs(app_url: str) -> None:
    missing = httpx.post(f"{app_url}/incident", json={"alert": P1_ALERT}, timeout=10)
    assert missing.status_code == 422
    assert missing.json()["detail"][0]["loc"] == ["header", "X-User-Id"]
    unknown = httpx.get(f"{app_url}/incidents/no-such-run", timeout=10)
    assert unknown.status_code == 404


# -- the example's pieces in-process: agents tested the way the guide suggests ----------------


@pytest.fixture
def example(monkeypatch: pytest.MonkeyPatch) -> Any:
    """The example's modules, imported as the example imports them (by bare name)."""
    monkeypatch.syspath_prepend(str(EXAMPLE))
    for name in ("agents", "scripted", "system"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    yield importlib.import_module("system")
    for name in ("agents", "scripted", "system"):
        sys.modules.pop(name, None)


async def test_remediator_recovers_from_a_bad_action_with_mock_llm(example: Any) -> None:
    from deskwork.graph import AgentConfig, ReactExecutor, ReactTemplateManager
    from deskwork.graph.testing import MockLLM, make_test_state

    llm = MockLLM(
        responses=[
            '<thought>Playbook.</thought><action type="request_slot">{"slot": "escalate"}</action>',
            '<thought>Run it.</thought><action type="execute_playbook">{"steps": []}</action>',
            '<thought>Again.</thought><action type="execute_playbook">{"steps": ["Page"]}</action>',
            '<thought>Done.</thought><action type="complete">{"status": "escalated"}</action>',
        ]
    )
    agents = importlib.import_module("agents")
    manager = ReactTemplateManager("remediator", EXAMPLE / "knowledge")
    remediator = agents.RemediatorAgent(
        AgentConfig(name="remediator", type="custom", description="Remediates"),
        react_executor=ReactExecutor("remediator", llm, manager, agents.REMEDIATOR_ACTIONS),
    )
    diagnosis = {"root_cause": "disk full", "recommended_action": "escalate"}
    state = make_test_state(
        "Disk pressure on db-1", context_slots={"incident_diagnosis": json.dumps(diagnosis)}
    )
    update = await remediator.invoke(state)

    assert update["current_agent"] == "reporter"
    assert json.loads(update["context_slots"]["incident_remediation"]) == {
        "action_taken": "escalate",
        "steps": ["Page (dry run: ok)"],
        "status": "escalated",
    }
    assert "Page the on-call engineer" in update["knowledge_context"]["escalate"]
    assert "Recommended action: escalate" in str(llm.calls[0][0].content)
    # the empty step list became an error the model saw and corrected
    assert "steps must be a non-empty list" in str(llm.calls[2][1].content)


async def test_a_model_talking_nonsense_fails_the_incident_run_clearly(
    example: Any, tmp_path: Path
) -> None:
    from deskwork.testing import ScriptedAdapter

    system = example.build_system()
    adapter = ScriptedAdapter(default="I think it is fine.")
    desk = Desk(model="scripted", adapter=adapter, storage_dir=tmp_path)
    async with system.context():
        report = await example.handle_incident(desk, system, P1_ALERT, user_id="ops")
        # nothing was remembered from a failed incident
        assert await system.sessions.search_memories_by_user("ops", "") == []
    assert report.status == "failed"
    assert any("ReactConsecutiveErrorsError" in error for error in report.errors), report.errors
    failed = [e.payload for e in report.events if e.type == "graph.agent.failed"]
    assert failed and failed[0]["agent_name"] == "supervisor"
    assert desk.run_store.get_run(report.run_id).status == "failed"  # type: ignore[union-attr]


async def test_app_errors_carry_no_secret(example: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    import structlog

    logging_config = structlog.get_config()  # the app configures structlog when imported
    monkeypatch.delitem(sys.modules, "app", raising=False)
    try:
        app_module = importlib.import_module("app")
    finally:
        structlog.configure(**logging_config)
        sys.modules.pop("app", None)  # kept here only: no other test imports this one
    secret = "sk-live-abcdefghijklmnopqrstuvwxyz0123456789"

    async def fails(*_: Any, **__: Any) -> Any:
        from deskwork.graph import OrchestratorError

        raise OrchestratorError(f"the provider refused key {secret}")

    monkeypatch.setattr(app_module, "handle_incident", fails)
    app_module.app.state.system = app_module.app.state.desk = None
    transport = httpx.ASGITransport(app=app_module.app)
    async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
        headers = {"X-User-Id": "ops"}
        failed = await client.post("/incident", json={"alert": "x"}, headers=headers)
        streamed = await client.post("/incident/stream", json={"alert": "x"}, headers=headers)
    assert failed.status_code == 500 and "refused key" in failed.text
    assert "refused key" in streamed.text
    assert secret not in failed.text + streamed.text
