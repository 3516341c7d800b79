"""Durable-run benchmark (issue 10: performance of ``Desk(durable=True)`` on DBOS).

Three measures, each printed as a markdown table of medians (min–max):

1. **Overhead per model turn.** The core scenario (a worker, a scripted zero-latency model
   that calls one tool and then answers: two model turns and one tool call a run) on a durable
   desk against a plain desk on the same database, on SQLite and on PostgreSQL; and LangGraph's
   prebuilt ReAct agent with the same script, with and without its Postgres checkpointer
   (``PostgresSaver``) on the same PostgreSQL database, in the same process. Every round times
   each contender once (interleaved, so a noisy machine slows them alike) and gives its own
   ratios. A desk's run and LangGraph's run make the same two model turns and one tool call,
   so the ratio of their per-run costs is also the ratio per model turn; LangGraph's cost is
   also given per checkpoint it writes (counted: five a run, the input, ``__start__`` and the
   three supersteps agent, tools, agent). The same ratio of process CPU time (every thread,
   LangGraph's checkpoint writer included) is steadier than wall time on a loaded machine.
2. **Throughput with 1, 2 and 4 ``deskwork worker`` processes** (real subprocesses) on one
   fresh database: ``--runs`` queued runs (default 500) of the same scenario with a 50 ms
   model latency per call, submitted by this process (which serves no queue); runs/s from
   the first submit to the last report, the speed-up against one worker, and the worker
   processes' CPU seconds per run (``--concurrency`` per worker, ``--backends``).
3. **Recovery after ``kill -9``.** A run is killed during its second tool call; a new process
   calls ``desk.recover()``. Timed: process start → the interrupted tool call runs again (the
   run's next step), DBOS's launch, and ``recover()`` called → that step; and the same from
   the start of a ``deskwork worker`` process (which hands the run back as it starts).

PostgreSQL: ``$DESKWORK_TEST_POSTGRES_URL`` (default ``postgresql://postgres@127.0.0.1:5432/test``);
every measure runs in a database of its own, created and dropped here.

Run: ``python bench/durable.py [--rounds 10] [--runs 500] [--repeats 3] [--concurrency 8]
[--backends postgres,sqlite] [--only overhead,workers,recovery]`` (progress on stderr).
``deskwork worker durable:app`` (with ``bench/`` on ``PYTHONPATH``) is the worker processes'
application.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from deskwork import Desk, Job, Worker
from deskwork.testing import ScriptedAdapter, call_tool, reply
from deskwork.tools import tool

HERE = Path(__file__).parent
SERVER = os.environ.get("DESKWORK_TEST_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/test")
TURNS_PER_RUN = 2
RUNS_PER_SAMPLE = 40
MODEL_LATENCY = 0.05
QUEUE = "bench"
SETTLE_SECONDS = 1.5
"""After a worker says it serves the queue, DBOS starts the queue's polling thread within a
second (its queue-manager check interval): wait for that before the clock starts."""

Timer = Callable[[], float]  # one sample: seconds per run


# -- the scenario ---------------------------------------------------------------------------


@tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


class _Forgetful(ScriptedAdapter):
    """A scripted adapter that does not keep its calls (a long benchmark would grow them)."""

    async def acomplete(self, **kwargs: Any) -> Any:
        result = await super().acomplete(**kwargs)
        self.calls.clear()
        return result


def _script(latency: float = 0.0) -> ScriptedAdapter:
    def cycle(messages: list[dict[str, Any]], _tools: Any) -> Any:
        if messages[-1]["role"] == "tool":
            return reply("The sum is 5.")
        return call_tool("add", a=2, b=3)

    return _Forgetful(default=cycle, latency=latency)


def _desk(url: str, *, durable: bool, latency: float = 0.0) -> Desk:
    return Desk(model="scripted/m", adapter=_script(latency), database_url=url, durable=durable)


def _sync_timer(once: Callable[[], Any], calls: int, cpu: list[float] | None = None) -> Timer:
    """Seconds per call; with ``cpu``, each sample's CPU seconds per call (this process, every
    thread: DBOS's and the store's included) are appended to it."""

    def sample() -> float:
        gc.collect()
        started, cpu_started = time.perf_counter(), time.process_time()
        for _ in range(calls):
            once()
        if cpu is not None:
            cpu.append((time.process_time() - cpu_started) / calls)
        return (time.perf_counter() - started) / calls

    once()  # warm up
    return sample


def rounds(timers: dict[str, Timer], count: int) -> dict[str, list[float]]:
    """``count`` interleaved samples of every timer (seconds per run)."""
    samples: dict[str, list[float]] = {name: [] for name in timers}
    for round_ in range(count):
        for name, timer in timers.items():
            samples[name].append(timer())
        _progress(f"round {round_ + 1}/{count}")
    return samples


def _progress(line: str) -> None:
    print(f"  [{time.strftime('%H:%M:%S')}, load {os.getloadavg()[0]:.1f}] {line}", file=sys.stderr)


# -- PostgreSQL -----------------------------------------------------------------------------


@contextlib.contextmanager
def fresh_postgres() -> Iterator[str]:
    """The URL of a new database on :data:`SERVER` (dropped afterwards)."""
    import psycopg

    name = f"durbench_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(SERVER, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    try:
        yield urlunsplit(urlsplit(SERVER)._replace(path=f"/{name}"))
    finally:
        with psycopg.connect(SERVER, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@contextlib.contextmanager
def fresh_database(backend: str) -> Iterator[str]:
    """A new database URL on ``backend`` ("sqlite" or "postgres")."""
    if backend == "postgres":
        with fresh_postgres() as url:
            yield url
        return
    with tempfile.TemporaryDirectory(prefix="durbench-") as tmp:
        yield f"sqlite:///{tmp}/deskwork.db"


# -- 1. overhead per model turn ------------------------------------------------------------


def _desk_timer(desk: Desk, worker: Worker, cpu: list[float]) -> Timer:
    def once() -> None:
        report = desk.run(worker, Job(input="add 2 and 3"))
        assert report.status == "completed", report.errors

    return _sync_timer(once, RUNS_PER_SAMPLE, cpu)


def _langgraph_agent(checkpointer: Any) -> Any:
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langchain_core.messages import AIMessage
    from langchain_core.tools import tool as lc_tool
    from langgraph.prebuilt import create_react_agent

    class FakeToolModel(GenericFakeChatModel):
        def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
            return self

    @lc_tool
    def lc_add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    def replies() -> Iterator[AIMessage]:
        while True:
            yield AIMessage(
                content="", tool_calls=[{"name": "lc_add", "args": {"a": 2, "b": 3}, "id": "c1"}]
            )
            yield AIMessage(content="The sum is 5.")

    model = FakeToolModel(messages=replies())
    return create_react_agent(model, [lc_add], checkpointer=checkpointer)


def langgraph_timers(saver: Any, cpu: dict[str, list[float]]) -> dict[str, Timer]:
    """Per-run timers of LangGraph's ReAct agent: no checkpointer, and ``saver`` with the
    default durability ("async": a checkpoint is written while the next step runs) and with
    "sync" (each checkpoint is written before the next step, as a DBOS step is). The CPU of
    the first two goes to ``cpu`` ("langgraph cpu", "langgraph postgres cpu")."""
    plain, saved = _langgraph_agent(None), _langgraph_agent(saver)
    inputs = {"messages": [("user", "add 2 and 3")]}

    def once(agent: Any, **kwargs: Any) -> Callable[[], None]:
        def run() -> None:
            config = {"configurable": {"thread_id": uuid.uuid4().hex}}
            result = agent.invoke(inputs, config, **kwargs)
            assert result["messages"][-1].content == "The sum is 5."

        return run

    cpu.update({"langgraph cpu": [], "langgraph postgres cpu": []})
    return {
        "langgraph": _sync_timer(once(plain), RUNS_PER_SAMPLE, cpu["langgraph cpu"]),
        "langgraph postgres": _sync_timer(
            once(saved), RUNS_PER_SAMPLE, cpu["langgraph postgres cpu"]
        ),
        "langgraph postgres sync": _sync_timer(once(saved, durability="sync"), RUNS_PER_SAMPLE),
    }


def checkpoints_per_run(saver: Any) -> int:
    """How many checkpoints one LangGraph run writes."""
    agent = _langgraph_agent(saver)
    config = {"configurable": {"thread_id": uuid.uuid4().hex}}
    agent.invoke({"messages": [("user", "add 2 and 3")]}, config, durability="sync")
    return len(list(saver.list(config)))


def overhead_phase(backend: str, count: int, saver: Any) -> dict[str, list[float]]:
    """Interleaved samples of a plain and a durable desk on a fresh ``backend`` database,
    and of LangGraph (``saver``: its Postgres checkpointer)."""
    worker = Worker(name="bench", tools=[add])
    with fresh_database(backend) as url:
        plain, durable = _desk(url, durable=False), _desk(url, durable=True)
        cpu: dict[str, list[float]] = {"plain cpu": [], "durable cpu": []}
        try:
            timers = {
                "plain": _desk_timer(plain, worker, cpu["plain cpu"]),
                "durable": _desk_timer(durable, worker, cpu["durable cpu"]),
                **langgraph_timers(saver, cpu),
            }
            return {**rounds(timers, count), **cpu}
        finally:
            durable.close()
            plain.close()


def overhead(count: int) -> list[tuple[str, str, str]]:
    """Rows of measure 1."""
    from langgraph.checkpoint.postgres import PostgresSaver

    rows: list[tuple[str, str, str]] = []
    with fresh_postgres() as lg_url, PostgresSaver.from_conn_string(lg_url) as saver:
        saver.setup()
        checkpoints = checkpoints_per_run(saver)
        for backend in ("sqlite", "postgres"):
            s = overhead_phase(backend, count, saver)
            rows += _overhead_rows(backend, s, checkpoints)
    return rows


def _overhead_rows(
    backend: str, s: dict[str, list[float]], checkpoints: int
) -> list[tuple[str, str, str]]:
    durable_cost = _diff(s["durable"], s["plain"])
    lg_cost = _diff(s["langgraph postgres"], s["langgraph"])
    lg_sync_cost = _diff(s["langgraph postgres sync"], s["langgraph"])
    name = "SQLite" if backend == "sqlite" else "PostgreSQL"
    per_turn = [d / TURNS_PER_RUN for d in durable_cost]
    durable_cpu_cost = _diff(s["durable cpu"], s["plain cpu"])
    cpu_per_turn = [d / TURNS_PER_RUN for d in durable_cpu_cost]
    lg_cpu_cost = _diff(s["langgraph postgres cpu"], s["langgraph cpu"])
    return [
        (f"{name}: plain desk per run", _fmt(s["plain"], 1e3, "ms", 2), "—"),
        (f"{name}: durable desk per run", _fmt(s["durable"], 1e3, "ms", 2), "—"),
        (f"{name}: durable overhead per model turn", _fmt(per_turn, 1e3, "ms", 2), "—"),
        (f"{name}: plain desk CPU per run", _fmt(s["plain cpu"], 1e3, "ms", 2), "—"),
        (f"{name}: durable desk CPU per run", _fmt(s["durable cpu"], 1e3, "ms", 2), "—"),
        (
            f"{name}: durable CPU overhead per model turn",
            _fmt(cpu_per_turn, 1e3, "ms", 2),
            "—",
        ),
        ("  LangGraph ReAct, no checkpointer, per run", _fmt(s["langgraph"], 1e3, "ms", 2), "—"),
        ("  LangGraph + PostgresSaver per run", _fmt(s["langgraph postgres"], 1e3, "ms", 2), "—"),
        (
            "  LangGraph checkpoint cost per model turn (per run / 2)",
            _fmt([d / TURNS_PER_RUN for d in lg_cost], 1e3, "ms", 2),
            "—",
        ),
        (
            f"  LangGraph checkpoint cost per checkpoint (per run / {checkpoints})",
            _fmt([d / checkpoints for d in lg_cost], 1e3, "ms", 2),
            "—",
        ),
        (
            f"{name}: durable overhead / LangGraph checkpoint cost (per turn)",
            _fmt(_ratios(durable_cost, lg_cost), 1, "", 2),
            "≤ 1",
        ),
        (
            f"{name}: the same, against LangGraph durability='sync'",
            _fmt(_ratios(durable_cost, lg_sync_cost), 1, "", 2),
            "—",
        ),
        (
            "  LangGraph checkpoint CPU cost per model turn",
            _fmt([d / TURNS_PER_RUN for d in lg_cpu_cost], 1e3, "ms", 2),
            "—",
        ),
        (
            f"{name}: durable CPU overhead / LangGraph checkpoint CPU cost (per turn)",
            _fmt(_ratios(durable_cpu_cost, lg_cpu_cost), 1, "", 2),
            "—",
        ),
    ]


# -- 2. throughput with N worker processes --------------------------------------------------


def app() -> Desk:
    """The worker processes' desk (``deskwork worker durable:app``): the scenario with a
    ``$DURBENCH_LATENCY`` s model latency on ``$DESKWORK_DATABASE_URL``."""
    latency = float(os.environ.get("DURBENCH_LATENCY", MODEL_LATENCY))
    desk = Desk(model="scripted/m", adapter=_script(latency), durable=True)
    desk.register(Worker(name="bench", tools=[add]))
    return desk


def _child_env(url: str, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DESKWORK_", "DBOS"))}
    path = os.pathsep.join(p for p in (str(HERE), env.get("PYTHONPATH", "")) if p)
    env.update(PYTHONPATH=path, DESKWORK_DATABASE_URL=url, **extra)
    return env


def start_workers(url: str, count: int, concurrency: int) -> list[subprocess.Popen[str]]:
    """``count`` ``deskwork worker durable:app`` processes, each serving :data:`QUEUE`."""
    command = [sys.executable, "-m", "deskwork", "worker", "durable:app", "--queue", QUEUE]
    command += ["--concurrency", str(concurrency), "--drain", "0"]
    procs = [
        subprocess.Popen(command, env=_child_env(url), stdout=subprocess.PIPE, text=True)
        for _ in range(count)
    ]
    for proc in procs:
        assert proc.stdout is not None
        banner = proc.stdout.readline()
        assert "serving queue" in banner, f"worker did not start: {banner!r}"
    time.sleep(SETTLE_SECONDS)
    return procs


def stop(procs: list[subprocess.Popen[Any]]) -> None:
    for proc in procs:
        proc.send_signal(signal.SIGTERM)
    for proc in procs:
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _cpu_seconds(procs: list[subprocess.Popen[str]]) -> float:
    """User + system CPU seconds the processes used so far (Linux ``/proc``; 0 elsewhere)."""
    total = 0.0
    for proc in procs:
        with contextlib.suppress(OSError):
            fields = Path(f"/proc/{proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return total


def throughput(backend: str, workers: int, runs: int, concurrency: int) -> tuple[float, float]:
    """Runs/s of ``workers`` worker processes on a fresh ``backend`` database (``runs``
    runs submitted from here, which serves no queue; first submit to last report), and the
    workers' CPU seconds per run."""
    os.environ["DESKWORK_QUEUES"] = ""  # read when DBOS launches here: run nothing
    with fresh_database(backend) as url:
        procs = start_workers(url, workers, concurrency)
        desk = _desk(url, durable=True)
        try:
            job = Worker(name="bench", tools=[add])
            cpu, started = _cpu_seconds(procs), time.perf_counter()
            ids = [desk.submit(job, "add 2 and 3", queue=QUEUE) for _ in range(runs)]
            reports = [desk.result(run_id, timeout=600) for run_id in ids]
            elapsed = time.perf_counter() - started
            cpu = _cpu_seconds(procs) - cpu
            assert all(r.status == "completed" for r in reports), "a run did not complete"
            return runs / elapsed, cpu / runs
        finally:
            desk.close()
            stop(procs)
            del os.environ["DESKWORK_QUEUES"]


def scaling(
    backends: list[str], repeats: int, runs: int, concurrency: int
) -> list[tuple[str, str, str]]:
    """Rows of measure 2: runs/s with 1, 2 and 4 workers (interleaved repeats)."""
    rows: list[tuple[str, str, str]] = []
    for backend in backends:
        rates: dict[int, list[float]] = {1: [], 2: [], 4: []}
        cpu: dict[int, list[float]] = {n: [] for n in rates}
        for _ in range(repeats):
            for n in rates:
                rate, per_run = throughput(backend, n, runs, concurrency)
                rates[n].append(rate)
                cpu[n].append(per_run)
                _progress(
                    f"{backend}, {n} worker(s): {rate:.1f} runs/s, {per_run * 1e3:.0f} ms CPU"
                )
        name = "SQLite" if backend == "sqlite" else "PostgreSQL"
        for n, values in rates.items():
            rows.append((f"{name}: {n} worker(s), runs/s", _fmt(values, 1, "runs/s", 1), "—"))
            rows.append(
                (f"{name}: {n} worker(s), worker CPU per run", _fmt(cpu[n], 1e3, "ms"), "—")
            )
        for n in (2, 4):
            goal = "≥ 3.5" if n == 4 else "—"
            speedup = _fmt(_ratios(rates[n], rates[1]), 1, "", 2)
            rows.append((f"{name}: {n} workers / 1 worker", speedup, goal))
    return rows


# -- 3. recovery after kill -9 -----------------------------------------------------------


@tool()
def first() -> str:
    """The run's first tool call."""
    return "one"


@tool()
def second() -> str:
    """The second: records when it starts (in ``$DURBENCH_DIR/second``); hangs when
    ``$DURBENCH_HANG`` is set (the benchmark kills the process then)."""
    with (Path(os.environ["DURBENCH_DIR"]) / "second").open("a") as handle:
        handle.write(f"{time.time()}\n")
    if os.environ.get("DURBENCH_HANG"):
        time.sleep(600)
    return "two"


def _crash_script(messages: list[dict[str, Any]], _tools: Any) -> Any:
    """Answers from the conversation alone (a restarted process has no script position)."""
    done = sum(1 for m in messages if m.get("role") == "tool")
    return [call_tool("first"), call_tool("second"), reply("done")][min(done, 2)]


def recovery_app() -> Desk:
    """The desk of the crashed run (``deskwork worker durable:recovery_app`` too)."""
    desk = Desk(model="scripted/m", adapter=ScriptedAdapter(default=_crash_script), durable=True)
    desk.register(Worker(name="crasher", tools=[first, second]))
    return desk


def child(command: str, run_id: str) -> None:
    """``--child run RUN_ID`` (start the run that is killed) or ``--child recover``."""
    desk = recovery_app()
    crasher = Worker(name="crasher", tools=[first, second])
    if command == "run":
        desk.run(crasher, "both steps", run_id=run_id)
    else:
        from deskwork.runtime import _durable

        directory = Path(os.environ["DURBENCH_DIR"])
        (directory / "launch_called").write_text(str(time.time()))
        _durable.engine_for(desk)  # DBOS launches (recover() would do it first)
        (directory / "recover_called").write_text(str(time.time()))
        reports = desk.recover()
        assert [r.status for r in reports] == ["completed"], reports
    desk.close()


_MARKERS = ("launch_called", "recover_called")


def _steps(directory: Path) -> list[float]:
    path = directory / "second"
    return [float(x) for x in path.read_text().split()] if path.exists() else []


def _wait_for(condition: Callable[[], bool], timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError("the benchmark's run did not get there")
        time.sleep(0.005)


def _crash(url: str, directory: Path) -> None:
    """Start the run in a process and ``kill -9`` it during the second tool call."""
    env = _child_env(url, DURBENCH_DIR=str(directory), DURBENCH_HANG="1")
    command = [sys.executable, str(Path(__file__)), "--child", "run", "--run-id", "crashed"]
    proc = subprocess.Popen(command, env=env)
    try:
        _wait_for(lambda: len(_steps(directory)) == 1)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()


def recovery_once(backend: str, via: str) -> list[float]:
    """Seconds from the restart (process start) to the run's next step; with
    ``via="recover"`` also from the start of DBOS's launch to the ``recover()`` call, and
    from that call to the step."""
    with fresh_database(backend) as url, tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        _crash(url, directory)
        env = _child_env(url, DURBENCH_DIR=str(directory))
        if via == "recover":
            command = [sys.executable, str(Path(__file__)), "--child", "recover"]
        else:
            command = [sys.executable, "-m", "deskwork", "worker", "durable:recovery_app"]
        started = time.time()
        proc = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL)
        try:
            _wait_for(lambda: len(_steps(directory)) == 2)
        finally:
            if via == "recover":
                assert proc.wait(timeout=120) == 0, "recover() failed"
            else:
                stop([proc])
        step = _steps(directory)[1]
        if via != "recover":
            return [step - started]
        launch, called = (float((directory / m).read_text()) for m in _MARKERS)
        return [step - started, called - launch, step - called]


def recovery(backends: list[str], repeats: int) -> list[tuple[str, str, str]]:
    """Rows of measure 3."""
    rows: list[tuple[str, str, str]] = []
    for backend in backends:
        name = "SQLite" if backend == "sqlite" else "PostgreSQL"
        samples: list[list[float]] = []
        worker: list[float] = []
        for _ in range(repeats):
            samples.append(recovery_once(backend, "recover"))
            worker += recovery_once(backend, "worker")
            _progress(f"{backend} recovery: {samples[-1]}, worker {worker[-1]:.2f} s")
        restart, launch, call = (list(column) for column in zip(*samples, strict=True))
        rows += [
            (f"{name}: process start → next step, via recover()", _fmt(restart, 1e3, "ms"), "—"),
            (f"{name}:   of which DBOS launch (first durable call)", _fmt(launch, 1e3, "ms"), "—"),
            (f"{name}:   recover() called → next step", _fmt(call, 1e3, "ms"), "—"),
            (f"{name}: `deskwork worker` start → next step", _fmt(worker, 1e3, "ms"), "—"),
        ]
    return rows


# -- formatting -----------------------------------------------------------------------------


def _diff(a: list[float], b: list[float]) -> list[float]:
    return [x - y for x, y in zip(a, b, strict=True)]


def _ratios(num: list[float], den: list[float]) -> list[float]:
    return [a / b for a, b in zip(num, den, strict=True)]


def _fmt(values: list[float], scale: float, unit: str, digits: int = 0) -> str:
    med = statistics.median(values) * scale
    lo, hi = min(values) * scale, max(values) * scale
    unit = f" {unit}" if unit else ""
    return f"{med:.{digits}f}{unit} ({lo:.{digits}f}–{hi:.{digits}f})"


def _table(rows: list[tuple[str, str, str]]) -> None:
    print("| measure | median (min–max) | goal |")
    print("|---|---|---|")
    for name, value, goal in rows:
        print(f"| {name} | {value} | {goal} |")
    print()


def main(argv: list[str]) -> None:
    warnings.filterwarnings("ignore", message="create_react_agent has been moved")
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--runs", type=int, default=500)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--only", default="overhead,workers,recovery")
    parser.add_argument("--concurrency", type=int, default=8, help="per worker process")
    parser.add_argument("--backends", default="postgres", help="for the worker processes")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--run-id", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        child(args.child, args.run_id)
        return
    only = set(args.only.split(","))
    if "overhead" in only:
        print(f"Overhead: {args.rounds} interleaved rounds of {RUNS_PER_SAMPLE} runs, wall time\n")
        _table(overhead(args.rounds))
    if "workers" in only:
        print(
            f"Workers: {args.runs} runs, {MODEL_LATENCY * 1e3:.0f} ms model latency,"
            f" --concurrency {args.concurrency}, {args.repeats} interleaved repeats\n"
        )
        _table(scaling(args.backends.split(","), args.repeats, args.runs, args.concurrency))
    if "recovery" in only:
        print(f"Recovery after kill -9 during the second tool call, {args.repeats} repeats\n")
        _table(recovery(["sqlite", "postgres"], args.repeats))


if __name__ == "__main__":
    main(sys.argv[1:])
