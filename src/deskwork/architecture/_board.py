"""The blackboard architecture's board: public entries plus one private scratchpad per agent.

The view keeps no state of its own. Its entries live on one shared
:class:`deskwork.collaboration.Blackboard`::

    "public"           ─► [entry, entry, ...]   what every agent sees
    "private:<agent>"  ─► [entry, ...]          only <agent> sees these

so ``to_state()`` of the shared board saves the view (and every other key) for a resume.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from deskwork.collaboration import Blackboard as SharedBoard
from deskwork.utils import utc_now

__all__ = ["Blackboard", "BlackboardEntry"]


@dataclass(frozen=True, slots=True)
class BlackboardEntry:
    """One contribution on the blackboard."""

    author: str
    content: str
    kind: str = "contribution"
    """``problem``, ``contribution``, ``answer``, ``decision`` or any label of yours."""
    timestamp: datetime = field(default_factory=utc_now)

    def to_dict(self) -> dict[str, Any]:
        """The entry as JSON (``timestamp`` in ISO 8601)."""
        return {
            "author": self.author,
            "content": self.content,
            "kind": self.kind,
            "timestamp": self.timestamp.isoformat(),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> BlackboardEntry:
        """Build an entry from :meth:`to_dict` output."""
        return cls(
            author=str(data["author"]),
            content=str(data["content"]),
            kind=str(data.get("kind", "contribution")),
            timestamp=datetime.fromisoformat(data["timestamp"]),
        )


class Blackboard:
    """Public + per-agent private state for the architecture.

    A view over one :class:`deskwork.collaboration.Blackboard`: public entries are a list under
    the key ``public``, each agent's scratchpad a list under ``private:<agent>``. Appends are
    atomic (``update``), and ``to_state()`` saves everything.
    """

    PUBLIC_KEY = "public"
    PRIVATE_PREFIX = "private:"

    def __init__(self, board: SharedBoard | None = None) -> None:
        """Create a view over ``board`` (a new shared board if omitted)."""
        self.board = board if board is not None else SharedBoard()

    def post(
        self,
        author: str,
        content: str,
        *,
        kind: str = "contribution",
        private_to: str | None = None,
    ) -> BlackboardEntry:
        """Append an entry to the public board, or to ``private_to``'s scratchpad."""
        entry = BlackboardEntry(author=author, content=content, kind=kind)
        key = self.PUBLIC_KEY if private_to is None else self.PRIVATE_PREFIX + private_to
        self.board.update(key, lambda items: [*items, entry.to_dict()], author=author, default=[])
        return entry

    @property
    def public(self) -> list[BlackboardEntry]:
        """Every public entry, oldest first (a snapshot)."""
        return _entries(self.board.read(self.PUBLIC_KEY, []))

    @property
    def private(self) -> dict[str, list[BlackboardEntry]]:
        """Each agent's private entries, keyed by agent name (a snapshot)."""
        size = len(self.PRIVATE_PREFIX)
        return {
            key[size:]: _entries(value)
            for key, value in self.board.snapshot().items()
            if key.startswith(self.PRIVATE_PREFIX)
        }

    def render_for(self, agent_name: str) -> str:
        """Format the board for ``agent_name``: every public entry and its own scratchpad."""
        lines = ["Blackboard:"]
        lines += _render(self.public) or ["(empty)"]
        mine = _entries(self.board.read(self.PRIVATE_PREFIX + agent_name, []))
        if mine:
            lines += ["", "Your private notes:", *_render(mine)]
        return "\n".join(lines)

    def reset(self) -> None:
        """Remove the public entries and every scratchpad (other keys stay)."""
        keys = self.board.keys()  # a list copy: deleting while looping is safe
        for key in keys:
            if self._is_view_key(key):
                self.board.delete(key)

    def load(self, state: Mapping[str, Any]) -> None:
        """Put a saved board (``to_state()`` output) back for a resumed run.

        The saved public entries and scratchpads replace the board's (scratchpads the save did
        not have are removed). Other saved keys are only added where the board lacks them, so
        values written to the shared board since the save are kept.

        Raises:
            ValueError: ``state`` is not a board state; the board is then unchanged.
        """
        saved = SharedBoard.from_state(state).to_state()["entries"]
        live = self.board.to_state()
        kept = [e for e in live["entries"] if not self._is_view_key(e["key"])]
        present = {e["key"] for e in kept}
        added = [e for e in saved if self._is_view_key(e["key"]) or e["key"] not in present]
        self.board.restore({**live, "entries": kept + added})

    def _is_view_key(self, key: str) -> bool:
        return key == self.PUBLIC_KEY or key.startswith(self.PRIVATE_PREFIX)

    def final_entry(self) -> BlackboardEntry | None:
        """The last ``answer`` entry, else the last ``contribution``, else ``None``."""
        public = self.public
        for kind in ("answer", "contribution"):
            found = [entry for entry in public if entry.kind == kind]
            if found:
                return found[-1]
        return None

    def to_state(self) -> dict[str, Any]:
        """The whole underlying board as JSON (see ``collaboration.Blackboard.to_state``)."""
        return self.board.to_state()


def _entries(raw: Any) -> list[BlackboardEntry]:
    return [BlackboardEntry.from_dict(item) for item in raw or ()]


def _render(entries: list[BlackboardEntry]) -> list[str]:
    return [f"[{i}] {e.author} ({e.kind}):\n{e.content}" for i, e in enumerate(entries, 1)]
