"""``deskwork demo``: a worker uses tools, pauses for a person, resumes, returns data.

Offline by default (a scripted model); ``--model provider/name`` uses a real provider.
Without a terminal the confirmation is answered automatically, so it never hangs.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from pydantic import BaseModel

from deskwork.adapters.base import BaseModelAdapter
from deskwork.core.event import Event, EventType
from deskwork.core.job import Job
from deskwork.core.report import Report
from deskwork.runtime.desk import Desk
from deskwork.runtime.worker import Worker
from deskwork.testing.scripted import ScriptedAdapter, Turn, call_tool, reply, structured
from deskwork.tools.base import Tool, tool
from deskwork.tools.handoff import transfer_to_agent_tool

__all__ = [
    "RestockReport",
    "demo_team",
    "demo_worker",
    "run_demo",
    "scripted_model",
    "scripted_team_model",
]

STOCK = {"espresso beans": 12, "oat milk": 30}
INSTRUCTIONS = (
    "You run a cafe's stock room. Check the stock of the item you are asked about, restock it "
    "to at least 50 units with the restock tool, then report."
)


class RestockReport(BaseModel):
    """The demo's structured output."""

    item: str
    stock_before: int
    ordered: int
    approved: bool
    summary: str


@tool(description="Look up how many units of an item are in stock")
def check_stock(item: str) -> int:
    return STOCK.get(item.lower(), 0)


@tool(requires_confirmation=True, description="Order more units of an item")
def restock(item: str, quantity: int) -> str:
    return f"ordered {quantity} x {item}"


def demo_worker(tools: list[Tool] | None = None) -> Worker:
    """The stock-room worker used by the demo."""
    return Worker(
        name="stockroom", tools=tools or [check_stock, restock], instructions=INSTRUCTIONS
    )


def _declined(messages: list[dict[str, Any]]) -> bool:
    tool_messages = [m for m in messages if m.get("role") == "tool"]
    return bool(tool_messages) and "declined" in str(tool_messages[-1].get("content"))


def scripted_model() -> ScriptedAdapter:
    """A deterministic model that plays the demo's part."""

    def after_restock(messages: list[dict[str, Any]], _tools: Any) -> Turn:
        if _declined(messages):
            return reply("The restock was declined, so espresso beans stay at 12.")
        return reply("Ordered 38 bags of espresso beans; stock will reach 50.")

    def final(messages: list[dict[str, Any]], _tools: Any) -> Turn:
        approved = not _declined(messages)
        summary = "Restocked to 50." if approved else "Restock declined; stock unchanged."
        return structured(
            RestockReport(
                item="espresso beans",
                stock_before=12,
                ordered=38 if approved else 0,
                approved=approved,
                summary=summary,
            )
        )

    return ScriptedAdapter(
        [
            call_tool("check_stock", item="espresso beans"),
            call_tool("restock", item="espresso beans", quantity=38),
            after_restock,
            final,
        ]
    )


def demo_team() -> Any:
    """A swarm: the front desk hands the question to the stockroom, which checks stock."""
    from deskwork.workforce import Workforce

    handoff = transfer_to_agent_tool(["stockroom"])
    front_desk = Worker(
        name="front_desk",
        tools=[handoff],
        instructions="You greet staff and hand stock questions to the stockroom agent.",
    )
    stockroom = Worker(
        name="stockroom",
        tools=[check_stock],
        instructions="You answer stock questions by checking the stock.",
    )
    return Workforce([front_desk, stockroom], mode="swarm", name="cafe_team")


def scripted_team_model() -> ScriptedAdapter:
    """A deterministic model for the multi-agent part of the demo."""
    return ScriptedAdapter(
        [
            call_tool(
                "transfer_to_agent",
                agent_name="stockroom",
                context="Staff ask whether oat milk stock is fine.",
            ),
            call_tool("check_stock", item="oat milk"),
            reply("Oat milk: 30 in stock, enough for today."),
        ]
    )


def _print_event(event: Event) -> None:
    kind = event.type
    if kind == EventType.WORKFORCE_HANDOFF:
        print(f"  ⇄ handoff {event.payload.get('from')} → {event.payload.get('to')}")
    elif kind == EventType.WORKER_STARTED:
        print(f"  · {event.source} is working")
    elif kind == EventType.LLM_STARTED:
        print(f"  · model call ({event.payload.get('messages_count')} messages)")
    elif kind == EventType.TOOL_COMPLETED:
        print(f"  · tool {event.source} → {event.payload.get('result_preview')}")
    elif kind == EventType.TOOL_FAILED:
        print(f"  · tool {event.source} failed: {event.payload.get('error')}")
    elif kind == EventType.TOOL_CONFIRMATION_REQUESTED:
        print(f"  ⏸ {event.source} needs confirmation")
    elif kind in (EventType.RUN_STARTED, EventType.RUN_RESUMED, EventType.RUN_COMPLETED,
                  EventType.RUN_PAUSED, EventType.RUN_FAILED):  # fmt: skip
        print(f"[{kind}]")


def _ask(prompt: str, assume_yes: bool) -> bool:
    if assume_yes:
        print(f"{prompt} -> yes (--yes)")
        return True
    if not sys.stdin.isatty():
        print(f"{prompt} -> yes (no terminal to ask, so the demo answers itself)")
        return True
    answer = input(f"{prompt} [y/N] ").strip().lower()
    return answer in {"y", "yes"}


def _adapter(model: str | None) -> BaseModelAdapter:
    if model is None:
        return scripted_model()
    from deskwork.adapters.litellm import LiteLLMAdapter

    return LiteLLMAdapter()


def run_demo(
    *,
    model: str | None = None,
    storage_dir: str = ".deskwork",
    database_url: str | None = None,
    assume_yes: bool = False,
) -> int:
    """Run the demo (its runs stored where ``deskwork runs`` with the same options looks);
    returns the process exit code."""
    desk = Desk(
        model=model or "scripted/demo",
        adapter=_adapter(model),
        storage_dir=storage_dir,
        database_url=database_url,
    )
    worker = demo_worker()
    job = Job(input="We are low on espresso beans.", response_schema=RestockReport)
    where = f"model {model}" if model else "an offline scripted model"
    print(f"deskwork demo — a worker with tools, a confirmation, and structured output ({where})")
    report = desk.run(worker, job, on_event=_print_event)
    while report.status == "paused" and report.pending_action is not None:
        approved = _ask(report.pending_action.prompt, assume_yes)
        report = desk.resume(report, approved, on_event=_print_event)
    status = _summarize(report)
    if status != 0:
        return status
    return _run_team(model, storage_dir, database_url)


def _run_team(model: str | None, storage_dir: str, database_url: str | None) -> int:
    print("\npart 2 — a team: a swarm hands a question from agent to agent")
    adapter = scripted_team_model() if model is None else _adapter(model)
    desk = Desk(
        model=model or "scripted/demo",
        adapter=adapter,
        storage_dir=storage_dir,
        database_url=database_url,
    )
    report = desk.run(demo_team(), Job(input="Do we have enough oat milk?"), on_event=_print_event)
    if report.status != "completed":
        print(f"run {report.run_id} ended {report.status}: {'; '.join(report.errors)}")
        return 1
    print(f"\nteam answer: {report.content}")
    print(f"run {report.run_id} — {report.metrics.get('llm_calls', 0)} model calls in one run")
    return 0


def _summarize(report: Report) -> int:
    if report.status != "completed":
        print(f"run {report.run_id} ended {report.status}: {'; '.join(report.errors)}")
        return 1
    data = report.data.model_dump() if isinstance(report.data, BaseModel) else report.data
    print("\nstructured output:")
    print(json.dumps(data, indent=2))
    print(f"\nrun {report.run_id} completed — see it with: deskwork runs show {report.run_id}")
    return 0
