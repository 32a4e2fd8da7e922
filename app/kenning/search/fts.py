"""The two lexical retrievers: porter (words, stems) and trigram (substrings).

The indexes live in the store (store.keywords); this module decides what is searched
for and how deep, and passes words, never query syntax (storage.api.KeywordQuery).

In a large index, a term found in more than COMMON_SHARE of all chunks finds no chunks
for the porter list when a rarer term that occurs remains: a very common word's
posting list is the most expensive part of any keyword index to score
(docs/architecture.md §10: an OR query's tail is its common words).  It still scores
in the chunks the rarer terms find (KeywordQuery.also_scoring, exact at the cost of the
rarer terms' chunks), so their order is the whole query's, as long as those chunks are
not too many themselves (SCORE_COMMON_WITHIN).
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Hashable, Iterable, Iterator

from kenning import TYPE_CHECKING
from kenning.core.cjk import is_cjk, is_cjk_pair
from kenning.core.filters import ChunkFilter
from kenning.storage.api import KeywordList, KeywordQuery, Ranked, Store

if TYPE_CHECKING:
    from kenning.storage.api import LexicalIndex

__all__ = ["ChangeToken", "KeywordQuery", "Ranked", "TermStats", "keyword_list", "is_identifier_like", "trigram_terms"]

TITLE_WEIGHT = 3.0  # bm25 column weight of the heading path / file+symbol title
TEXT_WEIGHT = 1.0
MIN_TRIGRAM_CHARS = 3
COMMON_SHARE = 0.05
ELIDE_FROM_CHUNKS = 20_000  # below this every query is fast: keep every term
# The common words left out still score in the chunks the rarer words find, at the cost
# of one more FTS5 query over those chunks (~0.7 ms per 1,000 at a million chunks): done
# while the rarer words hold at most this many.  Beyond it the rarer words are common
# themselves and carry the ranking; the common words' share of it is slight.
SCORE_COMMON_WITHIN = 20_000


def keyword_list(
    store: Store,
    index: LexicalIndex,
    query: KeywordQuery,
    condition: ChunkFilter,
    limit: int,
    *,
    selective: bool = False,
    title_weight: float = TITLE_WEIGHT,
) -> KeywordList:
    """The best `limit` chunks the filter allows that the query finds (the store applies
    the filter before its cut); selective: the filter likely rules out most chunks."""
    return store.keywords.ranked(
        index, query, condition, limit, weights=(title_weight, TEXT_WEIGHT), selective=selective
    )


class ChangeToken:
    """Store.version() as the word caches read it: once per pinned span (a search).

    The word caches (TermStats, Vocabulary) keep what they read until the store changes,
    and ask its change token to know.  A team store answers that over the network, a
    round trip each (~3 ms), and a search asked it for every word it looked up (~30 a
    hybrid query).  While a search holds the token pinned, the caches read the token it
    began with: a write committed during that search is seen by the next one (a search
    sees the store as of its start).  Pins are per thread: a search on another thread
    reads its own."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self._local = threading.local()

    def current(self) -> Hashable:
        """The token the current pin read, else the store's token now."""
        if getattr(self._local, "depth", 0):
            return self._local.value  # type: ignore[no-any-return]
        return self.store.version()

    @contextlib.contextmanager
    def pinned(self) -> Iterator[None]:
        """Within it (on this thread), current() is the token read on entering the outermost pin."""
        local = self._local
        depth = getattr(local, "depth", 0)
        if not depth:
            local.value = self.store.version()
        local.depth = depth + 1
        try:
            yield
        finally:
            local.depth = depth


class TermStats:
    """How many chunks each query word occurs in, cached until the store changes."""

    def __init__(
        self, store: Store, token: ChangeToken | None = None, held: Callable[[str], int | None] | None = None
    ) -> None:
        self.store = store
        self.token = token or ChangeToken(store)
        # A stem's chunks as held in memory as of the current version (fuzzy.Vocabulary.held_chunks), or None.
        self._held = held or (lambda stem: None)
        self._version: object = None
        self._counts: dict[str, int] = {}
        self._total = 0

    def _check_version(self) -> None:
        version = self.token.current()
        if version != self._version:
            self._version = version
            self._counts.clear()
            self._total = self.store.chunks.count()

    def count(self, term: str) -> int:
        """Chunks the porter index finds term in (as a phrase when it is several tokens)."""
        self._check_version()
        if term not in self._counts:
            if len(self._counts) > 20_000:
                self._counts.clear()
            self._counts[term] = self._lookup(term)
        return self._counts[term]

    def _lookup(self, term: str) -> int:
        return self.store.terms.chunks_with(term)

    def prefetch(self, terms: Iterable[str]) -> None:
        """count() of each one-token term among these: from the held vocabulary when it is
        current, else read in one ask of the store (a team store: one round trip, not one a
        word); a term of several tokens is counted when asked."""
        self._check_version()
        single: dict[str, str] = {}
        for term in dict.fromkeys(terms):
            tokens = self.store.analyzer.tokens(term) if term not in self._counts else ()
            if len(tokens) == 1:  # chunks_with(term) is then its token's count (storage.api.Terms)
                single[term] = tokens[0]
        held = {token: self._held(token) for token in dict.fromkeys(single.values())}
        unread: dict[str, str] = {}
        for term, token in single.items():
            count = held[token]
            if count is None:
                unread[term] = token
            else:
                self._counts[term] = count
        if unread:
            found = self.store.terms.counts_of(list(dict.fromkeys(unread.values())))
            self._counts.update((term, found[token].chunks) for term, token in unread.items())

    def total(self) -> int:
        self._check_version()
        return self._total

    def without_common(self, terms: tuple[str, ...]) -> tuple[str, ...]:
        """Drop very common terms when at least one rarer term that occurs remains."""
        total = self.total()
        if len(terms) < 2 or total < ELIDE_FROM_CHUNKS:
            return terms
        counts = {t: self.count(t) for t in terms}
        common = {t for t, n in counts.items() if n > COMMON_SHARE * total}
        if not common or not any(n > 0 for t, n in counts.items() if t not in common):
            return terms
        return tuple(t for t in terms if t not in common)

    def only_scoring(self, kept: tuple[str, ...], left_out: tuple[str, ...]) -> tuple[str, ...]:
        """Of the words without_common left out, those that still score (see SCORE_COMMON_WITHIN)."""
        if not left_out or sum(self.count(t) for t in kept) > SCORE_COMMON_WITHIN:
            return ()
        return left_out

    def known(self, term: str) -> bool:
        return self.count(term) > 0


def is_identifier_like(term: str) -> bool:
    """snake_case, dotted.names, paths, words with digits: where substrings matter.

    Hyphenated words are left to porter: in prose they are compound words, not
    identifiers.  Keyword search reads them as their words (a bound prefix as a phrase:
    "re-entry" finds "re entry"; search.query.compound_words), hybrid search as a phrase
    (engine.COMPOUND_WORDS_MODES)."""
    return any(ch in term for ch in "_.:/") or any(ch.isdigit() for ch in term)


def substring_term(term: str) -> bool:
    """Long enough for the substring list: three characters, or a two-character CJK word."""
    return len(term) >= MIN_TRIGRAM_CHARS or is_cjk_pair(term)


def trigram_terms(stats: TermStats, terms: tuple[str, ...]) -> list[str]:
    """Words the trigram list is for: identifiers, and words the porter index does
    not know as words (partial words, unusual spellings).  Plain known words are
    the porter list's job; sending them here too only doubles their evidence.  CJK
    words always go: the porter index holds a run of CJK characters as one token, so
    it knows a word only where it stands alone."""
    return [t for t in terms if substring_term(t) and (is_identifier_like(t) or not stats.known(t) or is_cjk(t))]
