"""Counted nouns, said the same way by every front end ("1 file", "3 files", "2 matches")."""

from __future__ import annotations

IRREGULAR_PLURALS = {"match": "matches", "is": "are"}


def plural(n: int, noun: str, *, more: bool = False) -> str:
    """ "1 file", "1,204 files"; more=True says the count stopped there ("10,000+ matches")."""
    word = noun if n == 1 and not more else IRREGULAR_PLURALS.get(noun, noun + "s")
    return f"{n:,}{'+' if more else ''} {word}"
