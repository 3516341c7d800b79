"""Core runtime benchmark (issue: core runtime).

Scenario: a worker with two tools and a scripted zero-latency model that makes one tool
call and then answers (two model turns per run). Measures Worker instantiation (time and
memory), framework overhead per model turn with the in-memory and the SQLite run store,
`import deskwork` time, and the same scenario on LangGraph's prebuilt ReAct agent with a
fake chat model, in the same process.

Run: ``python bench/core.py`` (prints a markdown table; medians of several repeats).
"""

from __future__ import annotations

import gc
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from typing import Any

from deskwork import Desk, Job, Worker
from deskwork.store import InMemoryRunStore
from deskwork.testing import ScriptedAdapter, call_tool, reply
from deskwork.tools import tool

TURNS_PER_RUN = 2
REPEATS = 7


@tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@tool()
def shout(text: str) -> str:
    """Upper-case some text."""
    return text.upper()


def _median_per_call(fn: Callable[[], Any], calls: int) -> float:
    samples = []
    for _ in range(REPEATS):
        gc.collect()
        started = time.perf_counter()
        for _ in range(calls):
            fn()
        samples.append((time.perf_counter() - started) / calls)
    return statistics.median(samples)


def worker_instantiation() -> tuple[float, float]:
    """Seconds per Worker() and bytes per Worker (tracemalloc)."""
    tools = [add, shout]
    per_call = _median_per_call(lambda: Worker(name="w", tools=tools), 20_000)
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.take_snapshot()
    keep = [Worker(name=f"w{i}", tools=tools) for i in range(10_000)]
    after = tracemalloc.take_snapshot()
    tracemalloc.stop()
    size = sum(s.size_diff for s in after.compare_to(before, "filename")) / len(keep)
    return per_call, size


def _script() -> ScriptedAdapter:
    adapter = ScriptedAdapter()

    def cycle(messages: list[dict[str, Any]], _tools: Any) -> Any:
        if messages[-1]["role"] == "tool":
            return reply("The sum is 5.")
        return call_tool("add", a=2, b=3)

    adapter._default = cycle  # every call answers from the cycle: no script to exhaust
    return adapter


def deskwork_turn(store: str) -> float:
    """Seconds of framework overhead per model turn (the scripted model costs ~0)."""
    worker = Worker(name="bench", tools=[add, shout])
    job = Job(input="add 2 and 3")
    with tempfile.TemporaryDirectory() as tmp:
        run_store = InMemoryRunStore() if store == "memory" else None
        desk = Desk(model="scripted/m", adapter=_script(), run_store=run_store, storage_dir=tmp)
        adapter = desk.adapter
        assert isinstance(adapter, ScriptedAdapter)

        def once() -> None:
            report = desk.run(worker, job)
            assert report.status == "completed", report.errors
            adapter.calls.clear()

        once()
        return _median_per_call(once, 300) / TURNS_PER_RUN


def langgraph_turn() -> float | None:
    """Seconds per model turn for LangGraph's prebuilt ReAct agent with a fake model."""
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

    once()
    return _median_per_call(once, 300) / TURNS_PER_RUN


def import_time() -> float:
    """Median seconds for ``import deskwork`` in a fresh interpreter, minus bare start-up."""

    def run(code: str) -> float:
        samples = []
        for _ in range(REPEATS):
            started = time.perf_counter()
            subprocess.run([sys.executable, "-c", code], check=True)
            samples.append(time.perf_counter() - started)
        return statistics.median(samples)

    return run("import deskwork") - run("pass")


def main() -> None:
    per_worker, worker_bytes = worker_instantiation()
    memory_turn = deskwork_turn("memory")
    sqlite_turn = deskwork_turn("sqlite")
    lg_turn = langgraph_turn()
    imported = import_time()
    rows = [
        (
            "Worker instantiation",
            f"{per_worker * 1e6:.2f} µs, {worker_bytes:.0f} B",
            "≤ 3 µs, ≤ 2 KiB",
        ),
        ("Overhead per model turn, in-memory store", f"{memory_turn * 1e6:.0f} µs", "≤ 50 µs"),
        ("Overhead per model turn, SQLite store", f"{sqlite_turn * 1e6:.0f} µs", "≤ 500 µs"),
        ("`import deskwork`", f"{imported * 1e3:.0f} ms", "≤ 150 ms"),
    ]
    if lg_turn is not None:
        rows.append(
            ("LangGraph prebuilt ReAct agent, per model turn", f"{lg_turn * 1e6:.0f} µs", "—")
        )
        rows.append(
            (
                "deskwork (in-memory) / LangGraph per-turn ratio",
                f"{memory_turn / lg_turn:.2f}",
                "≤ 0.5",
            )
        )
    print("| measure | median | goal |")
    print("|---|---|---|")
    for name, value, goal in rows:
        print(f"| {name} | {value} | {goal} |")


if __name__ == "__main__":
    main()
