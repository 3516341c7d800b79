"""Token estimates for budgets (slot pools, knowledge loading, ReAct history)."""

from __future__ import annotations

from abc import ABC, abstractmethod

__all__ = ["CharDivisionTokenCounter", "TokenCounter"]


class TokenCounter(ABC):
    """Counts the tokens of a text; plug in a model-specific tokenizer for accuracy."""

    @abstractmethod
    def count(self, text: str) -> int:
        """The number of tokens in ``text`` (0 for an empty text)."""


class CharDivisionTokenCounter(TokenCounter):
    """Estimates ``len(text) // chars_per_token``, at least 1 for a non-empty text."""

    __slots__ = ("_chars_per_token",)

    def __init__(self, chars_per_token: int = 4) -> None:
        """Args:
        chars_per_token: characters per token, at least 1.

        Raises:
            ValueError: ``chars_per_token`` is below 1.
        """
        if isinstance(chars_per_token, bool) or chars_per_token < 1:
            raise ValueError(f"chars_per_token must be at least 1, got {chars_per_token!r}")
        self._chars_per_token = chars_per_token

    @property
    def chars_per_token(self) -> int:
        """Characters counted as one token."""
        return self._chars_per_token

    def count(self, text: str) -> int:
        """``0`` for ``""``, else ``max(1, len(text) // chars_per_token)``."""
        if not text:
            return 0
        return max(1, len(text) // self._chars_per_token)

    def __repr__(self) -> str:
        return f"CharDivisionTokenCounter(chars_per_token={self._chars_per_token})"
