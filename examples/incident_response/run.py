"""Run the DevOps Incident Response System from the command line.

    python examples/incident_response/run.py                      # offline, scripted model
    python examples/incident_response/run.py --alert "High CPU on worker-3"
    python examples/incident_response/run.py --model openai/gpt-4o-mini   # a real model

Each alert is one desk run, stored with its events under ``examples/incident_response/.deskwork``
(see them with ``deskwork runs --storage-dir examples/incident_response/.deskwork``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import sys
from pathlib import Path
from typing import Any

import structlog
from system import DATA_DIR, build_system, handle_incident, incident_summary, make_desk

from deskwork import Report

DEFAULT_ALERT = "CRITICAL: 5xx error rate above 10% on web-service"


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="Handle incidents with a supervised agent graph.")
    parser.add_argument(
        "--alert",
        action="append",
        help="alert text (repeat for several incidents; default: a 5xx error-rate alert)",
    )
    parser.add_argument(
        "--model",
        help="PROVIDER/MODEL for LiteLLM, e.g. openai/gpt-4o-mini (default: offline scripted)",
    )
    parser.add_argument("--user", default="ops-team", help="the team (tenant) reporting alerts")
    parser.add_argument("--data-dir", type=Path, default=DATA_DIR, help="where runs are stored")
    parser.add_argument("--json", action="store_true", help="print one JSON object per incident")
    parser.add_argument("--verbose", action="store_true", help="show the agents' logs on stderr")
    return parser.parse_args(argv)


def configure_logging(verbose: bool) -> None:
    """Structured logs on stderr (stdout stays for the reports), request ids merged in."""
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.dev.ConsoleRenderer(colors=False),
        ],
        wrapper_class=structlog.make_filtering_bound_logger(
            logging.INFO if verbose else logging.WARNING
        ),
        logger_factory=structlog.PrintLoggerFactory(file=sys.stderr),
    )


async def main(args: argparse.Namespace) -> int:
    system = build_system()
    desk = make_desk(args.model, args.data_dir)
    failed = 0
    async with system.context():
        for alert in args.alert or [DEFAULT_ALERT]:
            report = await handle_incident(desk, system, alert, user_id=args.user)
            events = desk.run_store.get_events(report.run_id)
            failed += report.status != "completed"
            print(_render(alert, report, events, as_json=args.json), flush=True)
    if not args.json:
        print(f"Runs stored in {args.data_dir} (deskwork runs --storage-dir {args.data_dir})")
    return 1 if failed else 0


def _render(alert: str, report: Report, events: list[Any], *, as_json: bool) -> str:
    path = [e.source for e in events if e.type == "graph.agent.completed"]
    metrics = {k: report.metrics.get(k, 0) for k in ("llm_calls", "total_tokens", "nodes")}
    if as_json:
        return json.dumps(
            {
                "run_id": report.run_id,
                "status": report.status,
                "alert": alert,
                "incident": incident_summary(report),
                "path": path,
                "events": len(events),
                "metrics": metrics,
                "report": report.content,
                "errors": report.errors,
            }
        )
    lines = [
        f"== Incident run {report.run_id}: {report.status}",
        f"Alert: {alert}",
        f"Path: {' -> '.join(path)}",
        f"Supervisor: {_said_by(report, 'supervisor')}",
        f"Events stored: {len(events)}; model calls: {metrics['llm_calls']}, "
        f"tokens: {metrics['total_tokens']}",
        "",
        report.content or "\n".join(report.errors),
        "",
    ]
    return "\n".join(lines)


def _said_by(report: Report, agent: str) -> str:
    said = [m.content for m in report.messages if m.role == "assistant" and m.name == agent]
    return str(said[0]) if said else "-"


if __name__ == "__main__":
    arguments = parse_args()
    configure_logging(arguments.verbose)
    sys.exit(asyncio.run(main(arguments)))
