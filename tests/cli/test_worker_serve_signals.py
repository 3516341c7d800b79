"""``deskwork worker``'s ``serve`` in a process that goes on (a test, an application): it
left its SIGINT/SIGTERM handlers installed, so Ctrl-C only set the stopped worker's event and
the process could no longer be interrupted; called off the main thread, installing them
raised ValueError after the engine had started, and the desk was never released."""

from __future__ import annotations

import signal
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("dbos", reason="durable runs need the dbos extra")

from deskwork.cli import worker
from deskwork.runtime import _durable

_APP = """
from deskwork import Desk
from deskwork.testing import ScriptedAdapter

desk = Desk(model="m", adapter=ScriptedAdapter([]), storage_dir={dir!r}, durable=True)
"""


@pytest.fixture
def durable_app(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    name = "durable_app_for_worker_signals"
    (tmp_path / f"{name}.py").write_text(_APP.format(dir=str(tmp_path / "store")))
    monkeypatch.chdir(tmp_path)
    yield f"{name}:desk"
    sys.modules.pop(name, None)


def test_serve_stops_on_sigint_then_leaves_the_handlers_as_they_were(
    durable_app: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    take_over_until = worker._take_over_until

    def interrupted(stop: threading.Event, desk: object, every: float) -> None:
        signal.raise_signal(signal.SIGINT)  # Ctrl-C while serving: the worker's handler
        assert stop.is_set()
        take_over_until(stop, desk, every)

    monkeypatch.setattr(worker, "_take_over_until", interrupted)
    before = {signum: signal.getsignal(signum) for signum in (signal.SIGINT, signal.SIGTERM)}

    assert worker.serve(durable_app, drain=0, takeover_every=0) == 0

    assert {signum: signal.getsignal(signum) for signum in before} == before
    assert _durable._current == []  # the desk was released: DBOS is shut down


def test_serve_off_the_main_thread_is_refused_before_the_engine_starts(
    durable_app: str, capsys: pytest.CaptureFixture[str]
) -> None:
    codes: list[int] = []
    failures: list[BaseException] = []

    def serve() -> None:
        try:
            codes.append(worker.serve(durable_app, drain=0))
        except BaseException as exc:
            failures.append(exc)

    thread = threading.Thread(target=serve)
    thread.start()
    thread.join(60)

    assert failures == []
    assert codes == [2]
    assert "serves only from the main thread" in capsys.readouterr().err
    assert _durable._current == []  # DBOS was never started (nor left running)
