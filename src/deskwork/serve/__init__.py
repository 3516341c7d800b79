"""``deskwork serve``: runs over HTTP (REST, Server-Sent Events, AG-UI) and a web run viewer.

Needs the ``serve`` extra (``pip install 'deskwork[serve]'``)::

    from deskwork.serve import create_app
    app = create_app(desk)            # a FastAPI app; run it with uvicorn
    serve(desk, port=8765)            # or let deskwork run uvicorn

The server keeps no state of its own: runs, events and paused states live in the desk's
run store. It binds 127.0.0.1 by default; any other address needs a bearer token.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from deskwork._extras import require

if TYPE_CHECKING:
    from deskwork.serve._app import create_app
    from deskwork.serve._server import serve

__all__ = ["create_app", "serve"]


def __getattr__(name: str) -> Any:
    if name == "create_app":
        require("fastapi", "serve")
        from deskwork.serve._app import create_app

        return create_app
    if name == "serve":
        require("uvicorn", "serve")
        from deskwork.serve._server import serve

        return serve
    raise AttributeError(f"module 'deskwork.serve' has no attribute {name!r}")
