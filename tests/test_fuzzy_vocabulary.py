"""The typo corrector scans only the vocabulary's stems of a length that can be near
enough; what it keeps must be exactly what a scan of the whole vocabulary keeps."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from rapidfuzz import process
from rapidfuzz.distance import Levenshtein

from kenning.search import fuzzy

STEMS = st.text(alphabet="abcde", min_size=1, max_size=9)


def _scan_everything(target: str, allowed: int, terms: list[str]) -> dict[str, int]:
    near = process.extract(target, terms, scorer=Levenshtein.distance, score_cutoff=allowed, limit=fuzzy.NEAREST)
    return {stem: int(d) for stem, d, _ in near}


def _vocabulary(terms: list[str]) -> fuzzy.Vocabulary:
    vocabulary = fuzzy.Vocabulary(store=None)  # type: ignore[arg-type]  # _nearest reads only the buckets
    vocabulary._docs = {term: 1 for term in terms}
    vocabulary._by_length = fuzzy._by_length(vocabulary._docs)
    return vocabulary


@settings(max_examples=200, deadline=None)
@given(st.lists(STEMS, min_size=1, max_size=400, unique=True), STEMS, st.integers(min_value=1, max_value=3))
def test_length_buckets_keep_what_a_whole_scan_keeps(terms, target, allowed):
    # Small alphabet, many near stems: more than NEAREST are often within reach, so
    # which ones are kept (closest, then vocabulary order) is tested too.
    found = _vocabulary(terms)._nearest(target, allowed, process.extract, Levenshtein.distance)
    assert found == _scan_everything(target, allowed, terms)


def test_a_stem_further_in_length_than_allowed_is_never_scanned():
    vocabulary = _vocabulary(["postgr", "postgresqlserv", "post"])
    assert vocabulary._nearest("postgr", 2, process.extract, Levenshtein.distance) == {"postgr": 0, "post": 2}
