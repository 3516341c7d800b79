"""The web viewer in headless Chromium (Playwright) against a real server."""

from __future__ import annotations

import asyncio
import os
import shutil
import threading
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from deskwork import Desk, Worker
from deskwork.adapters import RetryPolicy
from deskwork.adapters.base import BaseModelAdapter, StreamChunk
from deskwork.store import InMemoryRunStore

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
REQUIRED = os.environ.get("DESKWORK_REQUIRE_BROWSER") == "1"


def _browser_missing() -> str | None:
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "playwright is not installed"
    if not Path(CHROMIUM).exists():
        return f"no Chromium at {CHROMIUM}"
    return None


_MISSING = _browser_missing()
if _MISSING and REQUIRED:
    raise RuntimeError(f"DESKWORK_REQUIRE_BROWSER=1 but {_MISSING}")
pytestmark = pytest.mark.skipif(_MISSING is not None, reason=str(_MISSING))


@pytest.fixture
def page() -> Any:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM)
        context = browser.new_context(viewport={"width": 1280, "height": 800})
        page = context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        yield page
        browser.close()
        assert errors == [], errors


def test_runs_appear_live_and_an_approval_resumes_the_run(
    live_factory: Any, page: Any, tmp_path: Path
) -> None:
    live = live_factory()
    urls: list[str] = []
    page.on("request", lambda request: urls.append(request.url))
    page.goto(live.url + "/")
    page.wait_for_selector("#live.on")
    with httpx.Client(base_url=live.url) as client:
        slow = client.post("/runs", json={"runner": "sleeper", "job": {"input": "1.0"}}).json()
        # the run shows up in the list while running, then completes, without a reload
        page.wait_for_selector(f'#runs a[data-run="{slow["run_id"]}"] .badge.running')
        page.wait_for_selector(f'#runs a[data-run="{slow["run_id"]}"] .badge.completed')
        paused = client.post("/runs", json={"runner": "clerk", "job": {"input": "go"}}).json()
    row = page.wait_for_selector(f'#runs a[data-run="{paused["run_id"]}"] .badge.paused')
    row.click()
    page.wait_for_selector("#approve")
    # the timeline fills from the run's event stream, which may land after the run's record
    # (a selector, not wait_for_function: the page's CSP refuses the eval that polls it)
    page.wait_for_selector("#timeline >> text=tool.completed")
    timeline = page.inner_text("#timeline")
    assert "tool.completed" in timeline and "lookup" in timeline
    assert "restock" in page.inner_text(".pending")
    page.screenshot(path=str(tmp_path / "viewer-paused.png"))
    page.click("#approve")
    page.wait_for_selector(".run-head .badge.completed", timeout=10_000)
    page.wait_for_selector(".msg.assistant >> text=done: ordered 38 x beans")
    record = live.desk.run_store.get_run(paused["run_id"])
    assert record is not None and record.status == "completed"
    page.screenshot(path=str(tmp_path / "viewer-completed.png"))
    assert (tmp_path / "viewer-completed.png").stat().st_size > 10_000
    assert urls and all(u.startswith(live.url) or u.startswith("data:") for u in urls), urls


def test_user_input_is_answered_from_the_page_and_keys_move(live_factory: Any, page: Any) -> None:
    live = live_factory()
    with httpx.Client(base_url=live.url) as client:
        for word in ("one", "two"):
            client.post("/runs?wait=true", json={"runner": "echo", "job": {"input": word}})
        run = client.post("/runs?wait=true", json={"runner": "asker", "job": {"input": "x"}})
    run_id = run.json()["run_id"]
    assert run.json()["status"] == "paused"
    page.goto(live.url + "/")
    page.wait_for_selector("#runs a")
    page.keyboard.press("j")
    first = page.evaluate("document.activeElement.dataset.run")
    assert first == run_id  # newest first
    page.keyboard.press("Enter")
    page.wait_for_selector("#answer")
    page.fill("#answer", "blue")
    page.keyboard.press("Enter")
    page.wait_for_selector(".run-head .badge.completed", timeout=10_000)
    page.wait_for_selector(".msg.assistant >> text=done: blue")
    page.set_viewport_size({"width": 390, "height": 844})
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 390  # readable at phone width: nothing scrolls sideways


def test_child_runs_are_linked_from_the_run_page(live_factory: Any, page: Any) -> None:
    live = live_factory()
    with httpx.Client(base_url=live.url) as client:
        body = {"runner": "delegator", "job": {"input": "x"}}
        parent = client.post("/runs?wait=true", json=body).json()["run_id"]
    page.goto(f"{live.url}/#/runs/{parent}")
    page.click("#children a")
    page.wait_for_selector(".run-head h2 >> text=echo")
    assert page.inner_text("#parent") == parent


def test_with_a_token_the_page_asks_for_it(live_factory: Any, page: Any) -> None:
    live = live_factory(token="viewer-token")
    auth = {"Authorization": "Bearer viewer-token"}
    with httpx.Client(base_url=live.url, headers=auth) as client:
        run_id = client.post(
            "/runs?wait=true", json={"runner": "echo", "job": {"input": "x"}}
        ).json()["run_id"]
    page.goto(live.url + "/")
    page.wait_for_selector("#token-dialog[open]")
    page.fill("#token-input", "viewer-token")
    page.keyboard.press("Enter")
    page.wait_for_selector(f'#runs a[data-run="{run_id}"]')


def test_html_in_a_run_is_shown_as_text(live_factory: Any, page: Any) -> None:
    live = live_factory()
    markup = '<img src=x onerror="window.hit=1"><script>window.hit=2</script>'
    with httpx.Client(base_url=live.url) as client:
        body = {"runner": "asker", "job": {"input": markup}}
        run_id = client.post("/runs?wait=true", json=body).json()["run_id"]
    page.goto(f"{live.url}/#/runs/{run_id}")
    page.fill("#answer", markup)
    page.keyboard.press("Enter")
    page.wait_for_selector(".run-head .badge.completed", timeout=10_000)
    page.wait_for_selector(".msg.assistant >> text=done: <img src=x")
    assert markup in page.inner_text(".convo")
    assert page.evaluate("window.hit") is None


def test_a_run_link_with_a_broken_escape_says_the_run_is_unknown(
    live_factory: Any, page: Any
) -> None:
    live = live_factory()
    page.goto(f"{live.url}/#/runs/%E0%A4%A")  # the page error would fail the page fixture
    page.wait_for_selector("#run .msg.error >> text=unknown run")


def test_an_answer_names_the_action_it_answers(live_factory: Any, page: Any) -> None:
    live = live_factory()
    with httpx.Client(base_url=live.url) as client:
        body = {"runner": "clerk", "job": {"input": "go"}}
        paused = client.post("/runs?wait=true", json=body).json()
    sent: list[Any] = []
    page.on("request", lambda r: sent.append(r.post_data_json) if "/resume" in r.url else None)
    page.goto(f"{live.url}/#/runs/{paused['run_id']}")
    page.click("#approve")
    page.wait_for_selector(".run-head .badge.completed", timeout=10_000)
    assert sent == [{"decision": True, "action_id": paused["pending_action"]["action_id"]}]


def test_the_viewer_cannot_be_framed_by_another_page(
    live_factory: Any, page: Any, tmp_path: Path
) -> None:
    live = live_factory()
    headers = httpx.get(live.url + "/").headers
    assert "frame-ancestors 'none'" in headers["content-security-policy"]
    assert headers["x-frame-options"] == "DENY"
    framing = tmp_path / "framing.html"
    framing.write_text(f'<iframe id="f" src="{live.url}/"></iframe>')
    page.goto(framing.as_uri())
    page.wait_for_timeout(1500)
    frame = page.frame_locator("#f")
    assert frame.locator("#runs").count() == 0  # the browser refused to show it


class _CutThenSlowStream(BaseModelAdapter):
    """A stream cut after its first words; asked again, it streams the reply and waits for
    ``gate`` before it ends (the run stays unfinished while the page is looked at)."""

    def __init__(self, gate: threading.Event) -> None:
        self.gate = gate
        self.calls = 0

    async def acomplete(self, **params: Any) -> Any:  # type: ignore[override]
        self.calls += 1
        return self._cut() if self.calls == 1 else self._slow()

    async def _cut(self) -> AsyncIterator[StreamChunk]:
        for word in ("an answer ", "cut short ", "here "):
            yield StreamChunk(content=word)
        raise ConnectionResetError("reset by peer")

    async def _slow(self) -> AsyncIterator[StreamChunk]:
        for word in ("the whole ", "answer ", "again "):
            yield StreamChunk(content=word)
        while not self.gate.is_set():
            await asyncio.sleep(0.02)


def test_a_restarted_stream_shows_only_the_text_after_the_restart(
    live_factory: Any, page: Any
) -> None:
    gate = threading.Event()
    desk = Desk(
        model="m", adapter=_CutThenSlowStream(gate), run_store=InMemoryRunStore(),
        stream=True, num_retries=1, retry_policy=RetryPolicy(initial_interval=0.0, jitter=False),
    )  # fmt: skip
    desk.register(Worker(name="writer", instructions="Write."))
    live = live_factory(desk)
    try:
        with httpx.Client(base_url=live.url) as client:
            body = {"runner": "writer", "job": {"input": "x"}}
            run_id = client.post("/runs", json=body).json()["run_id"]
        page.goto(f"{live.url}/#/runs/{run_id}")
        page.wait_for_selector("#timeline >> text=llm.stream_restarted")
        page.wait_for_selector(".msg.typing >> text=the whole answer")
        typing = page.inner_text(".msg.typing > div:last-child")
        assert typing.startswith("the whole answer"), typing  # nothing of the cut stream
        assert page.inner_text(".run-head .badge") == "running"
    finally:
        gate.set()
    page.wait_for_selector(".run-head .badge.completed", timeout=10_000)
    assert page.locator(".msg.typing").count() == 0
    assert "the whole answer again" in page.inner_text(".msg.assistant")
