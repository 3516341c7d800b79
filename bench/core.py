"""Core runtime benchmark (issue: core runtime; issue 13: performance).

Scenario: a worker with two tools and a scripted zero-latency model that makes one tool
call and then answers (two model turns + one tool call per run). The same scenario runs on
Agno (``bench/agno_peer.py``) and on LangGraph's prebuilt ReAct agent with a fake chat model,
in the same process and interleaved: every round times each contender once, so a noisy
machine slows all of them alike, and each round gives its own ratios. Printed: the median
and the range over the rounds of time per run (sync and async), the SQLite store's cost per
model turn over the in-memory store, the ratios to Agno and LangGraph, memory per Worker and
per stored run, runs/s with 100 concurrent async runs, and ``from deskwork import Desk,
Worker, Job`` against ``from agno.agent import Agent`` (what a program that runs one worker
imports; bare ``import deskwork`` loads next to nothing, its exports are lazy).

Run: ``python bench/core.py [ROUNDS] [--cpu] [--quick] [--import-only]`` (default 15 rounds;
prints a markdown table; ``--cpu`` times the runs in process CPU time instead of wall time;
``--quick`` times only the in-memory runs beside Agno: no SQLite, LangGraph, memory, concurrency
or import rows; ``--import-only`` prints only the import rows, from ROUNDS rounds; ``--floor``
adds the sync run with its events switched off, and with its run store too, beside Agno: what
the rest of a run costs, a floor no trimming of events and stores goes below).
"""

from __future__ import annotations

import asyncio
import gc
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from agno_peer import agno_runner

from deskwork import Desk, Job, Worker
from deskwork.adapters.base import BaseModelAdapter, ModelResponse, parse_tool_call
from deskwork.store import InMemoryRunStore
from deskwork.tools import tool

TURNS_PER_RUN = 2
RUNS_PER_SAMPLE = 200
CONCURRENT = 100


@tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@tool()
def shout(text: str) -> str:
    """Upper-case some text."""
    return text.upper()


@tool(name="add")
async def async_add(a: int, b: int) -> int:
    """Add two integers (an ``async def`` tool: runs on the loop, no thread hand-off)."""
    return a + b


@tool(name="add", blocking=False)
def quick_add(a: int, b: int) -> int:
    """Add two integers (declared quick: runs on the loop's thread, no thread hand-off)."""
    return a + b


Timer = Callable[[], float]  # one sample: seconds per run
Row = tuple[str, str, str]  # measure, median (range), goal
CLOCK = time.perf_counter
"""Wall time; ``--cpu`` switches the per-run samples to the process's CPU time (all threads),
which a machine loaded by other processes disturbs far less."""


def _sync_timer(once: Callable[[], Any], calls: int = RUNS_PER_SAMPLE) -> Timer:
    def sample() -> float:
        gc.collect()
        started = CLOCK()
        for _ in range(calls):
            once()
        return (CLOCK() - started) / calls

    once()  # warm up
    return sample


def _async_timer(
    aonce: Callable[[], Coroutine[Any, Any, Any]], calls: int = RUNS_PER_SAMPLE
) -> Timer:
    async def loop() -> float:
        started = CLOCK()
        for _ in range(calls):
            await aonce()
        return (CLOCK() - started) / calls

    asyncio.run(aonce())  # warm up

    def sample() -> float:
        gc.collect()
        return asyncio.run(loop())

    return sample


class _ScriptedModel(BaseModelAdapter):
    """Zero-latency model: a tool call to ``add``, then the answer; the twin of
    ``bench/agno_peer.py``'s Agno model (a provider class of the framework's own whose one
    call method builds the reply: arguments as JSON text, token usage as a provider reports
    it), so both frameworks pay the same for their model, and each accounts the usage as it
    would a real provider's: the ratio is the runtimes'. ``ScriptedAdapter``, the test double,
    also records every call and looks up its script: about 2 % of a run here (callgrind,
    2026-11-28), a cost no real provider adds."""

    async def acomplete(self, *, messages: list[dict[str, Any]], **_: Any) -> ModelResponse:
        if messages[-1]["role"] == "tool":
            return ModelResponse(content="The sum is 5.", usage=_usage(4))
        call = parse_tool_call("call_1", "add", json.dumps({"a": 2, "b": 3}))
        return ModelResponse(content="", tool_calls=[call], usage=_usage(8))


def _usage(completion: int) -> dict[str, int]:
    return {"prompt_tokens": 10, "completion_tokens": completion, "total_tokens": 10 + completion}


def _script() -> BaseModelAdapter:
    return _ScriptedModel()


def _desk(store: str, tmp: str) -> Desk:
    run_store = InMemoryRunStore() if store == "memory" else None
    return Desk(model="scripted/m", adapter=_script(), run_store=run_store, storage_dir=tmp)


class _Silent(Desk):
    """A desk whose runs emit nothing: no event is built, stored, reported or published."""

    def _emitter(self, *_args: Any) -> Any:
        return lambda *_event: None


class _NullStore(InMemoryRunStore):
    """A run store that keeps nothing."""

    def begin_run(self, *_args: Any, **_kwargs: Any) -> None:
        return None

    def update_run(self, *_args: Any, **_kwargs: Any) -> None:
        return None

    def finish_run(self, *_args: Any, **_kwargs: Any) -> bool:  # type: ignore[override]
        return True


def floor_timers() -> dict[str, Timer]:
    """Sync runs of the scenario without events, and without events or a run store."""
    worker = Worker(name="bench", tools=[add, shout])
    timers: dict[str, Timer] = {}
    for name, store in (("no events", InMemoryRunStore()), ("no events, no store", _NullStore())):
        desk = _Silent(model="scripted/m", adapter=_script(), run_store=store)

        def once(desk: Desk = desk) -> None:
            assert desk.run(worker, Job(input="add 2 and 3")).status == "completed"

        timers[f"floor {name}"] = _sync_timer(once)
    return timers


def deskwork_timers(tmp: str, stores: tuple[str, ...] = ("memory", "sqlite")) -> dict[str, Timer]:
    """Per-run timers of deskwork: sync/async, in-memory/SQLite store."""
    worker = Worker(name="bench", tools=[add, shout])
    timers: dict[str, Timer] = {}
    for store in stores:
        desk = _desk(store, f"{tmp}/{store}")

        def once(desk: Desk = desk) -> None:
            report = desk.run(worker, Job(input="add 2 and 3"))
            assert report.status == "completed", report.errors

        async def aonce(desk: Desk = desk) -> None:
            report = await desk.arun(worker, Job(input="add 2 and 3"))
            assert report.status == "completed", report.errors

        timers[f"deskwork {store} sync"] = _sync_timer(once)
        timers[f"deskwork {store} async"] = _async_timer(aonce)
    desk = _desk("memory", f"{tmp}/hop")
    on_loop = Worker(name="bench", tools=[async_add, shout])

    def hopless() -> None:
        assert desk.run(on_loop, Job(input="add 2 and 3")).status == "completed"

    async def ahopless() -> None:
        assert (await desk.arun(on_loop, Job(input="add 2 and 3"))).status == "completed"

    timers["deskwork memory sync, async tool"] = _sync_timer(hopless)
    timers["deskwork memory async, async tool"] = _async_timer(ahopless)
    declared = Worker(name="bench", tools=[quick_add, shout])

    async def adeclared() -> None:
        assert (await desk.arun(declared, Job(input="add 2 and 3"))).status == "completed"

    timers["deskwork memory async, blocking=False tool"] = _async_timer(adeclared)
    return timers


def langgraph_timer() -> Timer | None:
    """Per-run timer of LangGraph's prebuilt ReAct agent with a fake model."""
    try:
        from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
        from langchain_core.messages import AIMessage
        from langchain_core.tools import tool as lc_tool
        from langgraph.prebuilt import create_react_agent
    except ImportError:
        return None

    class FakeToolModel(GenericFakeChatModel):
        def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
            return self

    @lc_tool
    def lc_add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    @lc_tool
    def lc_shout(text: str) -> str:
        """Upper-case some text."""
        return text.upper()

    def replies() -> Any:
        while True:
            yield AIMessage(
                content="", tool_calls=[{"name": "lc_add", "args": {"a": 2, "b": 3}, "id": "c1"}]
            )
            yield AIMessage(content="The sum is 5.")

    agent = create_react_agent(FakeToolModel(messages=replies()), [lc_add, lc_shout])
    inputs = {"messages": [("user", "add 2 and 3")]}

    def once() -> None:
        result = agent.invoke(inputs)
        assert result["messages"][-1].content == "The sum is 5."

    return _sync_timer(once, RUNS_PER_SAMPLE // 4)


def all_timers(
    tmp: str, stores: tuple[str, ...], langgraph: bool, floor: bool = False
) -> dict[str, Timer]:
    timers = deskwork_timers(tmp, stores)
    if floor:
        timers.update(floor_timers())
    agno = agno_runner()
    if agno is not None:
        timers["agno sync"] = _sync_timer(agno[0])
        timers["agno async"] = _async_timer(agno[1])
    lg = langgraph_timer() if langgraph else None
    if lg is not None:
        timers["langgraph sync"] = lg
    return timers


def rounds(timers: dict[str, Timer], count: int) -> dict[str, list[float]]:
    """``count`` interleaved samples of every timer (seconds per run)."""
    samples: dict[str, list[float]] = {name: [] for name in timers}
    for _ in range(count):
        for name, timer in timers.items():
            samples[name].append(timer())
    return samples


def worker_memory() -> tuple[float, float]:
    """Seconds per Worker() and bytes per Worker (tracemalloc)."""
    tools = [add, shout]
    sample = _sync_timer(lambda: Worker(name="w", tools=tools), 20_000)
    per_call = statistics.median(sample() for _ in range(5))
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.take_snapshot()
    keep = [Worker(name=f"w{i}", tools=tools) for i in range(10_000)]
    after = tracemalloc.take_snapshot()
    tracemalloc.stop()
    size = sum(s.size_diff for s in after.compare_to(before, "filename")) / len(keep)
    return per_call, size


def stored_run_memory() -> float:
    """Bytes an in-memory run store keeps per finished run (record, state and events)."""
    worker = Worker(name="bench", tools=[add, shout])
    store = InMemoryRunStore(max_runs=None)
    desk = Desk(model="scripted/m", adapter=_script(), run_store=store)
    desk.run(worker, Job(input="warm up"))
    runs = 500
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.take_snapshot()
    for _ in range(runs):
        desk.run(worker, Job(input="add 2 and 3"))
    gc.collect()
    after = tracemalloc.take_snapshot()
    tracemalloc.stop()
    return sum(s.size_diff for s in after.compare_to(before, "filename")) / runs


def concurrent_runs_per_second(store: str, tmp: str) -> list[float]:
    """Runs/s with ``CONCURRENT`` async runs in flight at once (5 samples)."""
    worker = Worker(name="bench", tools=[add, shout])
    desk = _desk(store, tmp)

    async def batch() -> float:
        started = time.perf_counter()
        jobs = [desk.arun(worker, Job(input="add 2 and 3")) for _ in range(CONCURRENT)]
        reports = await asyncio.gather(*jobs)
        assert all(r.status == "completed" for r in reports)
        return CONCURRENT / (time.perf_counter() - started)

    async def main() -> list[float]:
        await batch()
        return [await batch() for _ in range(5)]

    return asyncio.run(main())


OUR_IMPORT = "from deskwork import Desk, Worker, Job"
AGNO_IMPORT = "from agno.agent import Agent"


def import_times(repeats: int) -> tuple[list[float], list[float]]:
    """Seconds for importing what a worker program needs, deskwork's and Agno's, in fresh
    interpreters, minus a bare start-up measured in the same round (CPU seconds of the child
    with ``--cpu``). Both sides import from bytecode, as an installed package does: the
    children write it to a cache of their own (``PYTHONPYCACHEPREFIX``) during a warm-up, so an
    environment with ``PYTHONDONTWRITEBYTECODE`` set does not charge deskwork's editable
    checkout for compiling its sources while Agno's wheel was compiled at install."""
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "PYTHONPYCACHEPREFIX": cache}
        env.pop("PYTHONDONTWRITEBYTECODE", None)

        def once(code: str) -> float:
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            started = time.perf_counter()
            subprocess.run([sys.executable, "-c", code], check=True, env=env)
            if CLOCK is time.perf_counter:
                return time.perf_counter() - started
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            return (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)

        once(OUR_IMPORT), once(AGNO_IMPORT)  # warm-up: writes both sides' bytecode
        ours, agno = [], []
        for _ in range(repeats):
            bare = once("pass")
            ours.append(once(OUR_IMPORT) - bare)
            agno.append(once(AGNO_IMPORT) - bare)
    return ours, agno


def _fmt(values: list[float], scale: float, unit: str, digits: int = 0) -> str:
    med = statistics.median(values) * scale
    lo, hi = min(values) * scale, max(values) * scale
    return f"{med:.{digits}f} {unit} ({lo:.{digits}f}–{hi:.{digits}f})"


def _ratios(num: list[float], den: list[float]) -> list[float]:
    return [a / b for a, b in zip(num, den, strict=True)]


def per_run_rows(s: dict[str, list[float]], count: int, stores: tuple[str, ...]) -> list[Row]:
    """Rows of the per-run timers: deskwork, Agno and LangGraph, and their ratios."""
    rows: list[Row] = []
    for mode in ("sync", "async"):
        for store in stores:
            rows.append((f"deskwork per run, {store} store, {mode}",
                         _fmt(s[f"deskwork {store} {mode}"], 1e6, "µs"), "—"))  # fmt: skip
        if f"agno {mode}" in s:
            rows.append((f"Agno 3.1.10 per run, {mode}", _fmt(s[f"agno {mode}"], 1e6, "µs"), "—"))
            ratio = _ratios(s[f"deskwork memory {mode}"], s[f"agno {mode}"])
            rows.append((f"deskwork (in-memory) / Agno, {mode}", _fmt(ratio, 1, "", 2), "≤ 0.25"))
        if "sqlite" in stores:
            extra = _ratios(
                [(a - b) / TURNS_PER_RUN for a, b in
                 zip(s[f"deskwork sqlite {mode}"], s[f"deskwork memory {mode}"], strict=True)],
                [1.0] * count,
            )  # fmt: skip
            rows.append((f"SQLite over in-memory, per model turn, {mode}",
                         _fmt(extra, 1e6, "µs"), "≤ 150 µs"))  # fmt: skip
    for mode in ("sync", "async"):
        rows.append((f"deskwork per run, memory, {mode}, `async def` tool (no thread hand-off)",
                     _fmt(s[f"deskwork memory {mode}, async tool"], 1e6, "µs"), "—"))  # fmt: skip
    declared = _fmt(s["deskwork memory async, blocking=False tool"], 1e6, "µs")
    rows.append(
        ("deskwork per run, memory, async, sync tool declared `blocking=False`", declared, "—")
    )
    # the sync API runs a sync tool on its own thread (nothing else uses its loop): no hand-off
    hop = _ratios(
        [a - b for a, b in
         zip(s["deskwork memory async"], s["deskwork memory async, async tool"], strict=True)],
        [1.0] * count,
    )  # fmt: skip
    rows.append(("cost of the sync tool's thread hand-off, per run (async API)",
                 _fmt(hop, 1e6, "µs"), "—"))  # fmt: skip
    for name in ("no events", "no events, no store"):
        if f"floor {name}" in s and "agno sync" in s:
            floor = _fmt(_ratios(s[f"floor {name}"], s["agno sync"]), 1, "", 2)
            rows.append((f"floor: deskwork with {name}, sync",
                         _fmt(s[f"floor {name}"], 1e6, "µs"), "—"))  # fmt: skip
            rows.append((f"floor: deskwork with {name} / Agno, sync", floor, "—"))
    if "langgraph sync" in s:
        lg = _fmt(s["langgraph sync"], 1e6, "µs")
        rows.append(("LangGraph ReAct agent per run, sync", lg, "—"))
        ratio = _ratios(s["deskwork memory sync"], s["langgraph sync"])
        rows.append(("deskwork (in-memory) / LangGraph, sync", _fmt(ratio, 1, "", 2), "—"))
    return rows


def other_rows(tmp: str, count: int) -> list[Row]:
    """Rows of memory, concurrency and import measures."""
    rows: list[Row] = []
    per_worker, worker_bytes = worker_memory()
    rows.append(("Worker()", f"{per_worker * 1e6:.2f} µs, {worker_bytes:.0f} B", "—"))
    rows.append(("Memory per stored run (in-memory store)", f"{stored_run_memory():.0f} B", "—"))
    for store, label in (("memory", "in-memory"), ("sqlite", "SQLite")):
        rps = concurrent_runs_per_second(store, f"{tmp}/c-{store}")
        rows.append((f"Runs/s, {CONCURRENT} concurrent async runs, {label}",
                     _fmt(rps, 1, "runs/s"), "—"))  # fmt: skip
    return rows + import_rows(max(5, count // 2))


def import_rows(repeats: int) -> list[Row]:
    """Rows of the import measure: ours, Agno's and their ratio, over ``repeats`` rounds."""
    rows: list[Row] = []
    ours, agno = import_times(repeats)
    rows.append((f"`{OUR_IMPORT}` over bare start-up", _fmt(ours, 1e3, "ms"), "—"))
    rows.append((f"`{AGNO_IMPORT}` over bare start-up", _fmt(agno, 1e3, "ms"), "—"))
    import_ratio = _fmt(_ratios(ours, agno), 1, "", 2)
    rows.append(("import ratio deskwork / Agno", import_ratio, "≤ 0.3"))
    return rows


def main() -> None:
    global CLOCK
    flags = {a for a in sys.argv[1:] if a.startswith("--")}
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    if "--cpu" in flags:
        CLOCK = time.process_time
    quick = "--quick" in flags
    count = int(args[0]) if args else 15
    if "--import-only" in flags:
        print(f"{count} rounds of fresh interpreters, wall time; median (min–max)\n")
        _print_table(import_rows(count))
        return
    stores = ("memory",) if quick else ("memory", "sqlite")
    with tempfile.TemporaryDirectory() as tmp:
        timers = all_timers(tmp, stores, langgraph=not quick, floor="--floor" in flags)
        s = rounds(timers, count)
        rows = per_run_rows(s, count, stores)
        if not quick:
            rows += other_rows(tmp, count)
    clock = "process CPU time" if CLOCK is time.process_time else "wall time"
    print(f"{count} interleaved rounds of {RUNS_PER_SAMPLE} runs, per-run {clock};"
          " median (min–max)\n")  # fmt: skip
    _print_table(rows)


def _print_table(rows: list[Row]) -> None:
    print("| measure | median (range) | goal |")
    print("|---|---|---|")
    for name, value, goal in rows:
        print(f"| {name} | {value} | {goal} |")


if __name__ == "__main__":
    main()
