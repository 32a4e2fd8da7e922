"""SearchResult.total: how many chunks and files a search found, not just the hits shown.

Keyword modes count every chunk the filter allows that the porter or trigram index
finds the query's own words in (not its stop words: "with" is in most notes) — the whole
match set, not the `depth` best each list ranked — together with the hits shown that
none of them matched (found by meaning over the similarity floor), so the total is
never below the hits shown.  Chunks only the feedback words find are not matches.
Meaning-only mode has no words to count: it counts the chunks retrieved by meaning whose
cosine reaches the similarity floor (at most the list's depth, then "30+").

Counting stops at COUNT_CAP chunks ("10,000+ matches"): a common word in a million
chunks would otherwise cost more than the search (16 ms for 20k matches measured).
"""

from __future__ import annotations

from kenning import TYPE_CHECKING
from kenning.core.filters import ChunkFilter
from kenning.core.types import MatchTotal
from kenning.storage.api import KeywordQuery, Ranked, Store

if TYPE_CHECKING:
    from kenning.search.engine import SearchOptions
    from kenning.storage.api import LexicalIndex

COUNT_CAP = 10_000


def count_total(
    store: Store,
    matches: dict[LexicalIndex, KeywordQuery],
    shown: list[int],
    lists: dict[str, list[Ranked]],
    condition: ChunkFilter,
    options: SearchOptions,
    floor: float,
) -> MatchTotal:
    """The total of one search (see the module's docstring): shown holds the chunk ids of
    its hits; floor is the meaning floor's cosine."""
    if options.mode == "vector":
        return _by_meaning(store, lists.get("vector", []), condition, options, floor)
    found = store.keywords.count_total(matches, sorted(shown), condition, COUNT_CAP)
    return MatchTotal(found.chunks, found.files, found.capped)


def _by_meaning(
    store: Store, ranked: list[Ranked], condition: ChunkFilter, options: SearchOptions, floor: float
) -> MatchTotal:
    close = [r.chunk_id for r in ranked if r.score >= floor]
    found = store.keywords.count_total({}, close, condition, COUNT_CAP)
    # The list holds the `depth` nearest: when all of them reach the floor, more may.
    return MatchTotal(found.chunks, found.files, capped=len(close) >= options.depth, floor=floor)
