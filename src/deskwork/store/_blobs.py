"""Large texts are stored once, by content hash, and referenced wherever they repeat.

A run's input appears in its record, in its job and as the first user message of its
state; a big tool result appears in the state and in events. The run stores move every
string of at least ``BLOB_MIN_CHARS`` characters into a ``blobs`` table keyed by its
SHA-256 and keep a reference (``"\\x00blob:<hex>"``) in its place, so a 10 MB input costs
10 MB, not 30. A user string that itself starts with ``"\\x00"`` is escaped with a second
``"\\x00"``. No single stored text may exceed ``MAX_STORED_CHARS`` (a clear
:class:`StoreError` says so).
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Callable, Iterable, Mapping
from typing import Any, TypeVar

from pydantic import BaseModel
from pydantic_core import PydanticSerializationError, to_json

from deskwork.store._errors import StoreError, unstorable_text
from deskwork.utils import colliding_keys, escape_surrogates, model_json, to_jsonable

__all__ = [
    "BLOB_MIN_CHARS",
    "MAX_STORED_CHARS",
    "MAX_STORED_DEPTH",
    "DataTooDeep",
    "Fetch",
    "KeysCollide",
    "check_sizes",
    "check_text",
    "dump_model",
    "escape_text",
    "is_plain_json",
    "json_text",
    "load_model",
    "pack_json",
    "pack_jsonable",
    "pack_model",
    "packs_unchanged",
    "pauses_at",
    "unescape_text",
    "unpack_json",
    "unpack_value",
]

BLOB_MIN_CHARS = 16 * 1024
"""Strings at least this long are stored once in the blob table."""
MAX_STORED_CHARS = 32 * 1024 * 1024
"""The longest single text (an input, a message, a tool result) a run store accepts."""
MAX_STORED_DEPTH = 100
"""The deepest nesting of lists and dicts in a job's input or a tool result's data that a run
store accepts: the stores' JSON readers and writers stop near 200 levels (pydantic-core's
reader at about 200, its writer at 255), and a run's state holds such data a few levels down
(a SQLite store failed to save a run whose input nested 255 deep, the in-memory store kept
one nested 200 deep that it could not read back)."""


class DataTooDeep(StoreError):
    """Data nested deeper than :data:`MAX_STORED_DEPTH` (or containing itself)."""


class KeysCollide(StoreError):
    """A dict two of whose keys are one JSON key (``1`` and ``"1"``): one value would be lost."""


_REF = "\x00blob:"
_SCALARS = frozenset({str, int, bool, type(None)})  # plain JSON without a check of its own
_ESCAPED_NUL = "\\u0000"  # how JSON writes "\x00" (the only way a string can start with it)
Fetch = Callable[[Iterable[str]], Mapping[str, str]]
"""Loads blobs by hash (a store's ``SELECT ... WHERE hash IN (...)``)."""
_M = TypeVar("_M", bound=BaseModel)


def _split(value: Any, blobs: dict[str, str]) -> Any:
    if isinstance(value, str):
        if len(value) >= BLOB_MIN_CHARS:
            if len(value) > MAX_STORED_CHARS:
                raise StoreError(
                    f"a text of {len(value):,} characters is larger than a run store keeps"
                    f" ({MAX_STORED_CHARS:,}): pass large data by reference (a file path or"
                    " URL) instead of in a job input, message or tool result"
                )
            data = _as_raw_text(value)
            if data is not None:
                digest = hashlib.sha256(data).hexdigest()
                blobs[digest] = value
                return _REF + digest
        return "\x00" + value if value.startswith("\x00") else value
    if isinstance(value, dict):
        return {key: _split(item, blobs) for key, item in value.items()}
    if isinstance(value, list):
        return [_split(item, blobs) for item in value]
    return value


def _as_raw_text(value: str) -> bytes | None:
    """``value`` in UTF-8 if a database text column can hold it as it is, else ``None``: a
    NUL or a lone surrogate (PostgreSQL refuses both) keeps the text inside the JSON, escaped."""
    if "\x00" in value:
        return None
    try:
        return value.encode("utf-8")
    except UnicodeEncodeError:
        return None


def _refs(value: Any, found: set[str]) -> None:
    if isinstance(value, str):
        if value.startswith(_REF):
            found.add(value[len(_REF) :])
    elif isinstance(value, dict):
        for item in value.values():
            _refs(item, found)
    elif isinstance(value, list):
        for item in value:
            _refs(item, found)


def _join(value: Any, blobs: Mapping[str, str]) -> Any:
    if isinstance(value, str):
        if value.startswith(_REF):
            text = blobs.get(value[len(_REF) :])
            if text is None:
                raise StoreError(f"a stored text is missing from the blob table ({value[1:]})")
            return text
        return value[1:] if value.startswith("\x00\x00") else value
    if isinstance(value, dict):
        return {key: _join(item, blobs) for key, item in value.items()}
    if isinstance(value, list):
        return [_join(item, blobs) for item in value]
    return value


def pauses_at(stored_state: str | None, action_id: str) -> bool:
    """Whether the run state :func:`pack_model` stored as ``stored_state`` waits for the
    action ``action_id`` (its ``pending_action``); compared in stored form, so no blob is
    read (a long id is the same reference by its hash). A damaged text waits for nothing."""
    try:
        action = json.loads(stored_state or "null")["pending_action"]
        return isinstance(action, dict) and action.get("action_id") == _split(action_id, {})
    except (ValueError, TypeError, KeyError, StoreError):
        return False


def pack_json(value: Any, blobs: dict[str, str]) -> str | None:
    """JSON text of a JSON-able ``value`` with its large strings moved into ``blobs``."""
    if value is None:
        return None
    return _pack(value, blobs, plain=is_plain_json(value))


def pack_jsonable(value: Any, blobs: dict[str, str]) -> str | None:
    """:func:`pack_json` of ``to_jsonable(value)`` (which changes nothing in plain JSON)."""
    if value is None:
        return None
    if is_plain_json(value):  # one walk over the value, not one here and one in pack_json
        return _pack(value, blobs, plain=True)
    return pack_json(to_jsonable(value), blobs)


def _pack(value: Any, blobs: dict[str, str], *, plain: bool) -> str:
    """:func:`pack_json` of a value that is not ``None``; ``plain``: ``is_plain_json(value)``."""
    text = _dumps(value, plain=plain)
    if packs_unchanged(text):
        return text
    return json.dumps(_split(value, blobs), default=str)


def is_plain_json(value: Any) -> bool:
    """Whether ``value`` is made of JSON's own types only: ``dict`` with ``str`` keys,
    ``list``, ``str``, ``int``, ``bool``, finite ``float`` and ``None`` (not subclasses)."""
    kind = type(value)
    if kind in _SCALARS:
        return True
    if kind is float:
        return math.isfinite(value)
    if kind is dict:
        for key, item in value.items():
            if type(key) is not str or (type(item) not in _SCALARS and not is_plain_json(item)):
                return False
        return True
    if kind is list:
        return all(type(item) in _SCALARS or is_plain_json(item) for item in value)
    return False


def _dumps(value: Any, *, plain: bool) -> str:
    """``json.dumps(value, default=str)``'s value; written by pydantic-core's encoder (several
    times faster, more compact) when ``value`` is plain JSON (``plain``: whether
    ``is_plain_json(value)``), which both encode alike."""
    if plain:
        try:
            return to_json(value).decode()
        except PydanticSerializationError:  # a lone surrogate, which json.dumps escapes
            return json.dumps(value, default=str)
    return json.dumps(value, default=str)


def pack_model(model: BaseModel | None, blobs: dict[str, str]) -> str | None:
    """:func:`pack_json` of ``model.model_dump(mode="json")``, from Pydantic's own (faster)
    JSON text whenever that needs no change (the same value, written more compactly)."""
    if model is None:
        return None
    try:
        text = model_json(model)  # the desk's own dump of a run's end state
    except PydanticSerializationError:  # e.g. a lone surrogate, which json.dumps escapes
        text = ""
    if text and packs_unchanged(text):
        return text
    return pack_json(model.model_dump(mode="json"), blobs)


def json_text(value: Any) -> str:
    """``json.dumps(value, ensure_ascii=False)`` (a memory store's value, searchable as written:
    ``"é"``, not ``"\\u00e9"``), with a lone surrogate (``"\\ud800"``, which UTF-8 cannot
    encode, so no database can be sent it) written as its JSON escape; ``json.loads`` gives
    the value back either way."""
    # a surrogate is only ever inside a JSON string, where "\\ud800" is its escape
    return escape_surrogates(json.dumps(value, ensure_ascii=False))


def dump_model(model: BaseModel) -> str:
    """``model.model_dump_json()`` (a session's message as stored); one with a lone surrogate
    in a text (``"\\ud800"``, which pydantic-core's JSON cannot write) as ``json.dumps``
    writes its JSON dump, escaped (read back by :func:`load_model`)."""
    try:
        return model.model_dump_json()
    except PydanticSerializationError:
        return json.dumps(model.model_dump(mode="json"))


def load_model(kind: type[_M], text: str) -> _M:
    """The ``kind`` :func:`dump_model` stored as ``text`` (a ``ValueError`` if damaged)."""
    try:
        return kind.model_validate_json(text)
    except ValueError:  # an escaped lone surrogate, which pydantic-core's JSON cannot read
        return kind.model_validate(json.loads(text))


def packs_unchanged(text: str) -> bool:
    """Whether ``_split`` would change nothing in the value ``text`` encodes.

    JSON text is never shorter than any string in it, and a string starting with ``"\\x00"``
    shows as ``\\u0000``; so a short text without it holds no string to move or escape (the
    common case: one ``json.dumps`` and no walk over the value).
    """
    return len(text) < BLOB_MIN_CHARS and _ESCAPED_NUL not in text


_CONTAINERS = (dict, list, tuple)


def check_sizes(value: Any, _depth: int = 0) -> None:
    """Raise the size error if any string in ``value`` is longer than ``MAX_STORED_CHARS``,
    and :class:`DataTooDeep` if its lists and dicts nest deeper than ``MAX_STORED_DEPTH``
    (data that contains itself too: it never ends)."""
    if isinstance(value, str):
        if len(value) > MAX_STORED_CHARS:
            _split(value, {})
    elif isinstance(value, _CONTAINERS):
        if _depth >= MAX_STORED_DEPTH:
            raise DataTooDeep(
                f"data nested more than {MAX_STORED_DEPTH} levels deep, or containing itself,"
                " is deeper than a run store keeps: flatten it, or pass it by reference"
            )
        if isinstance(value, dict):
            _check_dict(value, _depth + 1)
        else:
            for item in value:
                check_sizes(item, _depth + 1)


def _check_dict(value: dict[Any, Any], depth: int) -> None:
    """:func:`check_sizes` of a dict's values, and :class:`KeysCollide` if two of its keys
    are one JSON key (a store writes both, and reads one value back)."""
    texts = True
    for key, item in value.items():
        if type(key) is not str:
            texts = False
        check_sizes(item, depth)
    if not texts and (problem := colliding_keys(value, _json_key)):
        raise KeysCollide(problem)


def _json_key(key: Any) -> str:
    """The JSON key a store writes for ``key`` (pydantic-core's: ``True`` is ``"true"``, an
    enum member its value), which ``str(key)`` is not always."""
    if type(key) is str:
        return key
    try:
        return str(next(iter(json.loads(to_json({key: None})))))
    except (PydanticSerializationError, TypeError, ValueError):  # a key it cannot write
        return str(key)


def check_text(text: str | None) -> str | None:
    """A plain text column's value (a run's output, kept as it is), checked against the limit."""
    if text is not None and len(text) > MAX_STORED_CHARS:
        _split(text, {})  # raises the size error
    return text


def escape_text(text: str | None) -> tuple[str | None, bool | None]:
    """A run's output as a PostgreSQL text column holds it (checked against the limit), and
    whether it is escaped: the text as it is and ``None``, or, when it holds a character
    such a column cannot hold (a NUL, a lone surrogate: ``unstorable_text``), that text with
    Python's backslash escapes (ASCII: ``\\x00``, ``\\ud800``, ``\\xe9``, ``\\\\``) and
    ``True``. The escapes give back every code unit as it was (JSON's would join two lone
    halves of a pair into one character). So a text without one is stored as it was before
    the flag existed, and a row stored then reads as it did."""
    text = check_text(text)
    if text is None or not unstorable_text(text):
        return text, None
    return text.encode("unicode_escape").decode("ascii"), True


def unescape_text(stored: str | None, escaped: bool | None) -> str | None:
    """The text :func:`escape_text` stored (a ``ValueError`` if an escaped one is damaged:
    ``UnicodeDecodeError`` is one)."""
    if not escaped or stored is None:
        return stored
    return stored.encode("ascii").decode("unicode_escape")


def unpack_json(stored: str | None, fetch: Fetch) -> Any:
    """The value :func:`pack_json` stored."""
    if not stored:
        return None
    return unpack_value(json.loads(stored), fetch)


def unpack_value(value: Any, fetch: Fetch) -> Any:
    """The value whose packed form (:func:`pack_json`'s text) decoded to ``value``."""
    found: set[str] = set()
    _refs(value, found)
    return _join(value, fetch(found) if found else {})
