"""The SQLite keyword list's unfiltered first fetch (storage/sqlite_words.py): however deep
the chunks the filter allows sit, the list is exactly the filter-joined query's, and it
scans FTS5 (which scores every match whatever the LIMIT) once when the first fetch holds
enough allowed rows, checking only as many of them as it needs."""

from __future__ import annotations

import pytest

from contract.seed import add_document, add_source
from kenning.core.filters import ChunkFilter
from kenning.storage import lexical, sqlite_words
from kenning.storage.api import KeywordQuery

LIMIT = 3
ALLOWED = 4
CHECKED_FIRST = LIMIT * sqlite_words.CHECK_FACTOR
FIRST_FETCH = LIMIT * sqlite_words.FIRST_FETCH_FACTOR
SECOND_FETCH = FIRST_FETCH * sqlite_words.FETCH_FACTOR


def _crowded_by_tests(store, tests_first: int) -> list[int]:
    """`tests_first` test chunks that outscore (three mentions) ALLOWED chunks (one
    mention, the same length); returns the allowed chunks' ids."""
    source = add_source(store, "repo")
    for i in range(tests_first):
        add_document(store, source, f"tests/test_{i}.py", [f"turbine turbine turbine w{i}"], is_test=True)
    return [add_document(store, source, f"src/m{i}.py", [f"turbine quiet words w{i}"])[0] for i in range(ALLOWED)]


@pytest.mark.parametrize(
    ("tests_first", "deep", "scans", "checks"),
    [
        (0, False, 1, 1),  # the first rows checked suffice
        (FIRST_FETCH, False, 2, 3),  # the first fetch holds no allowed row: scanned again deeper
        (SECOND_FETCH, False, 3, 5),  # nor the second: deeper again
        (CHECKED_FIRST, True, 1, 2),  # a deep first fetch: the rest of it is checked too, no second scan
    ],
)
def test_the_list_is_the_filtered_querys_and_scans_once_when_the_first_fetch_holds_enough(
    store, monkeypatch, tests_first, deep, scans, checks
):
    if deep:  # as after a first fetch that fell short
        store.keywords.first_fetch_factor = sqlite_words.DEEP_FIRST_FETCH_FACTOR
    allowed_ids = _crowded_by_tests(store, tests_first)
    counted = {"scans": 0, "checks": 0, "checked": []}
    real_ranked, real_allowed = lexical.ranked, lexical.allowed

    def ranked(*args, **kwargs):
        counted["scans"] += 1
        return real_ranked(*args, **kwargs)

    def allowed(store_, ids, *args, **kwargs):
        counted["checks"] += 1
        counted["checked"].append(len(ids))
        return real_allowed(store_, ids, *args, **kwargs)

    query, no_tests = KeywordQuery(("turbine",)), ChunkFilter(test_files="excluded")
    joined = store.keywords.ranked("porter", query, no_tests, LIMIT, weights=(1.0, 1.0), selective=True).ranked
    monkeypatch.setattr(lexical, "ranked", ranked)
    monkeypatch.setattr(lexical, "allowed", allowed)
    found = store.keywords.ranked("porter", query, no_tests, LIMIT, weights=(1.0, 1.0)).ranked

    assert [r.chunk_id for r in found] == allowed_ids[:LIMIT]  # equal scores: ties by id
    assert found == joined
    assert (counted["scans"], counted["checks"]) == (scans, checks)
    assert counted["checked"][0] <= CHECKED_FIRST


def test_a_first_fetch_that_fell_short_makes_the_next_ones_deeper(store, monkeypatch):
    """A store whose filter hid every row of one first fetch (most top matches are tests)
    fetches DEEP_FIRST_FETCH_FACTOR rows a row from then on: the same list, one scan."""
    allowed_ids = _crowded_by_tests(store, FIRST_FETCH)  # the first fetch holds only tests
    scans = {"n": 0}
    real_ranked = lexical.ranked

    def ranked(*args, **kwargs):
        scans["n"] += 1
        return real_ranked(*args, **kwargs)

    monkeypatch.setattr(lexical, "ranked", ranked)
    query, no_tests = KeywordQuery(("turbine",)), ChunkFilter(test_files="excluded")
    lists = []
    for _ in range(2):
        scans["n"] = 0
        found = store.keywords.ranked("porter", query, no_tests, LIMIT, weights=(1.0, 1.0)).ranked
        lists.append(([r.chunk_id for r in found], scans["n"]))
    assert lists == [(allowed_ids[:LIMIT], 2), (allowed_ids[:LIMIT], 1)]
    assert store.keywords.first_fetch_factor == sqlite_words.DEEP_FIRST_FETCH_FACTOR
    assert LIMIT * sqlite_words.DEEP_FIRST_FETCH_FACTOR >= FIRST_FETCH + LIMIT  # why one scan then suffices
