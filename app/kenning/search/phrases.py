"""Quoted phrases: required while chunks hold them, searched as words when none does.

A quoted phrase asks that every hit contain it, and in every list (the meaning list
too).  People and assistants also quote the title of a paper they remember, or a word
they mean loosely, and a phrase that nothing contains would then empty every list.
So, before the lists run:

- in a question of more than PROSE_WORDS words besides its quotes (written out in
  sentences, or a passage pasted to find what is like it) quote marks are punctuation:
  a word "so-called", a title cited in passing.  Its phrases are not required; they
  rank as words (and as one more term where their words stand side by side), every hit
  says whether it holds them (Breakdown.lacks_phrases), and the result says so.  A
  search typed to find a phrase is short: "rollback plan", `"canary" deploy`, a quoted
  title with a few words around it — those keep the rules below;

- a phrase no chunk the filters allow contains is searched as its words (it still
  scores as one more term where its words stand side by side), and the result says so:
  "No note contains "…"; showing results for its words";
- when the phrases each occur but never all in one chunk, all are searched as words;
- when the chunks holding the phrases are fewer than the results asked for, they come
  first, in their own ranking, and the results for the words follow (marked
  Breakdown.lacks_phrases): the list is never cut short, and the first N of it are the
  first N of any longer list, since the phrase hits' ranking does not depend on how
  many follow.

Measured on CISI's five quoted queries (abstracts of 54-217 words quoting a word or a
term in passing: "virtual" system, a "threshold" on the query term; README, Query
syntax): keyword nDCG@10 0.044 when phrases emptied the lists, 0.249 with the phrase
hits first, 0.379 with the quotes read as quotation; the hybrid list 0.296 -> 0.449,
the meaning list 0.237 -> 0.383 (docs/architecture.md §6, round five).
"""

from __future__ import annotations

from dataclasses import replace

from kenning.core.filters import ChunkFilter
from kenning.core.records import Record
from kenning.core.types import PROSE_WORDS, Hit, PhraseFallback
from kenning.search.query import ParsedQuery
from kenning.search.textmatch import StemMatcher, holds_run
from kenning.storage.api import Analyzer, KeywordQuery, Store

# PROSE_WORDS (core.types, 20): more words than this besides the quoted ones make the
# query prose, its quotes quotation (not required).  Queries typed into a search box are
# a few words (web search logs: 2-3 on average, rarely more than 10); a question written
# out with its context runs past 20 (CISI's quoted ones: 54-217 words).


def words_outside_quotes(query: ParsedQuery) -> int:
    """How many words the query has besides those of its quoted phrases."""
    return max(0, len(query.term_sequence) - sum(len(p) for p in query.phrases))


def is_prose(query: ParsedQuery) -> bool:
    """A question written out (more than PROSE_WORDS words besides its quotes): its quoted
    phrases are quotation, ranked as words and not required."""
    return bool(query.phrases) and words_outside_quotes(query) > PROSE_WORDS


def quotation(query: ParsedQuery) -> PhraseFallback:
    """What a prose query's result says about its quotes (PhraseFallback.describe)."""
    return PhraseFallback(quotation=tuple(" ".join(p) for p in query.phrases), prose_words=PROSE_WORDS)


def mark_holders(hits: list[Hit], phrases: tuple[tuple[str, ...], ...], analyzer: Analyzer) -> None:
    """Marks each hit that does not hold every phrase (in its title or text, word after
    word as the word index matches them: same stems, nothing but spaces and punctuation
    between): Breakdown.lacks_phrases, with Breakdown.quotation saying why it still ranks."""
    wanted = [[s for word in p for s in analyzer.tokens(word)] for p in phrases]
    matcher = StemMatcher(list(dict.fromkeys(s for stems in wanted for s in stems)), analyzer)
    for hit in hits:
        hit.breakdown.quotation = True
        hit.breakdown.lacks_phrases = not all(
            holds_run(matcher, hit.title, stems) or holds_run(matcher, hit.text, stems) for stems in wanted
        )


class PhraseCheck(Record, frozen=True):
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
