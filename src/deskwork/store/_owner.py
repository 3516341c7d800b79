"""Which process holds a ``running`` run, and whether that process is still alive.

A run store records the owner (host name, pid and a token of the process's start time) when
a run starts or is resumed. A ``running`` run whose owner is on this host and whose process
is gone (or whose pid now belongs to a newer process) was interrupted. Nothing here is a
lease: an owner on another host is never presumed dead.
"""

from __future__ import annotations

import functools
import os
import socket
from typing import Literal

from deskwork.core.state import RunOwner, RunRecord

__all__ = ["current_owner", "owner_alive", "shown_status"]


def _start_token(pid: int) -> str:
    """The process's start time in clock ticks since boot (Linux), or ``""`` when unknown."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as handle:
            text = handle.read()
    except OSError:
        return ""
    # the command name (field 2) may hold spaces and parentheses: split after its last ")"
    fields = text.rsplit(")", 1)[-1].split()
    return fields[19] if len(fields) > 19 else ""


@functools.cache
def _host() -> str:
    return socket.gethostname()


_current: list[RunOwner] = []


def current_owner() -> RunOwner:
    """This process as a run owner (the pid and start token are re-read after a fork)."""
    pid = os.getpid()
    if not _current or _current[0].pid != pid:
        _current[:] = [RunOwner(host=_host(), pid=pid, start_token=_start_token(pid))]
    return _current[0]


def owner_alive(owner: RunOwner) -> bool | None:
    """``True``/``False`` for an owner on this host; ``None`` (unknown) for another host."""
    if owner.host != _host():
        return None
    try:
        os.kill(owner.pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, owned by another user
        pass
    # a different start token: the pid was reused by a newer process
    return not owner.start_token or _start_token(owner.pid) in ("", owner.start_token)


def shown_status(record: RunRecord) -> Literal["interrupted"] | str:
    """The status to show: ``interrupted`` for a ``running`` run whose local owner is dead."""
    owner = record.owner
    if record.status == "running" and owner is not None and owner_alive(owner) is False:
        return "interrupted"
    return str(record.status)
