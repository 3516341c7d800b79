"""What a command names as ``MODULE:ATTR``: the desk of ``deskwork serve`` and ``deskwork
worker``, the cases, runner and desk of ``deskwork eval``."""

from __future__ import annotations

import importlib
import inspect
import os
import sys
from typing import TYPE_CHECKING, Any

from deskwork.core.redact import describe_exception
from deskwork.exceptions import ConfigurationError

if TYPE_CHECKING:
    from deskwork.runtime.desk import Desk

__all__ = ["load_attribute", "load_desk"]


def load_desk(target: str, *, durable: bool = False) -> Desk:
    """The desk at ``MODULE:ATTR`` (a Desk, or a function of no arguments returning one),
    imported from the working directory or ``PYTHONPATH``; with ``durable``, it must be a
    ``Desk(durable=True)``.

    Raises:
        ConfigurationError: the target is malformed, does not import, names nothing, names
            a function that needs arguments or raises when called, or is not a (durable)
            desk.
    """
    from deskwork.runtime.desk import Desk

    value = load_attribute(target)
    if not isinstance(value, Desk) and callable(value):
        value = _call_factory(target, value)
    if durable and not (isinstance(value, Desk) and value.durable):
        raise ConfigurationError(f"{target} is not a Desk(durable=True)")
    if not isinstance(value, Desk):
        raise ConfigurationError(f"{target} is a {type(value).__name__}, not a deskwork Desk")
    return value


def load_attribute(target: str) -> Any:
    """The object at ``MODULE:ATTR`` (``ATTR`` may be dotted), the module imported from the
    working directory or ``PYTHONPATH``.

    Raises:
        ConfigurationError: the target is malformed, its module does not import (or raises
            while it is imported), or it names nothing.
    """
    module_name, _, attr = target.partition(":")
    if not module_name or not attr:
        raise ConfigurationError(f"expected MODULE:ATTR (for example app:desk), not {target!r}")
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())  # like `python -m`: modules of the current directory
    try:
        value: Any = importlib.import_module(module_name)
    except Exception as exc:  # not found, or the module raised while it was imported
        raise ConfigurationError(
            f"cannot import {module_name!r}: {describe_exception(exc)}{_where(exc)}"
        ) from exc
    for part in attr.split("."):
        if not hasattr(value, part):
            raise ConfigurationError(f"{module_name!r} has no attribute {attr!r}")
        value = getattr(value, part)
    return value


def _call_factory(target: str, factory: Any) -> Any:
    """What the desk factory at ``target`` returns; one that raises is a one-line error with
    where it raised, like a module that raises on import (it was a traceback)."""
    _check_no_arguments(target, factory)
    try:
        return factory()
    except Exception as exc:
        raise ConfigurationError(
            f"{target} raised: {describe_exception(exc)}{_where(exc)}"
        ) from exc


def _where(exc: Exception) -> str:
    """Where an app module (or its desk factory) raised (its file and line: the one-line
    error replaces the traceback), or ``""`` for a module that is missing or does not parse
    (the text says which, and a syntax error's says where)."""
    import traceback

    frames = traceback.extract_tb(exc.__traceback__)
    if isinstance(exc, ImportError | SyntaxError) or not frames:
        return ""
    return f" (at {frames[-1].filename}, line {frames[-1].lineno})"


def _check_no_arguments(target: str, function: Any) -> None:
    """A function the command calls with no arguments must take none (calling
    ``json:loads`` failed with a ``TypeError`` traceback)."""
    try:
        inspect.signature(function).bind()
    except TypeError:
        raise ConfigurationError(
            f"{target} needs arguments: name a Desk, or a function of no arguments returning one"
        ) from None
    except ValueError:  # no signature to read (a builtin): let the call say
        return
