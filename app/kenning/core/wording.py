"""Counted nouns, said the same way by every front end ("1 file", "3 files", "2 matches")."""

from __future__ import annotations

IRREGULAR_PLURALS = {"match": "matches", "is": "are"}


def plural(n: int, noun: str, *, more: bool = False) -> str:
    """ "1 file", "1,204 files"; more=True says the count stopped there ("10,000+ matches")."""
    word = noun if n == 1 and not more else IRREGULAR_PLURALS.get(noun, noun + "s")
    return f"{n:,}{'+' if more else ''} {word}"


def ago(stamp: float | None, now: float) -> str:
    """ "just now", "4 min ago", "3 h ago", "5 days ago", "2 weeks ago", "3 months ago", "2 years ago".

    `now` is given, not read: two places showing one moment in one refresh say the same."""
    if not stamp:
        return "never"
    seconds = max(0.0, now - stamp)
    days = seconds / 86400
    if seconds < 60:
        return "just now"
    if seconds < 3600:
        return f"{int(seconds // 60)} min ago"
    if seconds < 86400:
        return f"{int(seconds // 3600)} h ago"
    if days < 14:
        return plural(int(days), "day") + " ago"
    if days < 61:
        return plural(int(days // 7), "week") + " ago"
    if days < 730:
        return plural(int(days // 30.44), "month") + " ago"
    return plural(int(days // 365.25), "year") + " ago"
