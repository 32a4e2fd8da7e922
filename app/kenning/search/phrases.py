"""Quoted phrases: required while chunks hold them, searched as words when none does.

A quoted phrase asks that every hit contain it, and in every list (the meaning list
too).  People and assistants also quote the title of a paper they remember, or a word
they mean loosely, and a phrase that nothing contains would then empty every list.
So, before the lists run:

- a phrase no chunk the filters allow contains is searched as its words (it still
  scores as one more term where its words stand side by side), and the result says so:
  "No note contains "…"; showing results for its words";
- when the phrases each occur but never all in one chunk, all are searched as words;
- when the chunks holding the phrases are fewer than the results asked for, they come
  first, in their own ranking, and the results for the words follow (marked
  Breakdown.lacks_phrases): the list is never cut short, and the first N of it are the
  first N of any longer list, since the phrase hits' ranking does not depend on how
  many follow.

Measured on CISI's five quoted queries (long questions quoting single words or a
term; README, Query syntax): keyword nDCG@10 0.044 when phrases emptied the lists,
0.249 with the phrase hits first, 0.379 with the quotes ignored altogether.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from kenning.core.filters import ChunkFilter
from kenning.core.types import Hit, PhraseFallback
from kenning.search.query import ParsedQuery
from kenning.storage.api import KeywordQuery, Store


@dataclass(frozen=True)
class PhraseCheck:
    """Which quoted phrases no allowed chunk contains (searched as words)."""

    relaxed: tuple[tuple[str, ...], ...]  # phrases to search as words only
    absent: tuple[tuple[str, ...], ...]  # of those, the ones no allowed chunk contains (all of them: together)
    together: bool
    required: tuple[tuple[str, ...], ...]
    filtered: bool

    def outcome(self, first: int | None = None) -> PhraseFallback:
        return PhraseFallback(
            absent=tuple(" ".join(p) for p in self.absent),
            together=self.together,
            required=tuple(" ".join(p) for p in self.required),
            first=first,
            filtered=self.filtered,
        )


def _occurs(store: Store, phrases: tuple[tuple[str, ...], ...], condition: ChunkFilter) -> bool:
    """Whether a chunk the condition allows holds every one of the phrases."""
    every = replace(condition, phrases=phrases)
    found = store.keywords.ranked("porter", KeywordQuery(phrases=phrases[:1]), every, 1, weights=(1.0, 1.0))
    return bool(found.ranked)


def check(store: Store, query: ParsedQuery, condition: ChunkFilter) -> PhraseCheck:
    """Which of the query's phrases some chunk allowed by `condition` (the query's filter
    without its phrases) contains, alone and all together."""
    found = tuple(p for p in query.phrases if _occurs(store, (p,), condition))
    absent = tuple(p for p in query.phrases if p not in found)
    together = len(found) > 1 and not _occurs(store, found, condition)
    if together:  # said of every phrase: "No note contains "a" and "b" together"
        absent, found = query.phrases, ()
    return PhraseCheck(
        relaxed=tuple(p for p in query.phrases if p not in found),
        absent=absent,
        together=together,
        required=found,
        filtered=not query.filters.is_empty() or bool(query.excluded),
    )


def first_then_words(first: list[Hit], words: list[Hit], limit: int) -> list[Hit]:
    """The hits holding the phrases, then the results for the words that are not among them."""
    seen = {h.chunk_id for h in first}
    rest = [h for h in words if h.chunk_id not in seen]
    if first:
        for hit in rest:
            hit.breakdown.lacks_phrases = True
    return (first + rest)[:limit]
