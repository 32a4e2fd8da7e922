"""A search asks the store's change token once, and still sees every write made before it
(#23 item 8: on a team store each ask is a round trip; a hybrid query asked ~30 times).
The SQLite store's vector scan checks the token for itself (a local read): the search
layer's asks are counted on both backends, every ask on the team store."""

from __future__ import annotations

import sys

import pytest

from kenning.search.engine import SearchEngine, SearchOptions
from kenning.storage import open_store
from kenning.storage.postgres import open_pg_store
from kenning.storage.postgres.store import PostgresStore
from kenning_testing import CountingEmbedder, index_folder, reindex, write_files

NOTES = {
    "failover.md": "# Database failover\n\nPromote the replica when the primary is down; the replica takes the writes.\n",
    "deploy.md": "# Deploys\n\nRoll back a bad deploy with the previous image, then tell the on-call engineer.\n",
    "tests/test_replica.md": "# Replica tests\n\nThe replica lag test waits for the primary.\n",
}
QUERIES = [
    ("replica primary failover deploy engineer", "hybrid"),
    ("replcia promote", "hybrid"),  # a typo: the vocabulary and the scope counts are asked too
    ("rollback image on-call", "lexical"),
    ("zeppelin", "hybrid"),  # found nowhere
]


@pytest.fixture(params=["sqlite", "postgresql"])
def store(request, tmp_path):
    opened = (
        open_store(tmp_path / "kenning.db")
        if request.param == "sqlite"
        else open_pg_store(request.getfixturevalue("pg_url"))
    )
    yield opened
    opened.close()


def _count_versions(store) -> list[str]:
    """The modules that ask store.version(), one entry a call."""
    asked: list[str] = []
    version = store.version

    def counted():
        asked.append(sys._getframe(1).f_globals["__name__"])
        return version()

    store.version = counted
    return asked


def test_a_search_reads_the_change_token_once(tmp_path, store):
    embedder = CountingEmbedder()
    index_folder(store, write_files(tmp_path / "notes", NOTES), embedder, name="notes")
    engine = SearchEngine(store, embedder)
    asked = _count_versions(store)
    for text, mode in QUERIES:
        asked.clear()
        engine.search(text, SearchOptions(limit=5, mode=mode))
        by_search = [name for name in asked if name.startswith("kenning.search.")]
        assert len(by_search) == 1, f"{text!r} ({mode}) read the change token {len(by_search)} times: {by_search}"
        if isinstance(store, PostgresStore):  # nothing below the search asks it either (each ask is a round trip)
            assert len(asked) == 1, asked


def test_a_write_between_two_searches_is_seen_by_the_second(tmp_path, store):
    embedder = CountingEmbedder()
    folder = write_files(tmp_path / "notes", NOTES)
    index_folder(store, folder, embedder, name="notes")
    engine = SearchEngine(store, embedder)
    first = engine.search("zeppelin replica", SearchOptions(limit=5, mode="hybrid"))
    assert engine.term_stats.count("zeppelin") == 0
    assert all("zeppelin" not in h.snippet.lower() for h in first.hits)
    write_files(folder, {"airship.md": "# Airships\n\nThe zeppelin carried its replica of the mail.\n"})
    reindex(store, embedder)
    second = engine.search("zeppelin replica", SearchOptions(limit=5, mode="hybrid"))
    assert second.hits and second.hits[0].path == "airship.md"
    assert engine.term_stats.count("zeppelin") == 1
    assert not engine.search("zeppelin", SearchOptions(limit=5, mode="lexical")).suggestion


def test_the_feedback_words_counts_are_read_in_one_ask(tmp_path, store):
    embedder = CountingEmbedder()
    index_folder(store, write_files(tmp_path / "notes", NOTES), embedder, name="notes")
    engine = SearchEngine(store, embedder)
    asks: list[int] = []
    counts_of, counts = store.terms.counts_of, store.terms.counts

    def asked(how_many: int) -> None:
        if sys._getframe(2).f_globals["__name__"] == "kenning.search.feedback":
            asks.append(how_many)

    store.terms.counts_of = lambda terms: asked(len(terms)) or counts_of(terms)
    store.terms.counts = lambda term: asked(1) or counts(term)
    result = engine.search("replica primary failover", SearchOptions(limit=5, mode="hybrid"))
    assert result.expansion, "no feedback words: nothing was counted"
    assert len(asks) == 1 and asks[0] > 1, asks


def test_the_query_words_counts_and_scope_are_read_in_one_ask_each(tmp_path, store):
    index_folder(store, write_files(tmp_path / "notes", NOTES), None, name="notes")
    engine = SearchEngine(store)
    asks: list[str] = []
    counts_of, chunks_with = store.terms.counts_of, store.terms.chunks_with
    store.terms.counts_of = lambda terms: asks.append("counts_of") or counts_of(terms)
    store.terms.chunks_with = lambda words: asks.append(words) or chunks_with(words)
    count_each, count_together = store.terms.count_each, store.terms.count_together
    store.terms.count_each = lambda words, cap, scope=None: asks.append("count_each") or count_each(words, cap, scope)

    def together(*args):
        if sys._getframe(1).f_globals["__name__"].startswith("kenning.search."):  # not the backend's own loop
            asks.append("count_together")
        return count_together(*args)

    store.terms.count_together = together
    result = engine.search("the replica takes the writes when the primary is down", SearchOptions(limit=5))
    assert result.hits
    assert asks == ["counts_of", "count_each"], asks  # how often each word occurs; whether in the chunks searched
    asks.clear()
    engine.search("replica re-entry", SearchOptions(limit=5))  # a hyphenated word is a phrase: counted alone
    assert asks == ["re-entry"]
