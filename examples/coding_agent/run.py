"""A coding agent: a managed team fixes a failing test in ``project/``, then reports on it.

    python examples/coding_agent/run.py                          # offline, scripted model
    python examples/coding_agent/run.py --model openai/gpt-5-nano  # a real provider

1. The tests of ``project/`` run (one fails). A managed workforce starts: the manager picks
   the coder; the coder runs the tests, searches and reads the code, and edits it with a
   tool that needs confirmation (the run pauses; offline a scripted confirmation answers,
   with ``--model`` you answer at the terminal), runs the tests again, remembers its
   decision, writes to the blackboard and messages the reviewer on the channel.
2. The tests run again. A flow runs the reviewer (structured ``ReviewReport``) and the
   narrator (a human summary) in ``Parallel``; its job carries ``changed_files`` and the diff.
3. The edits are restored unless ``PRESERVE_EXAMPLE_CHANGES=1``. Model output streams unless
   ``DESKWORK_STREAM=0``. Runs are stored in ``examples/coding_agent/.deskwork/``
   (``deskwork runs --storage-dir examples/coding_agent/.deskwork``).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

from coding_script import scripted_model  # noqa: E402 - after the path above
from coding_team import ReviewReport, build_team  # noqa: E402
from coding_tools import (  # noqa: E402
    FILES_SCOPE,
    NOTES_SCOPE,
    Workspace,
    index_project,
    workspace_tools,
)

from deskwork import Desk, Event, EventType, Job, Report, ToolCall  # noqa: E402
from deskwork.collaboration import Blackboard, Channel  # noqa: E402
from deskwork.exceptions import MissingExtraError  # noqa: E402
from deskwork.memory import InMemoryMemoryStore, MemoryStore  # noqa: E402
from deskwork.tools import Tool, execute_tool  # noqa: E402
from deskwork.workflow import Parallel, Step, WorkflowContext  # noqa: E402

TASK = (
    "The unit tests of the pricing project fail. Find the bug, fix it with the smallest"
    " change, and make sure the tests pass."
)
Confirm = Callable[[str], bool]


@dataclass
class ExampleResult:
    """What one run of the example did (the test reads it)."""

    main: Report
    flow: Report | None = None
    review: ReviewReport | None = None
    summary: str | None = None
    changed_files: list[str] = field(default_factory=list)
    tests_before: dict[str, Any] = field(default_factory=dict)
    tests_after: dict[str, Any] = field(default_factory=dict)
    restored: list[str] = field(default_factory=list)
    confirmations: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """The team fixed the tests and both reports were written."""
        done = self.flow is not None and self.flow.status == "completed"
        return self.main.status == "completed" and done and bool(self.tests_after.get("passed"))


def scripted_confirmation(prompt: str) -> bool:
    """Offline: a person who reads the prompt and says yes."""
    print(f"  ? {prompt} -> yes (scripted confirmation)")
    return True


def terminal_confirmation(prompt: str) -> bool:
    """Ask at the terminal; without one, refuse (never edit unattended)."""
    if not sys.stdin.isatty():
        print(f"  ? {prompt} -> no (no terminal to ask)")
        return False
    return input(f"  ? {prompt} [y/N] ").strip().lower() in {"y", "yes"}


class _Printer:
    """Prints the events worth seeing; streamed tokens as they arrive."""

    def __init__(self) -> None:
        self.streaming = False

    def __call__(self, event: Event) -> None:
        kind, payload = event.type, event.payload
        if kind == EventType.STREAM_TOKEN and payload.get("type") == "content":
            print(payload.get("token", ""), end="", flush=True)
            self.streaming = True
            return
        if self.streaming:
            print()
            self.streaming = False
        if kind == EventType.WORKER_STARTED:
            print(f"  · {event.source} is working")
        elif kind == EventType.TOOL_COMPLETED:
            preview = " ".join(str(payload.get("result_preview", "")).split())[:100]
            print(f"  · tool {event.source} → {preview}")
        elif kind == EventType.TOOL_FAILED:
            print(f"  · tool {event.source} failed: {payload.get('error')}")
        elif kind == EventType.TOOL_CONFIRMATION_REQUESTED:
            print(f"  ⏸ {event.source} needs confirmation")


def open_memory(storage_dir: Path) -> MemoryStore:
    """Vector memory (the ``vector`` extra), else an in-memory store (substring search)."""
    try:
        from deskwork.memory import VectorMemoryStore

        store: MemoryStore = VectorMemoryStore(storage_dir / "vectors")
    except MissingExtraError:
        print("  (no 'vector' extra: memory searches by substring; pip install 'deskwork[vector]')")
        store = InMemoryMemoryStore()
    for scope in (FILES_SCOPE, NOTES_SCOPE):
        store.reset(scope)
    return store


def _run_tests(tools: dict[str, Tool], label: str) -> dict[str, Any]:
    """The project's tests through ``execute_tool`` (with the tool's timeout and retry)."""
    result = execute_tool(tools["run_tests"], ToolCall(id=label, name="run_tests"))
    outcome: dict[str, Any] = (
        result.data
        if result.error is None
        else {"passed": False, "summary": f"could not run: {result.error}", "failures": []}
    )
    print(f"tests {label}: {outcome['summary']}")
    for failure in outcome.get("failures", []):
        print(f"  {failure}")
    return outcome


def _drive(desk: Desk, report: Report, confirm: Confirm, printer: _Printer,
           asked: list[str]) -> Report:  # fmt: skip
    """Answer every confirmation until the run stops pausing."""
    while report.status == "paused" and report.pending_action is not None:
        prompt = report.pending_action.prompt
        asked.append(prompt)
        report = desk.resume(report, confirm(prompt), on_event=printer)
    return report


def _review_flow(desk: Desk, team: Any) -> Any:
    reviewer, narrator = team.get_worker("reviewer"), team.get_worker("narrator")

    def review_job(ctx: WorkflowContext) -> Job:
        return Job(input=ctx.job.input, response_schema=ReviewReport, metadata=ctx.job.metadata)

    return desk.flow(
        [Parallel(Step(reviewer, job_builder=review_job), Step(narrator), name="report")],
        name="coding_report",
    )


def _flow_outputs(flow_report: Report) -> tuple[ReviewReport | None, str | None]:
    steps = {item["step"]: item for item in flow_report.data or []}
    review_data = steps.get("reviewer", {}).get("data")
    review = ReviewReport.model_validate(review_data) if review_data is not None else None
    return review, steps.get("narrator", {}).get("content")


def run_example(
    *,
    model: str | None = None,
    confirm: Confirm | None = None,
    stream: bool | None = None,
    preserve: bool | None = None,
    storage_dir: Path | None = None,
    project: Path | None = None,
) -> ExampleResult:
    """Run the whole example once; ``None`` arguments come from the environment."""
    stream = os.environ.get("DESKWORK_STREAM", "1") != "0" if stream is None else stream
    if preserve is None:
        preserve = os.environ.get("PRESERVE_EXAMPLE_CHANGES") == "1"
    storage_dir = storage_dir or HERE / ".deskwork"
    confirm = confirm or (terminal_confirmation if model else scripted_confirmation)
    ws = Workspace(project or HERE / "project")
    ws.take_snapshot()
    memory = open_memory(storage_dir)
    tools = workspace_tools(ws, memory)
    print(f"indexed {index_project(ws, memory)} project files for search_docs")
    adapter = None if model else scripted_model()
    desk = Desk(model=model or "scripted/coding-agent", adapter=adapter, stream=stream,
                storage_dir=storage_dir, memory_store=memory, max_iterations=16)  # fmt: skip
    try:
        return _run(desk, ws, tools, confirm, preserve)
    finally:
        desk.close()
        memory.close()


def _run(desk: Desk, ws: Workspace, tools: dict[str, Tool], confirm: Confirm,
         preserve: bool) -> ExampleResult:  # fmt: skip
    printer = _Printer()
    result = ExampleResult(main=Report(run_id="-", status="running"))
    try:
        result.tests_before = _run_tests(tools, "before")
        team = build_team(tools, Channel(), Blackboard())
        print(f"\n[main run] {TASK}")
        report = desk.run(team, Job(input=TASK), on_event=printer)
        result.main = _drive(desk, report, confirm, printer, result.confirmations)
        shown = "" if desk.stream else (result.main.content or "")  # streamed above
        print(f"\n[main run {result.main.status}] {'; '.join(result.main.errors) or shown}")
        result.tests_after = _run_tests(tools, "after")
        result.changed_files = ws.changed_files()
        flow_job = Job(
            input={"task": TASK, "changed_files": result.changed_files, "diff": ws.diff(),
                   "tests_before": result.tests_before, "tests_after": result.tests_after,
                   "coder_summary": result.main.content},
            metadata={"changed_files": result.changed_files, "main_run_id": result.main.run_id},
        )  # fmt: skip
        print("\n[report flow] reviewer and narrator in parallel")
        result.flow = _drive(desk, desk.run(_review_flow(desk, team), flow_job, on_event=printer),
                             confirm, printer, result.confirmations)  # fmt: skip
        result.review, result.summary = _flow_outputs(result.flow)
        _print_outcome(result)
    finally:
        if not preserve:
            result.restored = ws.restore()
            print(f"\nrestored {', '.join(result.restored) or 'nothing'}"
                  " (PRESERVE_EXAMPLE_CHANGES=1 keeps the edits)")  # fmt: skip
    return result


def _print_outcome(result: ExampleResult) -> None:
    if result.review is not None:
        print("\nreview report:")
        print(json.dumps(result.review.model_dump(), indent=2))
    if result.summary:
        print(f"\nsummary: {result.summary}")
    print(f"\nchanged files: {', '.join(result.changed_files) or 'none'}")
    flow_id = result.flow.run_id if result.flow else "-"
    print(f"runs: {result.main.run_id} (team), {flow_id} (reports); open one with")
    print("  deskwork runs show RUN_ID --storage-dir examples/coding_agent/.deskwork")


def main(argv: Sequence[str] | None = None) -> int:
    """Command line entry point; 0 when the tests pass after the team's fix."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    parser.add_argument("--model", help="PROVIDER/MODEL for LiteLLM (needs its API key)")
    parser.add_argument("--storage-dir", type=Path, help="run data (default: .deskwork here)")
    args = parser.parse_args(argv)
    where = f"model {args.model}" if args.model else "an offline scripted model"
    print(f"deskwork coding agent example ({where})")
    return 0 if run_example(model=args.model, storage_dir=args.storage_dir).ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
