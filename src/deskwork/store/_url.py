"""One database URL for the run, session and memory stores.

``sqlite:///path/to/deskwork.db`` (the default: ``<storage_dir>/deskwork.db``; four slashes
for an absolute path) or ``postgresql://user:password@host:port/dbname``. When no URL is
given, ``DESKWORK_DATABASE_URL`` is read.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import unquote, urlsplit, urlunsplit

from deskwork.core.redact import REDACTED, hide_values, redact_text
from deskwork.exceptions import ConfigurationError

if TYPE_CHECKING:
    from deskwork.memory.base import MemoryStore
    from deskwork.store.base import RunStore
    from deskwork.store.session import SessionStore

__all__ = [
    "DB_FILENAME",
    "ENV_VAR",
    "open_memory_store",
    "open_run_store",
    "open_session_store",
    "redact_url",
    "resolve_database_url",
    "scrub",
    "sqlite_path",
]

ENV_VAR = "DESKWORK_DATABASE_URL"
DB_FILENAME = "deskwork.db"
_POSTGRES_SCHEMES = ("postgresql", "postgres")


def resolve_database_url(database_url: str | None, storage_dir: str | Path) -> str:
    """``database_url``, else ``$DESKWORK_DATABASE_URL``, else SQLite under ``storage_dir``."""
    url = database_url or os.environ.get(ENV_VAR) or ""
    if not url:
        return f"sqlite:///{Path(storage_dir) / DB_FILENAME}"
    _check_scheme(url)
    return url


def _scheme(url: str) -> str:
    return url.split("://", 1)[0].lower() if "://" in url else ""


def _check_scheme(url: str) -> None:
    scheme = _scheme(url)
    if scheme == "sqlite" and url.startswith("sqlite:///") and len(url) > len("sqlite:///"):
        return
    if scheme in _POSTGRES_SCHEMES:
        return
    raise ConfigurationError(
        f"unsupported database URL {redact_url(url)!r}: use sqlite:///path/to/deskwork.db"
        " or postgresql://user@host:port/dbname"
    )


def is_postgres(url: str) -> bool:
    """Whether ``url`` names a PostgreSQL database."""
    return _scheme(url) in _POSTGRES_SCHEMES


def sqlite_path(url: str) -> Path | None:
    """The file of a ``sqlite:///`` URL, or ``None`` for another database."""
    if _scheme(url) != "sqlite":
        return None
    return Path(url[len("sqlite:///") :])


def redact_url(url: str) -> str:
    """``url`` without its password (safe for messages and logs), spelled as the rest of
    deskwork spells it: ``postgresql://user:<redacted>@host/db``; a password given in the
    query (``?password=...``, ``sslpassword``: libpq takes both) is masked too."""
    try:
        parts = urlsplit(url)
        password = parts.password
    except ValueError:
        return "<unparsable database URL>"
    items = _query_secrets(parts.query)
    if password is None and all(value is None for _, _, value in items):
        return url  # as written (urlunsplit would drop a slash of sqlite:////path)
    query = "&".join(
        f"{name}={REDACTED}" if value is not None else item for item, name, value in items
    )
    if password is None:
        return urlunsplit(parts._replace(query=query))
    netloc = parts.netloc.rsplit("@", 1)
    user = parts.username or ""
    return urlunsplit(parts._replace(netloc=f"{user}:{REDACTED}@{netloc[-1]}", query=query))


def scrub(text: str, url: str) -> str:
    """``text`` (a driver's error message, as it is) with the passwords of ``url`` masked
    (its own and any in its query), as the URL spells them and percent-decoded (as a driver
    uses them, and may quote them), then any other secret redacted (:func:`redact_text`;
    after the passwords, which may hold an ``@`` that would cut a quoted URL's password
    short)."""
    try:
        parts = urlsplit(url)
        passwords = [parts.password or ""]
    except ValueError:
        return redact_text(text)
    passwords += [value for _, _, value in _query_secrets(parts.query) if value is not None]
    hidden = {form for p in passwords if p for form in (p, unquote(p))}
    if hidden:
        text = str(hide_values(text, sorted(hidden, key=len, reverse=True)))
    return redact_text(text)


def _query_secrets(query: str) -> list[tuple[str, str, str | None]]:
    """Each ``name=value`` item of a URL's query with its name, and its value (as written)
    when it is a secret (libpq's ``password`` and ``sslpassword``), else ``None``."""
    found: list[tuple[str, str, str | None]] = []
    for item in query.split("&"):
        name, _, value = item.partition("=")
        secret = unquote(name).strip().lower() in ("password", "sslpassword")
        found.append((item, name, value if secret else None))
    return found


def open_run_store(url: str) -> RunStore:
    """The run store of ``url`` (a SQLite file is created on first use)."""
    _check_scheme(url)
    if is_postgres(url):
        from deskwork.store.postgres import PostgresRunStore

        return PostgresRunStore(url)
    from deskwork.store.sqlite import SQLiteRunStore

    return SQLiteRunStore(_path(url))


def open_session_store(url: str) -> SessionStore:
    """The session store of ``url``."""
    _check_scheme(url)
    if is_postgres(url):
        from deskwork.store.postgres import PostgresSessionStore

        return PostgresSessionStore(url)
    from deskwork.store.session import SQLiteSessionStore

    return SQLiteSessionStore(_path(url))


def open_memory_store(url: str) -> MemoryStore:
    """The memory store of ``url``."""
    _check_scheme(url)
    if is_postgres(url):
        from deskwork.memory.postgres import PostgresMemoryStore

        return PostgresMemoryStore(url)
    from deskwork.memory.simple import SQLiteMemoryStore

    return SQLiteMemoryStore(_path(url))


def _path(url: str) -> Path:
    path = sqlite_path(url)
    assert path is not None  # checked by _check_scheme
    return path
