"""``deskwork eval MODULE:CASES --runner MODULE:ATTR``: run an eval, print a table.

Exit status: 0 when the pass rate reaches ``--threshold`` (default 1.0: every case passes),
1 under it, 2 for a usage error (a name that does not import, no desk).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from typing import Any

from deskwork.cli._target import load_attribute
from deskwork.core.redact import describe_exception, exception_text, redact
from deskwork.evals._case import EvalCase
from deskwork.evals._run import evaluate
from deskwork.evals._scorers import DEFAULT_SCORER_TIMEOUT
from deskwork.exceptions import ConfigurationError

__all__ = ["add_eval_parser", "run_eval"]


class _UsageError(Exception):
    pass


def add_eval_parser(
    sub: argparse._SubParsersAction[argparse.ArgumentParser],
    store_options: Any,
) -> None:
    """Add the ``eval`` subcommand to the ``deskwork`` parser."""
    parser = sub.add_parser(
        "eval", help="run eval cases through a runner and score them (deskwork.evals)"
    )
    parser.add_argument("cases", help="MODULE:ATTR of a list of EvalCase (or a function)")
    parser.add_argument("--runner", required=True, help="MODULE:ATTR of the runner to evaluate")
    parser.add_argument("--desk", help="MODULE:ATTR of the Desk to use (or a function making one)")
    parser.add_argument("--model", help="build a desk for this LiteLLM model (without --desk)")
    parser.add_argument(
        "--threshold", type=float, default=1.0, help="pass rate needed to exit 0 (default 1.0)"
    )
    parser.add_argument("--concurrency", type=int, default=1, help="cases run at once")
    parser.add_argument(
        "--scorer-timeout",
        type=float,
        default=DEFAULT_SCORER_TIMEOUT,
        metavar="SECONDS",
        help="seconds a scorer may take on a case (default 60; 0: no limit)",
    )
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    store_options(parser)


def run_eval(args: argparse.Namespace) -> int:
    """Run ``deskwork eval``; returns the exit status."""
    if not 0.0 <= args.threshold <= 1.0 or args.concurrency < 1:
        print("error: --threshold must be in [0, 1] and --concurrency >= 1", file=sys.stderr)
        return 2
    if not 0.0 <= args.scorer_timeout < math.inf:  # NaN too
        print("error: --scorer-timeout must be a number of seconds >= 0", file=sys.stderr)
        return 2
    scorer_timeout = args.scorer_timeout or None
    try:
        cases = _cases(load_attribute(args.cases))
        runner = _made(load_attribute(args.runner), want="arun")
        desk = _desk(args)
        result = evaluate(runner, cases, desk=desk, concurrency=args.concurrency,
                          scorer_timeout=scorer_timeout)  # fmt: skip
    except (_UsageError, ConfigurationError) as exc:
        print(f"error: {exception_text(exc)}", file=sys.stderr)
        return 2
    if args.json:
        data = {"summary": result.summary(), "cases": result.model_dump(mode="json")["cases"]}
        print(json.dumps(redact(data), indent=2, default=str))  # printed into CI logs
    else:
        print(result.table())
    if result.pass_rate < args.threshold:
        print(
            f"pass rate {result.pass_rate:.0%} is under the threshold {args.threshold:.0%}",
            file=sys.stderr,
        )
        return 1
    return 0


def _made(value: Any, *, want: str) -> Any:
    """``value``, or what calling it (a factory without arguments) returns."""
    if not hasattr(value, want) and callable(value):
        value = _call_factory(value)
    if not hasattr(value, want):
        raise _UsageError(f"{value!r} has no {want}(): not a runner")
    return value


def _call_factory(factory: Any) -> Any:
    try:
        return factory()
    except Exception as exc:
        name = getattr(factory, "__qualname__", repr(factory))
        raise _UsageError(f"{name}() raised {describe_exception(exc)}") from exc


def _cases(value: Any) -> list[EvalCase]:
    if callable(value):
        value = _call_factory(value)
    items = list(value) if isinstance(value, list | tuple) else None
    if not items or not all(isinstance(item, EvalCase) for item in items):
        raise _UsageError("the cases must be a non-empty list of EvalCase")
    return items


def _desk(args: argparse.Namespace) -> Any:
    from deskwork.runtime.desk import Desk

    if args.desk:
        if args.database_url is not None or args.storage_dir != ".deskwork":
            raise _UsageError(  # they would be ignored: the runs go to that desk's stores
                f"--database-url and --storage-dir build the desk of --model; --desk {args.desk}"
                " has its own stores"
            )
        desk = load_attribute(args.desk)
        if not isinstance(desk, Desk) and callable(desk):
            desk = _call_factory(desk)
        if not isinstance(desk, Desk):
            raise _UsageError(f"--desk {args.desk}: {desk!r} is not a Desk")
        return desk
    if not args.model:
        raise _UsageError("give --desk MODULE:ATTR or --model PROVIDER/MODEL")
    return Desk(model=args.model, storage_dir=args.storage_dir, database_url=args.database_url)
