"""Secrets split over streamed tokens never reach a client in clear text.

The desk redacts each event on its own, so a key that a model streams in two tokens
(``"sk-li"`` + ``"ve-abc..."``) passes both. At the stream boundary, :class:`TokenGuard`
treats a run of consecutive ``stream.token`` events of one source (and token type) as one
text: it releases a token's text only once ``holdback`` more characters have arrived after
it, cut where redacting the released part alone gives what redacting the whole text gives
(no secret straddles the cut), and releases the rest, redacted, when the run of tokens ends.

Every event keeps its position: a token event goes out carrying the text released when the
*next* event arrives (so it may be shorter, longer or empty), which means a token frame
waits for the next event. The guard is deterministic, so a client that reconnects with
``Last-Event-ID`` gets the same texts: the stream feeds the guard from the first event and
sends only what follows the client's position.

Limits: a quoted value longer than ``holdback`` whose closing quote has not arrived yet can
be released in parts, and tokens of two sources that interleave are two runs each time.
"""

from __future__ import annotations

from deskwork.core.event import EventType
from deskwork.core.redact import may_hold_secrets, redact_text
from deskwork.serve._hub import Outgoing

__all__ = ["HOLDBACK", "TokenGuard"]

HOLDBACK = 96
"""Characters of streamed text held back before they may be released."""
_FORCE = 4096
"""Pending text past this length is released even without a word boundary."""


def _token_key(item: Outgoing) -> tuple[str, str] | None:
    event = item.event
    if event.type != EventType.STREAM_TOKEN:
        return None
    return event.source, str(event.payload.get("type") or "content")


def _boundary(text: str, end: int) -> int:
    """The position just after the last whitespace before ``end`` (0 when there is none)."""
    for i in range(min(end, len(text)) - 1, -1, -1):
        if text[i].isspace():
            return i + 1
    return 0


def _clean_cut(text: str, cut: int) -> bool:
    """Whether no secret straddles ``cut``: redacting both parts alone equals the whole."""
    return redact_text(text[:cut]) + redact_text(text[cut:]) == redact_text(text)


class TokenGuard:
    """Rewrites the token events of one stream so that no secret leaves split over tokens."""

    def __init__(self, holdback: int = HOLDBACK) -> None:
        self.holdback = holdback
        self._key: tuple[str, str] | None = None
        self._pending = ""
        self._held: tuple[int, Outgoing] | None = None

    def feed(self, position: int, item: Outgoing) -> list[tuple[int, Outgoing]]:
        """The events ready to go out (in order) now that ``item`` arrived at ``position``."""
        if self._held is None and item.event.type != EventType.STREAM_TOKEN:
            self._key = None  # the common case, first: nothing held, nothing to hold
            return [(position, item)]
        key = _token_key(item)
        ready = []
        if self._held is not None:
            if key is not None and key == self._key:  # the run of tokens goes on
                self._pending += str(item.event.payload.get("token") or "")
                ready.append(self._release(self._safe_text()))
            else:
                ready.append(self._release(self._rest()))
        if key is None:
            self._key = None
            ready.append((position, item))
            return ready
        if key != self._key:
            self._key = key
            self._pending = str(item.event.payload.get("token") or "")
        self._held = (position, item)
        return ready

    def close(self) -> list[tuple[int, Outgoing]]:
        """The held token event, with the rest of the text (the stream ends)."""
        if self._held is None:
            return []
        self._key = None
        return [self._release(self._rest())]

    def _release(self, text: str) -> tuple[int, Outgoing]:
        assert self._held is not None
        position, item = self._held
        self._held = None
        return position, item.with_token(text)

    def _rest(self) -> str:
        text, self._pending = redact_text(self._pending), ""
        return text

    def _safe_text(self) -> str:
        """The redacted text that may go out now; the rest stays pending."""
        pending = self._pending
        end = len(pending) - self.holdback
        if end <= 0:
            return ""
        cut = _boundary(pending, end)
        if cut == 0 and len(pending) > _FORCE:
            cut = end
        if may_hold_secrets(pending):
            while cut > 0 and not _clean_cut(pending, cut):
                cut = _boundary(pending, cut - 1)
        self._pending = pending[cut:]
        return redact_text(pending[:cut])
