"""Choosing corrections for a query's unknown words: the ones that occur together.

Each unknown word has a few vocabulary candidates (search.fuzzy).  Corrections are
chosen as a combination, not one word at a time: "postgress tunning" over notes
that say "Postgres tuning" should become "postgres tuning", not the globally most
frequent neighbours "postgresql run".  Every combination is checked with one count
of the word index: the chunks holding all its corrections together and, when the query has
words the index knows, at least one of them.  The best combination is the one that
occurs together at all, then with the fewest edits, then in the most chunks, then
the most frequent.  A word the index knows (a tag, a title word, any word of any
note) is never corrected.

Everything is judged within a scope, when one is given: the chunks a search can
return (search.fuzzy), so a word found only in test files neither counts as known
nor is offered as a correction.

A suggestion is confident when its combination does occur together (with the
query's known words, when there are any): then the engine also searches for it.
A real word the index lacks gets one too when a neighbour occurs with the query's
words ("stations" → "estate", via the non-word edit "estations"); the rules measured
against that (stop words, the written form's distance, a dictionary, words left as
typed) each lost some collection: docs/architecture.md §6, round twelve (corrections).
"""

from __future__ import annotations

import itertools

from kenning.core.filters import ChunkFilter
from kenning.core.records import Record
from kenning.search.fuzzy import Candidate, Vocabulary
from kenning.storage.api import Store

MAX_COMBINATIONS = 24
TOGETHER_CAP = 200  # counting further would only cost time: the order is settled


class Suggestion(Record, frozen=True):
    """The corrections proposed for a query's unknown words."""

    corrections: dict[str, str]  # typed word → the word meant, as written in the text
    confident: bool
    unknown: tuple[str, ...] = ()  # the query's words the index does not know

    @property
    def to_search(self) -> dict[str, str]:
        """The corrections worth searching for: confident ones that fix a typo.  A word
        that only completes what was typed ("ratelimi" → "ratelimiter") is left to the
        substring (trigram) list, which already finds it while the user is typing."""
        if not self.confident:
            return {}
        return {w: f for w, f in self.corrections.items() if not f.startswith(w)}


def suggest(
    store: Store, vocabulary: Vocabulary, unknown: list[str], known: list[str], scope: ChunkFilter | None = None
) -> Suggestion | None:
    options = {}
    for word in unknown:
        found = vocabulary.candidates(word, scope=scope)
        if found:
            options[word] = found
    if not options:
        return None
    per_word = max(1, int(MAX_COMBINATIONS ** (1 / len(options))))
    combinations = itertools.product(*(found[:per_word] for found in options.values()))
    scored = []
    for combo in combinations:
        together = _together(store, combo, known, scope)
        key = (together == 0, sum(c.distance for c in combo), -together, -sum(c.docs for c in combo))
        scored.append((key, combo, together))
    _, best, together = min(scored, key=lambda t: (t[0], [c.stem for c in t[1]]))
    corrections = {word: vocabulary.surface(c.stem, word, c.word, scope) for word, c in zip(options, best)}
    fixed = {w: f for w, f in corrections.items() if f != w}
    return Suggestion(fixed, confident=together > 0, unknown=tuple(unknown))


def _together(store: Store, combo: tuple[Candidate, ...], known: list[str], scope: ChunkFilter | None) -> int:
    return store.terms.count_together([c.word for c in combo], known, TOGETHER_CAP, scope)
