"""What the user's filters, quoted words and excluded words allow, as a storage-neutral
ChunkFilter.

Every retriever applies it inside its own query, before ranking (see core.filters).
"""

from __future__ import annotations

from kenning.core.filters import ChunkFilter
from kenning.search.query import ParsedQuery

TEST_TAG = "test"  # tag:test asks for test files, which are otherwise left out


def build_condition(query: ParsedQuery) -> ChunkFilter:
    f = query.filters
    return ChunkFilter(
        sources=f.sources,
        exts=f.exts,
        tags=tuple(t for t in f.tags if t != TEST_TAG),
        paths=f.paths,
        test_files="only" if f.include_tests else "excluded",
        after=f.after,
        before=f.before,
        # Quoted words are required in every list, the vector list included (unless no
        # chunk has them: search.phrases relaxes those to words).
        phrases=query.required_phrases,
        excluded=query.excluded,
    )


def searchable_scope(query: ParsedQuery) -> ChunkFilter:
    """The chunks any search of this kind can return, whatever else it asks: tests left
    out unless asked for (disabled sources are never searched).  Typo correction's
    vocabulary comes from here (search.fuzzy)."""
    return ChunkFilter(test_files="only" if query.filters.include_tests else "excluded")


def is_selective(query: ParsedQuery) -> bool:
    """Whether the condition likely rules out most chunks: then the lexical lists join
    it into their query rather than rank first and check after."""
    return not query.filters.is_empty() or bool(query.required_phrases)
