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
    deskwork spells it: ``postgresql://user:<redacted>@host/db``."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "<unparsable database URL>"
    if parts.password is None:
        return url
    netloc = parts.netloc.rsplit("@", 1)
    user = parts.username or ""
    return urlunsplit(parts._replace(netloc=f"{user}:{REDACTED}@{netloc[-1]}"))


def scrub(text: str, url: str) -> str:
    """``text`` (a driver's error message, as it is) with the password of ``url`` masked,
    as the URL spells it and percent-decoded (as a driver uses it, and may quote it), then
    any other secret redacted (:func:`redact_text`; after the password, which may hold an
    ``@`` that would cut a quoted URL's password short)."""
    try:
        password = urlsplit(url).password
    except ValueError:
        password = None
    if password:
        text = str(hide_values(text, [password, unquote(password)]))
    return redact_text(text)


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
