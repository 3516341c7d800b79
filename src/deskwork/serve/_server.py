"""Run the app with uvicorn, enforcing the bind rule: off-loopback needs a token."""

from __future__ import annotations

import gc
import os
import sys
from collections.abc import Mapping
from typing import Any

from deskwork.exceptions import ConfigurationError
from deskwork.runtime.desk import Desk
from deskwork.runtime.runner import Runner
from deskwork.serve._cli import check_port
from deskwork.serve._security import check_token, is_loopback

__all__ = ["DEFAULT_HOST", "DEFAULT_PORT", "TOKEN_ENV", "check_bind", "serve"]

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8765
TOKEN_ENV = "DESKWORK_SERVE_TOKEN"
"""The environment variable read when no token is given."""


def check_bind(host: str, token: str | None) -> str | None:
    """The token to use; raises when ``host`` leaves this machine without one."""
    token = check_token(token or os.environ.get(TOKEN_ENV))
    if token is None and not is_loopback(host):
        raise ConfigurationError(
            f"binding {host} exposes the API beyond this machine: set a bearer token with"
            f" --token or ${TOKEN_ENV}"
        )
    return token


def serve(
    desk: Desk,
    *,
    host: str = DEFAULT_HOST,
    port: int = DEFAULT_PORT,
    token: str | None = None,
    runners: Mapping[str, Runner] | None = None,
    cors_origins: list[str] | None = None,
    rate_limit: float | None = None,
    rate_burst: int = 20,
    tune: bool = True,
    **uvicorn_options: Any,
) -> None:
    """Serve ``desk`` until interrupted (blocking). With ``tune`` (the default) the process
    is tuned for the server first (:func:`_tune_process`: startup objects frozen out of the
    garbage collector, a 1 ms switch interval); ``tune=False`` leaves both as they are, for
    a process that serves next to other work of its own.

    Raises:
        ConfigurationError: ``host`` is not this machine's and no token is given (nor
            ``$DESKWORK_SERVE_TOKEN``), or ``port`` is not 0 to 65535.
    """
    import uvicorn

    from deskwork.serve._app import create_app

    token = check_bind(host, token)
    port = check_port(port)
    app = create_app(
        desk,
        runners=runners,
        token=token,
        cors_origins=cors_origins,
        rate_limit=rate_limit,
        rate_burst=rate_burst,
        local_only=token is None,  # (only loopback binds go without a token)
    )
    if tune:
        _tune_process()
    uvicorn.run(app, host=host, port=port, log_level="warning", **uvicorn_options)


SWITCH_INTERVAL = 0.001
"""Seconds a thread may keep the GIL while another waits for it, in a served process."""


def _tune_process() -> None:
    """Make the serving process's event loop answer sooner, at startup.

    The objects made so far (modules, the app, the desk) live as long as the server: once
    startup's garbage is collected they are moved out of the garbage collector's reach
    (``gc.freeze``), so a full collection later scans only what the server made since
    (with ``bench/serve.py``'s app: 41 ms of CPU before, under 0.1 ms after; one landing
    while an event fans out delays it by that much).

    While another thread runs Python (a sync tool in the desk's tool threads, a run on
    another loop), the loop's thread waits for the GIL before each wake-up up to the
    switch interval, 5 ms by default: a timer on the loop fired 5.2 ms late at p50 next to
    one busy thread, 1.9 ms with :data:`SWITCH_INTERVAL` (0.1 ms with no busy thread),
    so the interval is lowered to it (never raised)."""
    gc.collect()
    gc.freeze()
    sys.setswitchinterval(min(sys.getswitchinterval(), SWITCH_INTERVAL))
