"""``deskwork serve MODULE:ATTR``: the command-line side of the server.

Importing this module does not import FastAPI or uvicorn (the CLI parser uses it).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

__all__ = ["add_demo_serve_options", "add_serve_parser", "check_port", "load_desk", "run_serve"]


def add_serve_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``serve`` subcommand."""
    serve = sub.add_parser(
        "serve",
        help="serve a desk over HTTP (REST, SSE, AG-UI) with the web run viewer",
        description="Serve the desk found at MODULE:ATTR (a Desk, or a function returning one)."
        " Binds 127.0.0.1 unless --host says otherwise; any other address needs a token.",
    )
    serve.add_argument("target", help="MODULE:ATTR, e.g. app.main:desk")
    serve.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    serve.add_argument("--port", type=_port, default=8765, help="port (default 8765)")
    serve.add_argument(
        "--token", default=None, help="bearer token clients must send (or $DESKWORK_SERVE_TOKEN)"
    )
    serve.add_argument(
        "--cors-origin",
        action="append",
        default=None,
        help="allow this origin through CORS (repeatable; CORS is off without it)",
    )
    serve.add_argument(
        "--rate-limit",
        type=float,
        default=None,
        metavar="PER_SECOND",
        help="requests a second per client address (bursts of --rate-burst); off without it",
    )
    serve.add_argument(
        "--rate-burst", type=int, default=20, help="burst allowed by --rate-limit (default 20)"
    )


def add_demo_serve_options(demo: argparse.ArgumentParser) -> None:
    """``deskwork demo --serve [--port N]``."""
    demo.add_argument(
        "--serve", action="store_true", help="serve the offline demo with the web viewer"
    )
    demo.add_argument("--port", type=_port, default=8765, help="port for --serve (default 8765)")


def check_port(port: Any) -> int:
    """``port`` if it is a TCP port, 0 to 65535 (the OS took 99999 as 99999 - 65536 and
    served there).

    Raises:
        ConfigurationError: anything else.
    """
    from deskwork.exceptions import ConfigurationError
    from deskwork.utils import is_integer

    if not is_integer(port) or not 0 <= port <= 65535:
        raise ConfigurationError(f"a port is a number from 0 to 65535, not {port!r}")
    return int(port)


def _port(text: str) -> int:
    """``--port``: a usage error unless :func:`check_port` takes it."""
    try:
        return check_port(int(text) if text.strip().isdigit() else text)
    except ValueError as exc:  # (ConfigurationError is one)
        raise argparse.ArgumentTypeError(str(exc)) from None


def load_desk(target: str) -> Any:
    """The desk named by ``MODULE:ATTR`` (called first when it is a function).

    Raises:
        ConfigurationError: see :func:`deskwork.cli._target.load_desk`.
    """
    from deskwork.cli._target import load_desk as load

    return load(target)


def run_serve(args: argparse.Namespace) -> int:
    """Run ``deskwork serve``; returns the exit code."""
    from deskwork.exceptions import ConfigurationError, MissingExtraError

    try:
        from deskwork._extras import require
        from deskwork.serve._ratelimit import check_rate
        from deskwork.serve._server import check_bind, serve

        for module in ("fastapi", "uvicorn", "ag_ui"):
            require(module, "serve")
        token = check_bind(args.host, args.token)
        if args.rate_limit is not None:
            check_rate(args.rate_limit, args.rate_burst)
        desk = load_desk(args.target)
    except (ValueError, ImportError, AttributeError, ConfigurationError, MissingExtraError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"deskwork serve: http://{args.host}:{args.port}/ (viewer), /openapi.json (API)")
    serve(desk, host=args.host, port=args.port, token=token, cors_origins=args.cors_origin,
          rate_limit=args.rate_limit, rate_burst=args.rate_burst)  # fmt: skip
    return 0
