"""Small helpers used across deskwork: ids, clocks, JSON conversion, file encoding."""

from __future__ import annotations

import base64
import dataclasses
import math
import os
import pickle
from collections.abc import Callable, Iterable, Mapping
from contextvars import ContextVar
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeGuard

from pydantic import BaseModel
from pydantic_core import PydanticSerializationError

from deskwork.exceptions import ConfigurationError

__all__ = [
    "JSON_ATOMS",
    "KNOWN_JSON",
    "check_seconds",
    "encode_file",
    "escape_surrogates",
    "is_integer",
    "is_items",
    "is_number",
    "model_json",
    "nan_as_null",
    "new_id",
    "picklable",
    "to_jsonable",
    "utc_now",
]

_EXTRA_MIME = {
    ".md": "text/markdown",
    ".csv": "text/csv",
    ".docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    ".xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    ".webp": "image/webp",
    ".mp3": "audio/mpeg",
    ".m4a": "audio/mp4",
    ".wav": "audio/wav",
}


JSON_ATOMS = frozenset({str, int, float, bool, type(None)})
"""The types of JSON's own atoms: a value of one is its own JSON value and its own copy."""


def new_id() -> str:
    """Return a random 32-character hex identifier (128 random bits)."""
    return os.urandom(16).hex()


def utc_now() -> datetime:
    """Return the current time as a timezone-aware UTC datetime."""
    return datetime.now(UTC)


def to_jsonable(value: Any) -> Any:
    """Convert models, dataclasses and containers into JSON-compatible values.

    A dict's keys become texts (``str(key)``). Two keys of one dict that become the same
    text (``1`` and ``"1"``) are refused, not merged: one of the two values would be lost
    without a word. A model is dumped by Pydantic (``model_dump(mode="json")``), whose own
    rules apply inside it.

    Raises:
        ValueError: two keys of a dict become the same text; the error names them.
    """
    if value is None or isinstance(value, str | int | float | bool):
        return value
    if isinstance(value, BaseModel):
        try:
            return value.model_dump(mode="json")
        except PydanticSerializationError:  # a field JSON cannot hold: convert field by field
            return to_jsonable(value.model_dump())
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return to_jsonable(dataclasses.asdict(value))
    if isinstance(value, dict):
        converted = {str(k): to_jsonable(v) for k, v in value.items()}
        if len(converted) < len(value):
            raise ValueError(colliding_keys(value) or "two keys of one dict are one JSON key")
        return converted
    if isinstance(value, list | tuple | set | frozenset):
        return [to_jsonable(v) for v in value]
    if isinstance(value, datetime):
        return value.isoformat()
    import json  # loaded by the first value that needs it, not with deskwork

    return json.loads(json.dumps(value, default=str))


def colliding_keys(value: dict[Any, Any], text_of: Callable[[Any], str] = str) -> str | None:
    """What :func:`to_jsonable` says of a dict two of whose keys become the same text
    (``1`` and ``"1"``), naming them; ``None`` if no two do. ``text_of`` is a key's text:
    ``str`` (:func:`to_jsonable`'s), or the stores' (``True`` is ``"true"`` there)."""
    seen: dict[str, Any] = {}
    for key in value:
        text = text_of(key)
        if text in seen:
            first, second = (repr(k)[:80] for k in (seen[text], key))
            return (
                f"the keys {first} and {second} of one dict are both the JSON key"
                f" {text[:80]!r}: one of their values would be lost; give them distinct keys"
            )
        seen[text] = key
    return None


def nan_as_null(value: Any) -> Any:
    """``value`` (JSON values) with NaN and the infinities as ``None``, as pydantic-core writes
    them (``json.dumps`` writes them bare, ``NaN``, which is not JSON)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {key: nan_as_null(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [nan_as_null(item) for item in value]
    return value


KNOWN_JSON: ContextVar[tuple[BaseModel, str] | None] = ContextVar(
    "deskwork_known_json", default=None
)
"""A model and its ``model_dump_json()`` text, set while a caller that has the text hands
the model to a store (the desk, with a run's end state: :func:`model_json` gives the text
back instead of dumping the model again)."""


def model_json(model: BaseModel) -> str:
    """``model.model_dump_json()``, or the text :data:`KNOWN_JSON` holds for ``model``."""
    known = KNOWN_JSON.get()
    if known is not None and known[0] is model:
        return known[1]
    return model.model_dump_json()


def encode_file(file_path: str | Path, mime_type: str | None = None) -> str:
    """Read a local file and return it as a base64 ``data:`` URL.

    The MIME type is guessed from the file extension unless ``mime_type`` is given.

    Raises:
        FileNotFoundError: the path does not exist or is not a file.
    """
    path = Path(file_path)
    if not path.is_file():
        raise FileNotFoundError(f"encode_file: no such file: {path}")
    if mime_type is None:
        import mimetypes  # lazily: only file parts need it

        mime_type = _EXTRA_MIME.get(path.suffix.lower()) or mimetypes.guess_type(path.name)[0]
    encoded = base64.b64encode(path.read_bytes()).decode("ascii")
    return f"data:{mime_type or 'application/octet-stream'};base64,{encoded}"


def escape_surrogates(text: str) -> str:
    """``text`` as UTF-8 can carry it: a lone surrogate (``"\\ud800"``, which a Python string
    may hold, from a cut emoji in a model's JSON say, and UTF-8 cannot encode) written as its
    escape ``\\ud800``, which a JSON reader turns back into it; any other text returned as it
    is (the common case: an ASCII flag read, no walk over the text)."""
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text


def picklable(value: Any) -> bool:
    """Whether ``value`` pickles (a class: whether pickle finds it by its module and name)."""
    try:
        pickle.dumps(value)
    except Exception:  # PicklingError, or what an object's own reduction raises
        return False
    return True


def is_items(value: Any) -> bool:
    """Whether ``value`` is a collection of items (a list, tuple, set, generator ...): an
    iterable that is not a text, bytes or a mapping, which would be read as their letters,
    bytes or keys."""
    return isinstance(value, Iterable) and not isinstance(value, str | bytes | Mapping)


def is_number(value: Any) -> TypeGuard[float]:
    """Whether ``value`` is a real number: an ``int`` or a ``float``, not a ``bool``
    (``float`` to the type checker, which takes an ``int`` for one)."""
    return isinstance(value, int | float) and not isinstance(value, bool)


def is_integer(value: Any) -> TypeGuard[int]:
    """Whether ``value`` is an ``int``, not a ``bool`` (a count, a limit, a priority)."""
    return isinstance(value, int) and not isinstance(value, bool)


def check_seconds(value: Any, what: str) -> float | None:
    """``value``, a limit in seconds, when it is ``None`` (no limit) or a finite number above
    0 (kept as given: 30 stays 30 in messages).

    Raises:
        ConfigurationError: anything else (a bool, a text, 0, a negative number, NaN or
            infinity: a wait on infinity overflows the clocks below), naming ``what``.
    """
    if value is None or (is_number(value) and 0 < value < math.inf):
        return value
    raise ConfigurationError(
        f"{what} must be a number of seconds above 0, or None for no limit, got {value!r}"
    )
