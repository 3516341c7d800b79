"""The ``deskwork`` command line: ``deskwork demo``, ``runs``, ``doctor``, ``eval``, ``worker``."""

from __future__ import annotations

import argparse
import codecs
import io
import json
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

__all__ = ["main"]

_STATUSES = ["running", "paused", "completed", "failed", "interrupted"]
_JSON_ESCAPES = "deskwork.json-escapes"  # the codec error handler of the output
_PYTHON_DEFAULTS = ("strict", "surrogateescape")  # stdout's handlers when none is chosen


def _json_escapes(error: UnicodeError) -> tuple[str, int]:
    """What the output's encoding cannot carry, as JSON escapes (``\\ud800``): a run's
    lone surrogate (no UTF-8 carries one) is shown, and ``--json`` stays JSON that gives
    the stored text back."""
    if not isinstance(error, UnicodeEncodeError):
        raise error
    return json.dumps(error.object[error.start : error.end])[1:-1], error.end


codecs.register_error(_JSON_ESCAPES, _json_escapes)


@contextmanager
def _escaping_stdout() -> Iterator[None]:
    """Every command writes to ``sys.stdout`` with :func:`_json_escapes` for what its
    encoding cannot carry, instead of failing in the middle of a listing (Python's
    ``strict``, or ``surrogateescape`` in a C locale, which fails on ``"\\ud800"`` and
    writes ``"\\udcff"`` as a byte no UTF-8 reader takes); a handler the user chose
    (``PYTHONIOENCODING``) is kept."""
    stream = sys.stdout
    if not isinstance(stream, io.TextIOWrapper) or stream.errors not in _PYTHON_DEFAULTS:
        yield
        return
    errors = stream.errors
    stream.reconfigure(errors=_JSON_ESCAPES)
    try:
        yield
    finally:
        stream.reconfigure(errors=errors)


def _store_options(parser: argparse.ArgumentParser, *, top: bool = False) -> None:
    """``--storage-dir``/``--database-url``, accepted before and after the subcommand."""
    parser.add_argument(
        "--storage-dir",
        default=".deskwork" if top else argparse.SUPPRESS,
        help="run store directory (default: .deskwork)",
    )
    parser.add_argument(
        "--database-url",
        default=None if top else argparse.SUPPRESS,
        help="sqlite:///path or postgresql://... (default: $DESKWORK_DATABASE_URL, else"
        " <storage-dir>/deskwork.db)",
    )


def _runs_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    runs = sub.add_parser(
        "runs",
        help="list recent runs; 'show RUN_ID' shows one; 'fail RUN_ID' ends an interrupted one",
    )
    runs.add_argument("action", nargs="?", choices=["show", "fail"], help="show or fail one run")
    runs.add_argument("run_id", nargs="?", help="run id for 'show' and 'fail'")
    runs.add_argument("--limit", type=int, default=20, help="how many runs to list")
    runs.add_argument("--status", choices=_STATUSES, help="only runs with this status")
    runs.add_argument("--runner", help="only runs of the runner with this name")
    runs.add_argument("--since", help="only runs updated since: 30m, 2h, 1d or an ISO time")
    runs.add_argument("--json", action="store_true", help="print JSON (for scripts)")
    runs.add_argument("--check", action="store_true", help="check the store (= deskwork doctor)")
    runs.add_argument(
        "--force", action="store_true", help="'fail': even if its process may be alive"
    )
    _store_options(runs)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="deskwork", description="deskwork command line")
    _store_options(parser, top=True)
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="run the demo (offline unless --model is given)")
    demo.add_argument("--model", help="a LiteLLM model such as openai/gpt-5-nano (needs its key)")
    demo.add_argument("--yes", action="store_true", help="approve the confirmation without asking")
    _store_options(demo)
    from deskwork.serve._cli import add_demo_serve_options, add_serve_parser

    add_demo_serve_options(demo)
    _runs_parser(sub)
    doctor = sub.add_parser("doctor", help="check the run store (integrity, interrupted runs)")
    _store_options(doctor)
    from deskwork.evals._cli import add_eval_parser

    add_eval_parser(sub, _store_options)
    from deskwork.cli.worker import add_worker_parser

    add_worker_parser(sub)
    add_serve_parser(sub)
    return parser


def _runs(args: argparse.Namespace) -> int:
    from deskwork.cli.runs import ListOptions, fail_run, list_runs, parse_since, show_run

    url = args.database_url
    if args.action in ("show", "fail"):
        if not args.run_id:
            print(f"usage: deskwork runs {args.action} RUN_ID", file=sys.stderr)
            return 2
        if args.action == "fail":
            return fail_run(args.storage_dir, args.run_id, database_url=url, force=args.force)
        return show_run(args.storage_dir, args.run_id, database_url=url, as_json=args.json)
    try:
        since = parse_since(args.since) if args.since else None
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    options = ListOptions(
        limit=args.limit, status=args.status, runner=args.runner, since=since, as_json=args.json
    )
    return list_runs(args.storage_dir, options, database_url=url)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``deskwork`` console script."""
    from deskwork.exceptions import ConfigurationError, StoreError

    args = _parser().parse_args(argv)
    with _escaping_stdout():
        try:
            return _command(args)
        except ConfigurationError as exc:  # a setting deskwork refuses: one line, no traceback
            print(f"error: {exc}", file=sys.stderr)
            return 2
        except StoreError as exc:  # a store it cannot use (its message says what to do)
            print(f"error: {exc}", file=sys.stderr)
            return 1


def _command(args: argparse.Namespace) -> int:
    if args.command == "demo" and args.serve:
        from deskwork.serve._demo import serve_demo

        return serve_demo(
            storage_dir=args.storage_dir, database_url=args.database_url, port=args.port
        )
    if args.command == "serve":
        from deskwork.serve._cli import run_serve

        return run_serve(args)
    if args.command == "demo":
        from deskwork.cli.demo import run_demo

        return run_demo(
            model=args.model,
            storage_dir=args.storage_dir,
            database_url=args.database_url,
            assume_yes=args.yes,
        )
    if args.command == "doctor" or getattr(args, "check", False):
        from deskwork.cli.runs import doctor

        return doctor(args.storage_dir, database_url=args.database_url)
    if args.command == "eval":
        from deskwork.evals._cli import run_eval

        return run_eval(args)
    if args.command == "worker":
        from deskwork.cli.worker import run_worker

        return run_worker(args)
    return _runs(args)


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
