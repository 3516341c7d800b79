"""Secrets split over streamed tokens never reach a client in clear text.

The runtime already holds a model step's tokens back before they are stored
(:class:`deskwork.core.stream_redact.TokenHoldback`), so the events a run stores are safe.
This guard applies the same hold-back at the stream boundary to every run of consecutive
``stream.token`` events of one source (and token type), for token events emitted elsewhere
(a LangGraph chat model's, say) and stores written before the runtime held tokens back.

Every event keeps its position: a token event goes out carrying the text released for its
token, and the last token event of a run waits for the next event so that it can carry the
rest of the text. The guard is deterministic, so a client that reconnects with
``Last-Event-ID`` gets the same texts: the stream feeds the guard from the first event and
sends only what follows the client's position.
"""

from __future__ import annotations

from deskwork.core.event import EventType
from deskwork.core.stream_redact import HOLDBACK, TokenHoldback
from deskwork.serve._hub import Outgoing

__all__ = ["HOLDBACK", "TokenGuard"]


def _token_key(item: Outgoing) -> tuple[str, str] | None:
    event = item.event
    if event.type != EventType.STREAM_TOKEN:
        return None
    return event.source, str(event.payload.get("type") or "content")


def _token(item: Outgoing) -> str:
    return str(item.event.payload.get("token") or "")


class TokenGuard:
    """Rewrites the token events of one stream so that no secret leaves split over tokens."""

    def __init__(self, holdback: int = HOLDBACK) -> None:
        self.holdback = holdback
        self._key: tuple[str, str] | None = None
        self._text = TokenHoldback(holdback)
        self._held: tuple[int, Outgoing] | None = None

    @property
    def idle(self) -> bool:
        """Whether no token event is held back (an event that is not a token then goes
        out as it is, at its position: :meth:`feed` would return just that)."""
        return self._held is None

    def feed(self, position: int, item: Outgoing) -> list[tuple[int, Outgoing]]:
        """The events ready to go out (in order) now that ``item`` arrived at ``position``."""
        if self._held is None and item.event.type != EventType.STREAM_TOKEN:
            return [(position, item)]  # the common case, first: nothing held, nothing to hold
        key = _token_key(item)
        ready = []
        if self._held is not None:
            position_held, held = self._held
            text = self._text.push(_token(held))
            if key is None or key != self._key:  # the run of tokens ends
                text += self._text.flush()
                self._text = TokenHoldback(self.holdback)
            ready.append((position_held, held.with_token(text)))
            self._held = None
        if key is None:
            ready.append((position, item))
        else:
            self._key = key
            self._held = (position, item)
        return ready

    def close(self) -> list[tuple[int, Outgoing]]:
        """The held token event, with the rest of the text (the stream ends)."""
        if self._held is None:
            return []
        position, held = self._held
        self._held = None
        text = self._text.push(_token(held)) + self._text.flush()
        self._text = TokenHoldback(self.holdback)
        return [(position, held.with_token(text))]
