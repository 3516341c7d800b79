"""The coding agent's tools: files confined to one folder, its tests, and vector memory.

Every path a model gives is relative to the project folder. Absolute paths, ``..`` that
leaves the folder and symlinks pointing out of it are refused (the tool returns the error to
the model; nothing outside is read or written). Edits need a person's confirmation.
"""

from __future__ import annotations

import difflib
import os
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from deskwork.memory import MemoryStore
from deskwork.tools import Tool, tool

FILES_SCOPE = "coding_agent:files"
NOTES_SCOPE = "coding_agent:notes"
_SKIP_DIRS = {"__pycache__", ".git", ".deskwork"}


class OutsideProjectError(ValueError):
    """A path that would leave the project folder."""


@dataclass
class Workspace:
    """The project folder the agent may touch, and a snapshot to restore it from."""

    root: Path
    snapshot: dict[str, bytes] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.root = self.root.resolve()

    def resolve(self, path: str) -> Path:
        """``path`` inside the project, or :class:`OutsideProjectError`."""
        if not path or not path.strip():
            raise OutsideProjectError("empty path")
        given = Path(path)
        if given.is_absolute() or path.startswith("~") or given.drive:
            raise OutsideProjectError(f"{path!r}: absolute paths are not allowed; use a path"
                                      " relative to the project folder")  # fmt: skip
        candidate = self.root / given
        real = candidate.resolve()  # follows symlinks and ..
        if real != self.root and not real.is_relative_to(self.root):
            why = "a symlink out of" if _has_symlink(self.root, given) else "outside"
            raise OutsideProjectError(f"{path!r} is {why} the project folder")
        return real

    def files(self) -> list[str]:
        """The project's files, relative, sorted (caches and hidden folders left out)."""
        found = []
        for current, dirs, names in os.walk(self.root):
            dirs[:] = sorted(d for d in dirs if d not in _SKIP_DIRS and not d.startswith("."))
            for name in names:
                found.append((Path(current) / name).relative_to(self.root).as_posix())
        return sorted(found)

    def take_snapshot(self) -> None:
        """Remember every file's bytes (symlinks are not followed or copied)."""
        self.snapshot = {
            name: (self.root / name).read_bytes()
            for name in self.files()
            if not (self.root / name).is_symlink()
        }

    def changed_files(self) -> list[str]:
        """Files added, edited or deleted since the snapshot."""
        now = {n for n in self.files() if not (self.root / n).is_symlink()}
        changed = {n for n in now if self.snapshot.get(n) != (self.root / n).read_bytes()}
        return sorted(changed | (set(self.snapshot) - now))

    def diff(self) -> str:
        """A unified diff of the changes since the snapshot."""
        chunks: list[str] = []
        for name in self.changed_files():
            path = self.root / name
            before = self.snapshot.get(name, b"").decode(errors="replace").splitlines(True)
            after = path.read_text(errors="replace").splitlines(True) if path.exists() else []
            chunks.extend(difflib.unified_diff(before, after, f"a/{name}", f"b/{name}"))
        return "".join(chunks)

    def restore(self) -> list[str]:
        """Put the snapshot back (new files are removed); returns what it touched."""
        touched = self.changed_files()
        for name in touched:
            path = self.root / name
            if name in self.snapshot:
                path.write_bytes(self.snapshot[name])
            else:
                path.unlink(missing_ok=True)
        return touched


def _has_symlink(root: Path, relative: Path) -> bool:
    current = root
    for part in relative.parts:
        current = current / part
        if current.is_symlink():
            return True
    return False


def run_unit_tests(root: Path, timeout: float = 60.0) -> dict[str, Any]:
    """``python -m unittest`` in the project folder: passed, and the summary lines."""
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "unittest", "discover", "-t", ".", "-s", "."],
        cwd=root, env=env, capture_output=True, text=True, timeout=timeout, check=False,
    )  # fmt: skip
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    failures = [line for line in lines if line.startswith(("FAIL:", "ERROR:"))]
    summary = [line for line in lines if line.startswith(("Ran ", "OK", "FAILED"))]
    return {
        "passed": done.returncode == 0,
        "summary": " ".join(summary) or "no test output",
        "failures": failures,
        "details": "\n".join(lines[-30:]),
    }


def workspace_tools(ws: Workspace, memory: MemoryStore) -> dict[str, Tool]:
    """The tools, by name, bound to ``ws`` and ``memory``."""

    @tool
    def list_files() -> list[str]:
        """List the files of the project (paths relative to the project folder)."""
        return ws.files()

    @tool
    def read_file(path: str) -> str:
        """Read a text file of the project."""
        text = ws.resolve(path).read_text()
        memory.write(f"file:{path}", text, FILES_SCOPE)  # recent reads are searchable
        return text

    @tool(requires_confirmation=True)
    def write_file(path: str, content: str) -> str:
        """Create or overwrite a file of the project (asks a person first)."""
        target = ws.resolve(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content)
        return f"wrote {len(content)} characters to {path}"

    @tool(requires_confirmation=True)
    def replace_in_file(path: str, old: str, new: str) -> str:
        """Replace the one occurrence of ``old`` in a file with ``new`` (asks a person first)."""
        target = ws.resolve(path)
        text = target.read_text()
        count = text.count(old)
        if count != 1:
            raise ValueError(f"{old!r} occurs {count} times in {path}; give a unique snippet")
        target.write_text(text.replace(old, new))
        return f"edited {path}"

    @tool(timeout=90, retries=1, retry_delay=0.5)
    def run_tests() -> dict[str, Any]:
        """Run the project's unit tests; returns whether they passed and what failed."""
        return run_unit_tests(ws.root)

    @tool
    def search_docs(query: str) -> list[dict[str, Any]]:
        """Search the project's files (and files read so far) by meaning."""
        return [{"key": k, "text": str(v)[:600]} for k, v in _search(memory, query, FILES_SCOPE)]

    @tool
    def remember(key: str, note: str) -> str:
        """Keep a note for later (decisions, findings)."""
        memory.write(key, note, NOTES_SCOPE)
        return key

    @tool
    def recall(query: str) -> list[dict[str, Any]]:
        """Find notes kept with remember, by meaning."""
        return [{"key": k, "note": v} for k, v in _search(memory, query, NOTES_SCOPE)]

    tools = [list_files, read_file, write_file, replace_in_file, run_tests, search_docs,
             remember, recall]  # fmt: skip
    return {t.name: t for t in tools}


def _search(memory: MemoryStore, query: str, scope: str) -> list[tuple[str, Any]]:
    search: Any = memory.search
    try:
        return list(search(query, scope, top_k=3))  # VectorMemoryStore: by meaning
    except TypeError:
        return list(memory.search(query, scope))[:3]  # other stores: by substring


def index_project(ws: Workspace, memory: MemoryStore) -> int:
    """Put every project file into memory for ``search_docs``; returns how many."""
    names = ws.files()
    for name in names:
        memory.write(f"file:{name}", (ws.root / name).read_text(errors="replace"), FILES_SCOPE)
    return len(names)
