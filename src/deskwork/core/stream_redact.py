"""No secret is split over streamed tokens: the hold-back of a stream's text.

Each event is redacted on its own, so a key a model streams in two tokens (``"sk-li"`` +
``"ve-abc..."``) would pass both. :class:`TokenHoldback` treats the tokens of one stream as
one text and releases, per token, only the part no secret can straddle, redacted:

- while nothing in the text may hold a secret nor a URL (the common case), every token goes out
  whole, but for a tail that could begin one (``"s"``, ``"pass"``, ``"Bear"``, ``":/"``);
- once a secret may be in the text, a token's text is released only when ``holdback`` more
  characters have arrived after it, cut at a word boundary where redacting the released part
  alone gives what redacting the whole text gives;
- each part is redacted with the released text just before it as context, so a secret that
  starts in released text (``"postgresql"`` + ``"://user:pw@host"``) is still found;
- :meth:`TokenHoldback.flush` releases the rest, redacted, when the stream ends.

The released parts, joined, are the redacted text of the whole stream. Limit: a quoted value
longer than ``holdback`` whose closing quote has not arrived yet can be released in parts.
"""

from __future__ import annotations

from deskwork.core.redact import _SECRET_KEY_WORDS, may_hold_secrets, redact_text

__all__ = ["HOLDBACK", "TokenHoldback"]

HOLDBACK = 96
"""Characters of streamed text held back, once a secret may be in it, before release."""
_FORCE = 4096
"""Pending text past this length is released even without a word boundary."""
_CONTEXT = 64
"""Characters of released text a part is redacted after."""
# the words a secret starts with (lower case): a tail that is the start of one is held
_TRIGGERS = ("sk-", "bearer", "://", *_SECRET_KEY_WORDS)
_PREFIXES = frozenset(t[:k] for t in _TRIGGERS for k in range(1, len(t)))
_LONGEST = max(map(len, _PREFIXES))


def _open_tail(text: str) -> int:
    """The length of the longest tail of ``text`` that is the start of a trigger word."""
    tail = text[-_LONGEST:].lower()
    for size in range(min(len(tail), _LONGEST), 0, -1):
        if tail[-size:] in _PREFIXES:
            return size
    return 0


def _boundary(text: str, end: int) -> int:
    """The position just after the last whitespace before ``end`` (0 when there is none)."""
    for i in range(min(end, len(text)) - 1, -1, -1):
        if text[i].isspace():
            return i + 1
    return 0


def _clean_cut(text: str, cut: int) -> bool:
    """Whether no secret straddles ``cut``: redacting both parts alone equals the whole."""
    return redact_text(text[:cut]) + redact_text(text[cut:]) == redact_text(text)


class TokenHoldback:
    """The text of one stream's tokens, released so that no secret is split over them."""

    __slots__ = ("_context", "_pending", "holdback")

    def __init__(self, holdback: int = HOLDBACK) -> None:
        self.holdback = holdback
        self._pending = ""
        self._context = ""  # the raw text released last (its tail)

    def push(self, token: str) -> str:
        """The redacted text that may go out now that ``token`` arrived ("" for none)."""
        pending = self._pending + token
        text = self._context + pending
        if not may_hold_secrets(text) and "://" not in text:  # the common case
            cut = len(pending) - _open_tail(pending)
        else:
            cut = self._safe_cut(pending)
        return self._release(pending, cut)

    def flush(self) -> str:
        """The rest of the text, redacted (the stream ended)."""
        return self._release(self._pending, len(self._pending))

    def _safe_cut(self, pending: str) -> int:
        end = len(pending) - self.holdback
        if end <= 0:
            return 0
        cut = _boundary(pending, end)
        if cut == 0 and len(pending) > _FORCE:
            cut = end
        context = self._context
        while cut > 0 and not _clean_cut(context + pending, len(context) + cut):
            cut = _boundary(pending, cut - 1)
        return cut

    def _release(self, pending: str, cut: int) -> str:
        part, self._pending = pending[:cut], pending[cut:]
        if not part:
            return ""
        context = self._context
        self._context = (context + part)[-_CONTEXT:]
        if not may_hold_secrets(context + part):
            return part
        head, whole = redact_text(context), redact_text(context + part)
        return whole[len(head) :] if whole.startswith(head) else redact_text(part)
