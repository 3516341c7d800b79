"""The ``deskwork`` command line: ``deskwork demo`` and ``deskwork runs``."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

__all__ = ["main"]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="deskwork", description="deskwork command line")
    parser.add_argument(
        "--storage-dir", default=".deskwork", help="run store directory (default: .deskwork)"
    )
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="run the demo (offline unless --model is given)")
    demo.add_argument("--model", help="a LiteLLM model such as openai/gpt-5-nano (needs its key)")
    demo.add_argument("--yes", action="store_true", help="approve the confirmation without asking")
    runs = sub.add_parser("runs", help="list recent runs, or show one")
    runs.add_argument("action", nargs="?", choices=["show"], help="show one run")
    runs.add_argument("run_id", nargs="?", help="run id for 'show'")
    runs.add_argument("--limit", type=int, default=20, help="how many runs to list")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``deskwork`` console script."""
    args = _parser().parse_args(argv)
    if args.command == "demo":
        from deskwork.cli.demo import run_demo

        return run_demo(model=args.model, storage_dir=args.storage_dir, assume_yes=args.yes)
    from deskwork.cli.runs import list_runs, show_run

    if args.action == "show":
        if not args.run_id:
            print("usage: deskwork runs show RUN_ID", file=sys.stderr)
            return 2
        return show_run(args.storage_dir, args.run_id)
    return list_runs(args.storage_dir, args.limit)


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
