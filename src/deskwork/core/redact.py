"""Keep secrets out of events, stores and logs."""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import cache, lru_cache
from typing import Any, Literal, TypeVar, overload

from pydantic import BaseModel
from pydantic_core import PydanticSerializationError

from deskwork.utils import to_jsonable

__all__ = [
    "REDACTED",
    "describe_exception",
    "exception_tells_secrets",
    "exception_text",
    "hide_header_lines",
    "hide_values",
    "known_credentials",
    "linked_exceptions",
    "may_hold_secrets",
    "redact",
    "redact_exception",
    "redact_headers",
    "redact_log_text",
    "redact_model",
    "redact_model_json",
    "redact_text",
    "redacted_preview",
    "regrouped",
    "rewrite_exception",
    "secret_header",
    "traceback_text",
]

M = TypeVar("M", bound=BaseModel)
E = TypeVar("E", bound=BaseException)

REDACTED = "<redacted>"
_SECRET_KEYS = re.compile(
    r"(api[_-]?key|authorization|auth[_-]?token|access[_-]?token|secret|password|passwd)",
    re.IGNORECASE,
)
# every spelling _SECRET_KEYS matches, for plain substring tests (far faster than the regex)
_SECRET_KEY_WORDS = (
    *(
        f"{head}{sep}{tail}"
        for head, tail in (("api", "key"), ("auth", "token"), ("access", "token"))
        for sep in ("_", "-", "")
    ),
    "authorization",
    "secret",
    "password",
    "passwd",
)
# the same test as ``any(word in lowered for word in _SECRET_KEY_WORDS)``, in one scan; the
# words as a prefix tree, which scans a long text (a run's state as JSON) twice as fast as
# their plain alternation (tests/core/test_redact_key_words.py checks the two agree)
_SECRET_KEY_WORD = re.compile(
    r"a(?:pi[_-]?key|uth(?:orization|[_-]?token)|ccess[_-]?token)|secret|passw(?:or)?d"
)


_KEY_PATTERN = r"(?:api[_-]?key|authorization|auth[_-]?token|access[_-]?token|secret|passw(?:or)?d)"
# secrets named by a key inside text: JSON/dict pairs ("password": "x", 'api_key': 'x') and
# assignments (password=x, API_KEY=x); bare prose ("the secret: ...") is left alone
_SECRET_PAIRS = (
    rf"""(["']\w*{_KEY_PATTERN}\w*["']\s*:\s*)("[^"]*"|'[^']*'|[^\s,;}}]+)"""
    rf"""|(\b\w*{_KEY_PATTERN}\w*\s*=\s*)("[^"]*"|'[^']*'|[^\s,;&"']+)"""
)
# the password of a URL's user info (postgresql://user:PASSWORD@host/db, redis://:PASSWORD@host)
_URL_PASSWORD = r"(\b[A-Za-z][A-Za-z0-9+.-]*://[^\s/@:]*:)([^\s/@]+)(?=@)"
_SECRET_VALUES = (
    r"(Bearer\s+[A-Za-z0-9._~+/=-]{6,}|\bsk-[A-Za-z0-9_-]{8,}|\bsk-ant-[A-Za-z0-9_-]{8,})"
)


@cache
def _replacers() -> tuple[re.Pattern[str], re.Pattern[str], re.Pattern[str]]:
    """The patterns of :func:`redact_text`: compiled by the first text that may hold a
    secret, not at import (``_SECRET_PAIRS`` alone takes milliseconds to compile, and most
    runs never meet a secret)."""
    return (
        re.compile(_SECRET_PAIRS, re.IGNORECASE),
        re.compile(_URL_PASSWORD),
        re.compile(_SECRET_VALUES),
    )


def _pair(match: re.Match[str]) -> str:
    prefix = match.group(1) or match.group(3)
    value = match.group(2) or match.group(4)
    quote = value[0] if value[:1] in {'"', "'"} else ""
    return f"{prefix}{quote}{REDACTED}{quote}"


def redact_text(text: str) -> str:
    """Replace bearer tokens, provider keys, key-named values (``"password": "..."``), the
    password of a URL (``postgresql://user:<redacted>@host/db``); in a text that holds one of
    those, or a key word, the value of a credential header's line too (``Authorization:
    <redacted>``). A header's line in a text with none of them (``Cookie: a=b``) is
    :func:`redact_log_text`'s: this one is the events' hot path."""
    if not may_hold_secrets(text):
        return text
    pairs, url_password, values = _replacers()
    if "://" in text:
        text = url_password.sub(lambda m: m.group(1) + REDACTED, text)
    return _header_lines(pairs.sub(_pair, values.sub(REDACTED, text)))


_SECRET_HEADER_NAMES = frozenset(
    {"authorization", "proxy-authorization", "x-api-key", "api-key", "cookie", "set-cookie"}
)
_SECRET_HEADER_WORD = re.compile(r"token|secret|key|passw|auth")
# a credential header's line in a text (an error, a log record): a well-known name anywhere
# (a word of its own), a generic credential name (x-...-key/token/secret, ...-api-key,
# ...-token, ...-authorization) only where a header starts: a line's start, or after "{",
# ",", ";", "(", "[", a quote or a colon ("rejected: X-Gateway-Key: ..."); not any "*-key"
# (partition-key: tenant_42, sort-key: created_at, token-count: 1532 are not credentials)
_KNOWN_HEADER = r"(?<![\w-])[\"']?(?:(?:proxy-)?authorization|(?:set-)?cookie|(?:x-)?api-key)"
_GENERIC_HEADER = (
    r"(?:^|(?<=[{,;(\[\"':]))[ \t]*[\"']?"
    r"(?:(?!x-ratelimit-)x-(?:[a-z0-9]+-)*(?:key|token|secret|auth)"
    r"|(?:[a-z0-9]+-)+(?:api-key|token|authorization))"
)
# an auth scheme, taken from this list only (any word would eat prose: "key: user_id (see")
_AUTH_SCHEME = (
    r"(?:basic|bearer|token|digest|api-?key|key|negotiate|ntlm|oauth|dpop|hoba|mutual"
    r"|aws4-hmac-sha256|ssws)[ \t]+"
)
_HEADER_PIECE = r"""(?:[^\s,;"']|(?<==)"[^"\n]*")+"""  # a quoted auth-param: realm="r"
_HEADER_LINE = (
    rf"({_KNOWN_HEADER}|{_GENERIC_HEADER})([\"']?[ \t]*:[ \t]*[\"']?)"
    # the value: a scheme and its credential (Token abc, Digest a="1", b="2"), cookies (a=1; b=2)
    rf"((?:{_AUTH_SCHEME})?{_HEADER_PIECE}(?:[;,][ \t]*(?=[\w.-]+=){_HEADER_PIECE})*)"
)


def secret_header(name: object) -> bool:
    """Whether an HTTP header of this ``name`` (text or bytes, any case) carries a credential:
    ``Authorization``, ``Proxy-Authorization``, ``X-Api-Key``, ``Api-Key``, ``Cookie``,
    ``Set-Cookie``, and any name with ``token``, ``secret``, ``key``, ``passw`` or ``auth``
    in it (``X-Gateway-Key``, ``Private-Token``) but a rate limit's
    (``x-ratelimit-remaining-tokens``)."""
    if isinstance(name, bytes):
        name = name.decode("latin-1")
    if not isinstance(name, str):
        return False
    lowered = name.lower()
    if lowered in _SECRET_HEADER_NAMES:
        return True
    return "ratelimit" not in lowered and _SECRET_HEADER_WORD.search(lowered) is not None


def redact_headers(headers: Any) -> Any:
    """``headers`` (a mapping, or a list of ``(name, value)`` pairs, as ``multi_items()``
    gives) as a log or a store may keep them: the value of each header named like a
    credential (:func:`secret_header`) replaced, whatever its shape (``Token abc``), the
    others redacted as any text (:func:`redact`). Anything else: :func:`redact` of it."""
    if isinstance(headers, Mapping):
        return {
            name: REDACTED if secret_header(name) else redact(value)
            for name, value in headers.items()
        }
    if isinstance(headers, list | tuple):
        return [_header_pair(item) for item in headers]
    return redact(headers)


def _header_pair(item: Any) -> Any:
    if not (isinstance(item, list | tuple) and len(item) == 2):
        return redact(item)
    value = REDACTED if secret_header(item[0]) else redact(item[1])
    return (item[0], value) if isinstance(item, tuple) else [item[0], value]


@cache
def _header_line() -> re.Pattern[str]:
    return re.compile(_HEADER_LINE, re.IGNORECASE | re.MULTILINE)


def _header_lines(text: str) -> str:
    """``text`` with the value of each credential header's line (``Cookie: a=b``) replaced."""
    if ":" not in text:
        return text
    return _header_line().sub(lambda m: m.group(1) + m.group(2) + REDACTED, text)


def redact_log_text(text: str) -> str:
    """:func:`redact_text` of ``text``, and the value of a credential header's line
    (``Cookie: a=b``, ``X-Gateway-Key: abc``) even in a text with no key word, in which
    :func:`redact_text` (the events' hot path) does not look for one: for the texts of an
    error, a traceback or a log record, which echo a request's headers."""
    return _header_lines(redact_text(text))


def hide_header_lines(value: Any) -> Any:
    """``value`` (a text, or JSON-like data holding texts: what an error keeps of a
    server's answer) with its credential headers' values replaced: in header lines
    (:func:`redact_log_text`'s) and in header dicts (:func:`redact_headers`'s)."""
    if isinstance(value, str):
        return _header_lines(value)
    if isinstance(value, dict):
        return {
            key: redact_headers(item) if _names_headers(key) else hide_header_lines(item)
            for key, item in value.items()
        }
    if type(value) in (list, tuple):
        return type(value)(hide_header_lines(item) for item in value)
    return value


_CREDENTIAL_ENV = re.compile(r"(KEY|TOKEN|SECRET|PASSWORD)$", re.IGNORECASE)
_MIN_CREDENTIAL = 8  # shorter values are too likely to be ordinary words


def known_credentials(
    given: Iterable[object] = (),
    *,
    env: Mapping[str, str] | None = None,
    headers: Mapping[str, str] | None = None,
) -> list[str]:
    """The credentials a caller holds, by value, for :func:`hide_values`: ``given``, the
    values of ``env`` whose names end like a key's (``OPENAI_API_KEY``, ``HF_TOKEN``) and of
    ``headers`` named like one (``X-Api-Key``, ``Authorization`` without its ``Bearer``).
    Each has 8 characters or more; the longest come first."""
    found = set(given)
    found.update(value for name, value in (env or {}).items() if _CREDENTIAL_ENV.search(name))
    for name, value in (headers or {}).items():
        if isinstance(value, str) and secret_header(name):
            found.add(value.split(" ", 1)[-1].strip())  # without an auth scheme
    keys = (k for k in found if isinstance(k, str) and len(k) >= _MIN_CREDENTIAL)
    return sorted(keys, key=len, reverse=True)


def hide_values(value: Any, secrets: Sequence[str]) -> Any:
    """``value`` (a text, or JSON-like data holding texts) with each of ``secrets`` replaced
    by :data:`REDACTED`: the exact credentials a caller knows (a server may echo one of any
    shape, which :func:`redact_text`'s patterns cannot spot)."""
    if not secrets:
        return value
    if isinstance(value, str):
        for secret in secrets:
            value = value.replace(secret, REDACTED)
        return value
    if isinstance(value, dict):
        return {key: hide_values(item, secrets) for key, item in value.items()}
    if type(value) in (list, tuple):
        return type(value)(hide_values(item, secrets) for item in value)
    return value


def rewrite_exception(exc: BaseException, rewrite: Callable[[Any], Any]) -> None:
    """Apply ``rewrite`` (:func:`redact`, say) to ``exc``'s arguments and to its text, list,
    tuple and dict attributes, in place: its type, status code and headers stay, so it is
    still classified and retried as before, and what it keeps of a server's answer (a
    ``body`` a durable desk pickles) is rewritten too. What ``rewrite`` leaves equal is left
    as it is (the same object): an error with nothing to hide is not touched."""
    args = tuple(rewrite(arg) for arg in exc.args)
    if any(new is not old and new != old for new, old in zip(args, exc.args, strict=True)):
        exc.args = args
    for name, value in list(getattr(exc, "__dict__", {}).items()):
        if isinstance(value, str | dict | list | tuple):
            new = rewrite(value)
            if new is value or new == value:
                continue
            with contextlib.suppress(AttributeError, TypeError):  # a read-only property
                setattr(exc, name, new)


def redact_exception(error: E) -> E:
    """Redact in place (:func:`rewrite_exception` with :func:`redact`) ``error`` and every
    exception linked to it (:func:`linked_exceptions`) whose text or notes (``add_note``)
    hold a secret: what a traceback of ``error`` shows once it leaves deskwork, in an
    application's own log or OpenTelemetry span (which records an exception passing through
    it, message, causes and all), and what a pickle of it keeps. Each keeps its type and
    traceback.

    Returns ``error``, or a copy of it when it is an ``ExceptionGroup`` whose own message
    held a secret (:func:`regrouped`: a group's message cannot be rewritten in place): raise
    or keep the returned one. Such a group linked to ``error`` is replaced where it is
    linked."""
    linked = linked_exceptions(error)
    for exc in linked:
        if exception_tells_secrets(exc):
            rewrite_exception(exc, redact)
    return regrouped(error, linked)


def regrouped(error: E, linked: list[BaseException] | None = None) -> E:
    """``error`` after :func:`rewrite_exception`, its ``ExceptionGroup`` s telling their
    rewritten message: a group's message (what ``str`` and a traceback show) is fixed when it
    is made, so a group whose first argument no longer is its message, or that holds such a
    group, is copied (its type, members, traceback, cause, context, notes and attributes)
    with the rewritten one, and the copy replaces it where it is linked (a cause, a context,
    an attribute, a member of a group). Returns the copy of ``error`` if it is one, else
    ``error`` itself; ``linked``: :func:`linked_exceptions` of ``error``, if known."""
    linked = linked_exceptions(error) if linked is None else linked
    copies: dict[int, BaseException] = {}
    for exc in linked:
        if isinstance(exc, BaseExceptionGroup):
            _group_copy(exc, copies)
    if not copies:
        return error
    for exc in [*linked, *copies.values()]:
        _relink(exc, copies)
    return copies.get(id(error), error)  # type: ignore[return-value]  # a copy: the same type


def _group_copy(group: BaseExceptionGroup[Any], copies: dict[int, BaseException]) -> Any:
    """``group``, or its copy (kept in ``copies`` by the group's id) when its message or a
    member group's changed."""
    if id(group) in copies:
        return copies[id(group)]
    members = [
        _group_copy(member, copies) if isinstance(member, BaseExceptionGroup) else member
        for member in group.exceptions
    ]
    message = group.args[0] if group.args and isinstance(group.args[0], str) else group.message
    same = all(new is old for new, old in zip(members, group.exceptions, strict=True))
    if message == group.message and same:
        return group
    # not type(group)(...): a subclass's __init__ may take other arguments
    copy = BaseExceptionGroup.__new__(type(group), message, members)
    copy.__dict__.update(group.__dict__)  # attributes, notes
    copy.__traceback__, copy.__cause__ = group.__traceback__, group.__cause__
    copy.__context__, copy.__suppress_context__ = group.__context__, group.__suppress_context__
    copies[id(group)] = copy
    return copy


def _relink(exc: BaseException, copies: dict[int, BaseException]) -> None:
    """Point ``exc``'s cause, context and exception attributes at the copies of the groups
    they name."""
    if exc.__cause__ is not None and id(exc.__cause__) in copies:
        exc.__cause__ = copies[id(exc.__cause__)]
    if exc.__context__ is not None and id(exc.__context__) in copies:
        exc.__context__ = copies[id(exc.__context__)]
    for name, value in list(getattr(exc, "__dict__", {}).items()):
        if isinstance(value, BaseException) and id(value) in copies:
            with contextlib.suppress(AttributeError, TypeError):  # a read-only property
                setattr(exc, name, copies[id(value)])


def linked_exceptions(error: BaseException) -> list[BaseException]:
    """``error`` and every exception linked to it: chained (``__cause__``, ``__context__``),
    grouped (an ``ExceptionGroup``'s members) or held in an attribute (LiteLLM's
    ``MidStreamFallbackError.original_exception``, whose text ends its own), each once."""
    seen: dict[int, BaseException] = {}
    pending: list[Any] = [error]
    while pending:
        exc = pending.pop()
        if not isinstance(exc, BaseException) or id(exc) in seen:
            continue
        seen[id(exc)] = exc
        held = getattr(exc, "__dict__", {}).values()
        pending += [exc.__cause__, exc.__context__, *_members(exc), *held]
    return list(seen.values())


def exception_tells_secrets(exc: BaseException) -> bool:
    """Whether a text ``exc`` carries (its message, arguments, attributes or notes, or those
    of an ``ExceptionGroup``'s members) holds anything :func:`redact_text` replaces
    (``True`` when its ``__str__`` raises)."""
    try:
        values = [str(exc), *exc.args, *vars(exc).values()]
    except Exception:
        return True
    texts = (
        text
        for value in values
        for text in (value if isinstance(value, list | tuple) else (value,))  # __notes__
    )
    if any(isinstance(text, str) and redact_text(text) != text for text in texts):
        return True
    return any(exception_tells_secrets(member) for member in _members(exc))


def _members(exc: BaseException) -> Sequence[BaseException]:
    """The exceptions an ``ExceptionGroup`` holds (a traceback prints them, a pickle keeps
    them); none for any other exception."""
    return exc.exceptions if isinstance(exc, BaseExceptionGroup) else ()


def describe_exception(exc: BaseException) -> str:
    """``"TypeName: message"`` with secrets redacted (the type's name alone for an empty
    message): how an exception becomes the text of an error that a model, a report, an
    event or a log sees."""
    text = exception_text(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def exception_text(exc: BaseException) -> str:
    """``str(exc)`` with secrets redacted; a placeholder when the exception's ``__str__``
    itself raises (its failure is reported, not replaced by the failure of reading it)."""
    try:
        text = str(exc)
    except Exception:
        return f"<the {type(exc).__name__}'s message could not be read>"
    return redact_log_text(text)  # a header a request's error echoes, too


def redacted_preview(text: str, limit: int) -> str:
    """``text`` as an event or an error shows it: secrets redacted, whitespace runs as one
    space, and at most ``limit`` characters (a cut one ends in ``…``)."""
    text = " ".join(redact_text(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def traceback_text(error: BaseException) -> str:
    """``error``'s traceback as Python prints it (a chained cause's too) with secrets
    redacted: what a log line or a span keeps of a failure."""
    import traceback  # with the first traceback kept, not with deskwork

    lines = traceback.format_exception(type(error), error, error.__traceback__)
    return redact_log_text("".join(lines))


def may_hold_secrets(text: str) -> bool:
    """Whether ``text`` (a JSON document, say) may hold anything :func:`redact` replaces.

    A cheap, conservative test: ``False`` means there is certainly nothing to redact.
    """
    if "sk-" in text or "Bearer" in text or ("://" in text and "@" in text):
        return True
    lowered = text.lower()
    # every key word starts with one of five heads: five substring scans settle the common
    # case (a run's state as JSON holds none) at a third of the regex's cost
    if (
        "api" not in lowered
        and "auth" not in lowered
        and "access" not in lowered
        and "secret" not in lowered
        and "passw" not in lowered
    ):
        return False
    return _SECRET_KEY_WORD.search(lowered) is not None


def redact_model(model: M) -> M:
    """``model`` as stores keep it: secrets redacted, values JSON cannot hold turned to text.

    Returns ``model`` itself when there is nothing to change (the common, cheap case).
    """
    return redact_model_json(model)[0]


def redact_model_json(model: M) -> tuple[M, str | None]:
    """:func:`redact_model` of ``model``, with ``model.model_dump_json()`` when it returns
    ``model`` itself (the text it scanned: a store can keep it instead of dumping again)."""
    try:
        text = model.model_dump_json()
    except PydanticSerializationError:  # a tool returned something JSON cannot hold
        data = to_jsonable(model.model_dump())
    else:
        if not may_hold_secrets(text):
            return model, text
        import json  # with the first model holding a secret, not with deskwork

        data = json.loads(text)
    return type(model).model_validate(redact(data)), None


@lru_cache(maxsize=4096)
def _secret_key(key: str) -> bool:
    return _SECRET_KEYS.search(key) is not None


_PLAIN_KEYS: set[str] = set()
"""Text keys known not to name a secret (a payload's keys repeat: ``model``, ``tool_call_id``):
a set lookup settles them without a call. Bounded like :func:`_secret_key`'s cache."""


def _plain_key(key: str) -> bool:
    """Whether ``key`` (a ``str``) names no secret, remembered in :data:`_PLAIN_KEYS`."""
    if _SECRET_KEYS.search(key) is not None:
        return False
    if len(_PLAIN_KEYS) < 4096:
        _PLAIN_KEYS.add(key)
    return True


def redact(value: Any) -> Any:
    """Return ``value`` with secret-looking keys and values replaced by ``<redacted>``."""
    if isinstance(value, dict):
        return _redact_dict(value)
    if isinstance(value, str):
        return redact_text(value)
    if isinstance(value, list | tuple):
        return [redact(item) for item in value]
    return value


def redact_str_keyed(data: dict[Any, Any]) -> dict[str, Any] | None:
    """``redact(data)`` when every key of ``data`` is a ``str``, else ``None`` (one pass).

    The event hot path: a payload with text keys becomes an event without validation.
    """
    return _redact_dict(data, str_keys_only=True)


@overload
def _redact_dict(
    data: dict[Any, Any], *, str_keys_only: Literal[False] = ...
) -> dict[Any, Any]: ...
@overload
def _redact_dict(data: dict[Any, Any], *, str_keys_only: bool) -> dict[Any, Any] | None: ...
def _redact_dict(data: dict[Any, Any], *, str_keys_only: bool = False) -> dict[Any, Any] | None:
    # the hot path (every event payload): scalars are copied without a call, and a text
    # is only handed to redact_text when a cheap test says it may hold a secret
    out: dict[Any, Any] = {}
    plain = _PLAIN_KEYS
    for key, item in data.items():
        if type(key) is not str:
            if str_keys_only:
                return None
            if isinstance(key, str) and _secret_key(key):  # a str subclass (an enum member)
                out[key] = REDACTED
                continue
        elif key not in plain and not _plain_key(key):
            out[key] = REDACTED
            continue
        kind = type(item)
        if kind is str:
            out[key] = redact_text(item) if _hint(item.lower()) else item
        elif kind in _SCALARS:
            out[key] = item
        elif isinstance(item, _NESTED):
            # _names_headers inlined (a call per nested value of every payload)
            headers = isinstance(key, str) and ("eader" in key or "EADER" in key)
            out[key] = redact_headers(item) if headers else redact(item)
        else:
            out[key] = item
    return out


def _names_headers(key: Any) -> bool:
    """Whether a dict's ``key`` names HTTP headers (``headers``, ``extra_headers``): the
    values of those named like a credential are redacted whatever their shape."""
    return isinstance(key, str) and ("eader" in key or "EADER" in key)  # no lower() copy


_SCALARS = frozenset({int, float, bool, type(None)})
# matches wherever may_hold_secrets(text) is true (and a little more: "SK-", a URL without
# "@"), so a text it does not match is certainly returned unchanged by redact_text
_HINT = re.compile("sk-|bearer|://|" + _SECRET_KEY_WORD.pattern)
_hint = _HINT.search
_NESTED = (dict, list, tuple, str)
"""What :func:`redact` walks into or scans (``str``: a subclass, an enum member's text)."""
