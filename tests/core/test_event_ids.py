"""Event ids: 32 hex characters like every deskwork id, unique within a process and across
processes, a forked child included (its parent's counter state is copied by the fork)."""

from __future__ import annotations

import os
import re
import sys

import pytest

from deskwork.core.event import new_event, new_event_id

_HEX32 = re.compile(r"[0-9a-f]{32}")


def test_event_ids_are_32_hex_characters_and_unique() -> None:
    ids = [new_event_id() for _ in range(10_000)]
    assert all(_HEX32.fullmatch(i) for i in ids)
    assert len(set(ids)) == len(ids)
    events = [new_event("r1", "custom", "src", {"n": n}) for n in range(100)]
    assert len({e.event_id for e in events}) == 100


@pytest.mark.skipif(sys.platform == "win32", reason="os.fork")
def test_a_forked_child_draws_ids_of_its_own() -> None:
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: the ids it would draw next, back to the parent
        try:
            os.write(write, " ".join(new_event_id() for _ in range(3)).encode())
        finally:
            os._exit(0)
    os.close(write)
    with os.fdopen(read) as pipe:
        child = pipe.read().split()
    os.waitpid(pid, 0)
    parent = [new_event_id() for _ in range(3)]
    assert len(child) == 3 and all(_HEX32.fullmatch(i) for i in child)
    assert not set(child) & set(parent)
    assert {i[:20] for i in child} != {i[:20] for i in parent}  # a new random part
