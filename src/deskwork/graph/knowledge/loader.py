"""Where knowledge modules come from.

:class:`KnowledgeLoader` is the extension point (implement it to read modules from S3, a database,
...). :class:`FileSystemKnowledgeLoader` reads them from a directory and never leaves it: absolute
paths, ``..`` components and symlinks that resolve outside the base directory are refused with
:class:`~deskwork.graph.core.exceptions.KnowledgePathError`.
"""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import TYPE_CHECKING

from deskwork.graph.core.exceptions import KnowledgeLoadError, KnowledgePathError

if TYPE_CHECKING:
    from deskwork.graph.config.schema import TimeoutConfig

__all__ = ["FileSystemKnowledgeLoader", "KnowledgeLoader"]


class KnowledgeLoader(ABC):
    """Reads knowledge modules named by references relative to a knowledge root."""

    @abstractmethod
    async def load_module(self, module_ref: str) -> str:
        """The text of ``module_ref``.

        Raises:
            KnowledgePathError: The reference points outside the knowledge root.
            KnowledgeLoadError: The module cannot be read.
        """

    @abstractmethod
    def resolve_module_path(self, module_ref: str) -> Path:
        """Where ``module_ref`` lives; raises ``KnowledgePathError`` if outside the root."""


def check_relative_ref(module_ref: str) -> PurePosixPath:
    """``module_ref`` as a relative path with no ``..``; raises ``KnowledgePathError`` otherwise.

    This is the purely lexical half of containment; symlinks are checked by the loader.
    """
    if not module_ref or not module_ref.strip():
        raise KnowledgePathError("empty knowledge module path")
    if "\x00" in module_ref:
        raise KnowledgePathError(f"knowledge module path contains a NUL byte: {module_ref!r}")
    posix = PurePosixPath(module_ref.replace("\\", "/"))
    if posix.is_absolute() or PureWindowsPath(module_ref).anchor:
        raise KnowledgePathError(f"absolute knowledge module path refused: {module_ref!r}")
    if ".." in posix.parts:
        raise KnowledgePathError(f"knowledge module path may not contain '..': {module_ref!r}")
    return posix


class FileSystemKnowledgeLoader(KnowledgeLoader):
    """Reads UTF-8 modules from files under ``base_dir``.

    Args:
        base_dir: The knowledge root (e.g. ``"llm_resources"``).
        timeout_config: Its ``file_io_seconds`` bounds each file read (``None``: no limit).
        encoding: The files' text encoding.
    """

    def __init__(
        self,
        base_dir: str | Path,
        *,
        timeout_config: TimeoutConfig | None = None,
        encoding: str = "utf-8",
    ) -> None:
        self._base_dir = Path(base_dir)
        self._file_io_seconds = timeout_config.file_io_seconds if timeout_config else None
        self._encoding = encoding

    @property
    def base_dir(self) -> Path:
        """The knowledge root as given."""
        return self._base_dir

    def resolve_module_path(self, module_ref: str) -> Path:
        """The real path of ``module_ref``, symlinks resolved, checked to be inside ``base_dir``."""
        relative = check_relative_ref(module_ref)
        root = self._base_dir.resolve()
        resolved = (root / Path(*relative.parts)).resolve()
        if not resolved.is_relative_to(root):
            raise KnowledgePathError(
                f"knowledge module {module_ref!r} resolves outside the knowledge root {root}"
            )
        return resolved

    async def load_module(self, module_ref: str) -> str:
        """The text of ``module_ref``, read in a worker thread within ``file_io_seconds``."""
        path = self.resolve_module_path(module_ref)
        try:
            async with asyncio.timeout(self._file_io_seconds):
                return await asyncio.to_thread(self._read, path)
        except TimeoutError as exc:
            raise KnowledgeLoadError(
                f"reading knowledge module {module_ref!r} timed out "
                f"after {self._file_io_seconds}s (file_io_seconds)"
            ) from exc
        except (OSError, UnicodeDecodeError) as exc:
            # strerror, not str(exc): the message may reach the model; keep host paths out.
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
            raise KnowledgeLoadError(
                f"cannot read knowledge module {module_ref!r}: {type(exc).__name__}: {reason}"
            ) from exc

    def _read(self, path: Path) -> str:
        if not path.is_file():
            if not path.exists():
                raise FileNotFoundError(f"no such file: {path.name}")
            raise IsADirectoryError(f"not a regular file: {path.name}")
        return path.read_text(encoding=self._encoding)

    def __repr__(self) -> str:
        return f"FileSystemKnowledgeLoader(base_dir={str(self._base_dir)!r})"
