"""Lazy exports of a package (PEP 562): a public name loads its module on first use.

A package lists its names in ``__all__``, the module of each in a ``_LAZY`` table, and the
imports again under ``if TYPE_CHECKING:`` for type checkers and editors; then::

    from deskwork._lazy import lazy_exports as _lazy_exports  # not a public name

    __getattr__, __dir__ = _lazy_exports(__name__, _LAZY)

So ``import deskwork`` (or ``import deskwork.core``) loads nothing but the package itself,
and ``from deskwork import Desk`` loads only what the desk needs.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (see deskwork/__init__)
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any

__all__ = ["lazy_exports"]


def lazy_exports(
    package: str, table: Mapping[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``__getattr__`` and ``__dir__`` for ``package``, whose names ``table`` maps to the
    modules that define them."""

    def __getattr__(name: str) -> Any:
        module = table.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        __import__(module)  # importlib.import_module, without importing importlib
        value = getattr(sys.modules[module], name)
        setattr(sys.modules[package], name, value)  # later look-ups find it directly
        return value

    def __dir__() -> list[str]:
        return sorted(set(vars(sys.modules[package])) | set(table))

    return __getattr__, __dir__
