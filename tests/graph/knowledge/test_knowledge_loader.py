"""FileSystemKnowledgeLoader: reading modules, containment, timeouts."""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path

import pytest

from deskwork.graph.config.schema import TimeoutConfig
from deskwork.graph.core.exceptions import KnowledgeLoadError, KnowledgePathError
from deskwork.graph.knowledge import FileSystemKnowledgeLoader, KnowledgeLoader


@pytest.fixture
def root(tmp_path: Path) -> Path:
    base = tmp_path / "llm_resources"
    (base / "agent" / "slots").mkdir(parents=True)
    (base / "agent" / "slots" / "rules.md").write_text("# Rules\nBe kind.", encoding="utf-8")
    (tmp_path / "secret.md").write_text("TOP SECRET", encoding="utf-8")
    return base


async def test_reads_a_module(root: Path) -> None:
    loader = FileSystemKnowledgeLoader(root)
    assert isinstance(loader, KnowledgeLoader)
    assert await loader.load_module("agent/slots/rules.md") == "# Rules\nBe kind."


async def test_accepts_str_base_dir(root: Path) -> None:
    loader = FileSystemKnowledgeLoader(str(root))
    assert "Be kind" in await loader.load_module("agent/slots/rules.md")


def test_resolve_module_path_is_inside_root(root: Path) -> None:
    loader = FileSystemKnowledgeLoader(root)
    path = loader.resolve_module_path("agent/slots/rules.md")
    assert path == (root / "agent" / "slots" / "rules.md").resolve()


@pytest.mark.parametrize(
    "ref",
    [
        "../secret.md",
        "agent/../../secret.md",
        "agent/../agent/slots/rules.md",
        "..\\secret.md",
    ],
)
async def test_dot_dot_is_refused(root: Path, ref: str) -> None:
    loader = FileSystemKnowledgeLoader(root)
    with pytest.raises(KnowledgePathError, match=r"\.\."):
        await loader.load_module(ref)


async def test_absolute_path_is_refused(root: Path, tmp_path: Path) -> None:
    loader = FileSystemKnowledgeLoader(root)
    with pytest.raises(KnowledgePathError, match="absolute"):
        await loader.load_module(str(tmp_path / "secret.md"))
    with pytest.raises(KnowledgePathError, match="absolute"):
        loader.resolve_module_path("C:\\Windows\\win.ini")


@pytest.mark.parametrize("ref", ["", "   ", "a\x00b.md"])
def test_empty_and_nul_paths_are_refused(root: Path, ref: str) -> None:
    with pytest.raises(KnowledgePathError):
        FileSystemKnowledgeLoader(root).resolve_module_path(ref)


@pytest.mark.skipif(sys.platform == "win32", reason="symlinks need privileges on Windows")
async def test_symlink_escaping_the_root_is_refused(root: Path, tmp_path: Path) -> None:
    (root / "agent" / "slots" / "leak.md").symlink_to(tmp_path / "secret.md")
    (root / "agent" / "outside").symlink_to(tmp_path, target_is_directory=True)
    loader = FileSystemKnowledgeLoader(root)
    with pytest.raises(KnowledgePathError, match="outside the knowledge root"):
        await loader.load_module("agent/slots/leak.md")
    with pytest.raises(KnowledgePathError, match="outside the knowledge root"):
        await loader.load_module("agent/outside/secret.md")


@pytest.mark.skipif(sys.platform == "win32", reason="symlinks need privileges on Windows")
async def test_symlink_inside_the_root_is_allowed(root: Path) -> None:
    (root / "agent" / "alias.md").symlink_to(root / "agent" / "slots" / "rules.md")
    loader = FileSystemKnowledgeLoader(root)
    assert "Be kind" in await loader.load_module("agent/alias.md")


@pytest.mark.skipif(sys.platform == "win32", reason="symlinks need privileges on Windows")
async def test_root_reached_through_a_symlink_still_works(root: Path, tmp_path: Path) -> None:
    link = tmp_path / "link_to_root"
    link.symlink_to(root, target_is_directory=True)
    loader = FileSystemKnowledgeLoader(link)
    assert "Be kind" in await loader.load_module("agent/slots/rules.md")


async def test_missing_file_is_a_load_error(root: Path) -> None:
    loader = FileSystemKnowledgeLoader(root)
    with pytest.raises(KnowledgeLoadError, match="cannot read knowledge module") as info:
        await loader.load_module("agent/slots/nope.md")
    assert isinstance(info.value.__cause__, FileNotFoundError)


async def test_directory_is_a_load_error(root: Path) -> None:
    with pytest.raises(KnowledgeLoadError, match="not a regular file"):
        await FileSystemKnowledgeLoader(root).load_module("agent/slots")


async def test_undecodable_file_is_a_load_error(root: Path) -> None:
    (root / "agent" / "bad.md").write_bytes(b"\xff\xfe\xfa not utf-8")
    with pytest.raises(KnowledgeLoadError, match="UnicodeDecodeError"):
        await FileSystemKnowledgeLoader(root).load_module("agent/bad.md")


async def test_fifo_is_not_read(root: Path) -> None:
    if not hasattr(os, "mkfifo"):
        pytest.skip("needs named pipes")
    os.mkfifo(root / "agent" / "pipe.md")  # reading it would block forever
    with pytest.raises(KnowledgeLoadError, match="not a regular file"):
        await FileSystemKnowledgeLoader(root).load_module("agent/pipe.md")


async def test_file_io_timeout(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    release = threading.Event()
    loader = FileSystemKnowledgeLoader(root, timeout_config=TimeoutConfig(file_io_seconds=0.05))

    def stuck_read(path: Path) -> str:  # a file system that does not answer
        release.wait(5)
        return "late"

    monkeypatch.setattr(loader, "_read", stuck_read)
    try:
        with pytest.raises(KnowledgeLoadError, match=r"timed out after 0.05s"):
            await loader.load_module("agent/slots/rules.md")
    finally:
        release.set()


async def test_no_timeout_by_default(root: Path) -> None:
    loader = FileSystemKnowledgeLoader(root, timeout_config=TimeoutConfig())
    assert "Be kind" in await loader.load_module("agent/slots/rules.md")


def test_repr(root: Path) -> None:
    assert "llm_resources" in repr(FileSystemKnowledgeLoader(root))


async def test_read_errors_do_not_leak_the_host_path(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    loader = FileSystemKnowledgeLoader(root)

    def denied(path: Path) -> str:
        raise PermissionError(13, "Permission denied", str(path))

    monkeypatch.setattr(loader, "_read", denied)
    with pytest.raises(KnowledgeLoadError, match="PermissionError: Permission denied") as info:
        await loader.load_module("agent/slots/rules.md")
    assert str(root) not in str(info.value)
