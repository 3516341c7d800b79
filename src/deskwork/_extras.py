"""Optional dependencies: import one, or say which extra installs it.

Modules that need an optional package call :func:`require` at the point of use, never at
import time, so ``import deskwork`` keeps working without any extra installed::

    chromadb = require("chromadb", "vector")
"""

from __future__ import annotations

import importlib
from types import ModuleType

from deskwork.exceptions import MissingExtraError

__all__ = ["require"]


def require(module: str, extra: str) -> ModuleType:
    """Import ``module``, or raise an error that names the extra to install.

    Args:
        module: dotted module name, e.g. ``"chromadb"``.
        extra: the deskwork extra that installs it, e.g. ``"vector"``.

    Returns:
        The imported module.

    Raises:
        MissingExtraError: the module, or a package it needs, is not installed; the message
            names the missing package and says ``pip install 'deskwork[<extra>]'``.
        ImportError: the package is installed but broken (not a missing module).
    """
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        missing = (exc.name or module).split(".", 1)[0]
        raise MissingExtraError(missing, extra) from exc
