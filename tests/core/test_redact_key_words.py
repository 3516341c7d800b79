"""The one-scan test for secret key words finds exactly the texts that hold one of them."""

from __future__ import annotations

import random

from deskwork.core.redact import _SECRET_KEY_WORD, _SECRET_KEY_WORDS, may_hold_secrets


def _holds_word(text: str) -> bool:
    lowered = text.lower()
    return any(word in lowered for word in _SECRET_KEY_WORDS)


def test_every_key_word_is_found_alone_and_inside_text() -> None:
    for word in _SECRET_KEY_WORDS:
        for text in (word, word.upper(), f'{{"my_{word}": 1}}', f"x{word}y"):
            assert may_hold_secrets(text), text
            assert _SECRET_KEY_WORD.search(text.lower()) is not None, text


def test_the_scan_agrees_with_a_plain_word_search_on_generated_texts() -> None:
    rng = random.Random(13)
    pieces = [*_SECRET_KEY_WORDS, *(w[:-1] for w in _SECRET_KEY_WORDS),
              *(w[1:] for w in _SECRET_KEY_WORDS), "a", "_", "-", "pi", "uth", " ", "key",
              "token", "or", "d", "w", "x"]  # fmt: skip
    found = 0
    for _ in range(20_000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 6)))
        expected = _holds_word(text)
        assert (_SECRET_KEY_WORD.search(text.lower()) is not None) == expected, text
        assert may_hold_secrets(text) == expected, text
        found += expected
    assert 0 < found < 20_000  # both outcomes were exercised


def test_near_misses_are_not_key_words() -> None:
    for text in ("api key", "auth token", "acess_token", "secre", "passwrd", "apikye", "pass"):
        assert not _holds_word(text)
        assert _SECRET_KEY_WORD.search(text) is None, text
