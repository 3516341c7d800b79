"""Which code may recover a durable run: application versions and runner code digests.

A recovered run replays its runner against the steps it recorded, so the code that recovers
it must be the code that started it. Two checks guard that:

- **The application version** (DBOS's): ``$DESKWORK_APP_VERSION`` when set (*pinned*), else
  the version DBOS computes from deskwork's workflow, the DBOS release and the application
  name. It changes with a deskwork or DBOS upgrade, not with your code, so every process
  of one deployment (the one that submits, the workers) shares it, as DBOS queues need.
- **The code digest** of each run's runner, recorded when the run starts: a digest of the
  source files of the application modules that define the runner, its members, tools and
  hooks (files of installed libraries and of deskwork itself are left out, and only their
  contents count, so two checkouts in different directories agree).

``recover()`` refuses a run started under another application version, and a run whose
runner's code digest changed unless the version is pinned: pinning says "this code may
continue those runs". A refused run stays ``running`` with a ``run.unrecoverable`` event that
says why and what to do.
"""

from __future__ import annotations

import hashlib
import inspect
import os
import site
import sys
import sysconfig
from functools import lru_cache
from pathlib import Path
from typing import Any

__all__ = ["code_digest", "pinned_version", "refusal"]

_MAX_DEPTH = 8
_MAX_OBJECTS = 5000
_OPAQUE = ("deskwork.runtime.desk", "deskwork.store", "deskwork.memory", "deskwork.adapters")
"""deskwork modules whose objects are services, not a runner's code: not looked into."""


def pinned_version() -> str | None:
    """``$DESKWORK_APP_VERSION`` (or DBOS's own ``$DBOS__APPVERSION``), if set."""
    return os.environ.get("DESKWORK_APP_VERSION") or os.environ.get("DBOS__APPVERSION") or None


def code_digest(runner: object) -> str:
    """A digest of the application source files that define ``runner`` (see the module)."""
    digest = hashlib.sha256()
    for content in sorted(_content_digest(path) for path in _code_files(runner)):
        digest.update(content.encode())
    return digest.hexdigest()[:16]


def refusal(started_version: str | None, request: dict[str, Any], runner: Any) -> str | None:
    """Why the run of ``request`` (started under ``started_version``) must not be recovered
    with ``runner`` in this process, or ``None`` when it may."""
    from dbos import DBOS

    current = DBOS.application_version
    if started_version and started_version != current:
        return (
            f"it was started by application version {started_version!r} and this process"
            f" runs version {current!r}: recover it from a process of that version, or set"
            f" DESKWORK_APP_VERSION={started_version} here to continue it with this code"
            " (or end it: desk.cancel(run_id))"
        )
    recorded = request.get("code")
    if not recorded or pinned_version() is not None:
        return None
    now = code_digest(runner)
    if now == recorded:
        return None
    return (
        f"the code of {request['runner_type']} {request['runner_name']!r} changed since the"
        f" run started (code digest {recorded} -> {now}), and its recorded steps may not"
        " match the new code: restore the old code to recover it, or set"
        f" DESKWORK_APP_VERSION={current} to continue it with this code (or end it:"
        " desk.cancel(run_id))"
    )


# -- the files that define a runner ---------------------------------------------------------


@lru_cache(maxsize=1)
def _library_roots() -> tuple[str, ...]:
    paths = {sysconfig.get_paths()[key] for key in ("stdlib", "platstdlib", "purelib", "platlib")}
    paths.update(site.getsitepackages())
    paths.add(site.getusersitepackages())
    paths.add(str(Path(__file__).resolve().parents[1]))  # deskwork itself
    return tuple(sorted(str(Path(p).resolve()) + os.sep for p in paths if p))


def _app_file(obj: Any) -> str | None:
    """The source file of the application module that defines ``obj``, if any."""
    module = sys.modules.get(getattr(obj, "__module__", None) or "")
    path = getattr(module, "__file__", None)
    if not path or not path.endswith(".py"):
        return None
    return _app_path(path)


@lru_cache(maxsize=4096)
def _app_path(path: str) -> str | None:
    """``path`` resolved, unless it is a library's (resolved once: a run's digest walks
    hundreds of functions and classes, and resolving each path is a system call per part)."""
    resolved = str(Path(path).resolve())
    return None if resolved.startswith(_library_roots()) else resolved


def _looked_into(cls: type) -> bool:
    module = cls.__module__ or ""
    if module.startswith("deskwork."):
        return not module.startswith(_OPAQUE)
    return _app_file(cls) is not None


def _attributes(value: Any) -> list[Any]:
    found = list(getattr(value, "__dict__", {}).values())
    for cls in type(value).__mro__:
        slots = cls.__dict__.get("__slots__", ())
        for name in (slots,) if isinstance(slots, str) else slots:
            if hasattr(value, name) and not name.startswith("__"):
                found.append(getattr(value, name))
    return found


def _code_files(root: object) -> set[str]:
    files: set[str] = set()
    seen: set[int] = set()
    stack: list[tuple[Any, int]] = [(root, 0)]
    while stack and len(seen) < _MAX_OBJECTS:
        value, depth = stack.pop()
        if id(value) in seen or depth > _MAX_DEPTH or value is None:
            continue
        seen.add(id(value))
        if isinstance(value, str | bytes | int | float | bool):
            continue
        if inspect.isroutine(value) or inspect.isclass(value):
            target = inspect.unwrap(value) if inspect.isroutine(value) else value
            path = _app_file(target)
            if path is not None:
                files.add(path)
            bound = getattr(value, "__self__", None)
            if bound is not None and not inspect.ismodule(bound):
                stack.append((bound, depth + 1))
            continue
        children: list[Any]
        if isinstance(value, dict):
            children = list(value.values())
        elif isinstance(value, list | tuple | set | frozenset):
            children = list(value)
        else:
            path = _app_file(type(value))
            if path is not None:
                files.add(path)
            children = _attributes(value) if _looked_into(type(value)) else []
        stack.extend((child, depth + 1) for child in children)
    return files


def _content_digest(path: str) -> str:
    stat = os.stat(path)
    return _file_digest(path, stat.st_mtime_ns, stat.st_size)


@lru_cache(maxsize=256)
def _file_digest(path: str, mtime_ns: int, size: int) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()
