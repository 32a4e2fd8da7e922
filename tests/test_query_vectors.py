"""Remembered query vectors (issue #15): a search repeated in a new process needs no model.

Each `main()` call below is a new command with its own workspace, engine and embedder,
as a new process would have; the store is all they share.
"""

from __future__ import annotations

import time

import apsw
import numpy as np
import pytest

from kenning.cli.main import main
from kenning.core.errors import KenningError
from kenning.embedding import FakeEmbedder
from kenning.search.remembered import RememberingEmbedder
from kenning.storage import open_store
from kenning.storage import query_vectors as repo
from kenning_testing import cli_indexed, json_hits, write_files

FP = "model|3|v1"


def _vec(*values: float) -> np.ndarray:
    return np.asarray(values, dtype=np.float32)


# -- the table -------------------------------------------------------------------------


def test_a_remembered_vector_is_the_exact_vector_under_its_own_fingerprint(store):
    vector = _vec(0.1, -0.7, 0.7)
    assert repo.remember(store, FP, {"write ahead log": vector}, (), now=1.0, cap=1000)
    found = repo.recall(store, FP, "write ahead log", 3)
    assert found is not None and found[0].tobytes() == vector.tobytes() and found[1] == 1.0
    assert repo.recall(store, "other model|3|v1", "write ahead log", 3) is None
    assert repo.recall(store, FP, "write ahead", 3) is None  # the exact text only
    assert repo.recall(store, FP, "write ahead log", 4) is None  # a vector of another size is no answer


def test_the_least_recently_used_queries_are_dropped_beyond_the_cap(store):
    for number in range(5):
        repo.remember(store, FP, {f"q{number}": _vec(number, 0, 1)}, (), now=float(number), cap=3)
    assert repo.count(store) == 3
    assert repo.recall(store, FP, "q0", 3) is None and repo.recall(store, FP, "q2", 3) is not None
    repo.remember(store, FP, {}, ["q2"], now=10.0, cap=3)  # q2 used again: now the most recent
    repo.remember(store, FP, {"q5": _vec(5, 0, 1)}, (), now=11.0, cap=3)
    assert repo.recall(store, FP, "q2", 3) is not None and repo.recall(store, FP, "q3", 3) is None
    assert repo.count(store) == 3


def test_a_fresh_store_remembers_nothing(tmp_path):
    store = open_store(tmp_path / "new.db")
    try:
        assert repo.count(store) == 0
    finally:
        store.close()


def test_writing_to_a_store_another_process_is_writing_gives_up_at_once(store):
    other = apsw.Connection(str(store.path))
    other.execute("BEGIN IMMEDIATE")  # an indexer in the middle of a batch
    try:
        started = time.monotonic()
        assert repo.remember(store, FP, {"q": _vec(1, 0, 0)}, (), now=1.0, cap=1000) is False
        assert time.monotonic() - started < 2  # not the store's 15 s busy timeout
    finally:
        other.execute("ROLLBACK")
        other.close()
    assert repo.remember(store, FP, {"q": _vec(1, 0, 0)}, (), now=1.0, cap=1000) is True


# -- the embedder ----------------------------------------------------------------------


class CountingQueries(FakeEmbedder):
    def __init__(self, **kw) -> None:
        super().__init__(**kw)
        self.queries: list[str] = []
        self.loads = 0

    def load(self) -> None:
        self.loads += 1

    def embed_query(self, text):
        self.queries.append(text)
        return super().embed_query(text)


def test_a_second_embedder_reads_the_vector_and_never_loads_the_model(store):
    first = RememberingEmbedder(CountingQueries(), store)
    assert not first.remembers("wal checkpoint") and first.model.loads == 0
    vector = first.embed_query("wal checkpoint")
    assert first.model.loads == 1 and first.load_seconds is not None
    assert first.save() and repo.count(store) == 1

    model = CountingQueries()
    second = RememberingEmbedder(model, store)
    assert second.remembers("wal checkpoint")
    again = second.embed_query("wal checkpoint")
    assert again.tobytes() == vector.tobytes()
    assert model.queries == [] and model.loads == 0 and second.load_seconds is None
    assert second.fingerprint == model.fingerprint  # known without loading


def test_another_model_never_reads_these_vectors(store):
    first = RememberingEmbedder(CountingQueries(), store)
    first.embed_query("wal checkpoint")
    first.save()
    other_model = CountingQueries(max_tokens=128)  # another vector space: another fingerprint
    other = RememberingEmbedder(other_model, store)
    assert not other.remembers("wal checkpoint")
    other.embed_query("wal checkpoint")
    assert other_model.queries == ["wal checkpoint"]


def test_vectors_not_saved_while_the_store_is_busy_are_saved_by_the_next_save(store):
    embedder = RememberingEmbedder(CountingQueries(), store)
    embedder.embed_query("wal checkpoint")
    other = apsw.Connection(str(store.path))
    other.execute("BEGIN IMMEDIATE")
    try:
        assert embedder.save() is False
    finally:
        other.execute("ROLLBACK")
        other.close()
    assert repo.count(store) == 0
    assert embedder.save() is True and repo.count(store) == 1


def test_a_model_handed_over_again_keeps_the_searchers_memory_and_engine(tmp_path):
    """A host hands its Searcher the loaded model before every request (serve.warm, the
    MCP tools, the app's window): the same model keeps the same wrapper and meaning engine,
    so what it embedded is saved and the engine's caches are not started afresh."""
    from kenning.workspace import Workspace

    workspace = Workspace(tmp_path / "store" / "kenning.db")
    try:
        model = CountingQueries()
        searcher = workspace.searcher(model)
        wrapper, engine = searcher.embedder, searcher.engine(True)
        wrapper.embed_query("wal checkpoint")
        searcher.set_model(model)  # what a host does before each request
        assert searcher.embedder is wrapper and searcher.engine(True) is engine
        assert searcher.save_query_vectors(now=True) and repo.count(workspace.store) == 1
        searcher.set_model(CountingQueries())  # another model: its own wrapper and engine
        assert searcher.embedder is not wrapper and searcher.engine(True) is not engine
        searcher.set_model(None, "gone")
        assert searcher.embedder is None and searcher.model_error == "gone"
    finally:
        workspace.close()


# -- the command line ------------------------------------------------------------------


@pytest.fixture
def db(tmp_path, capsys):
    notes = write_files(
        tmp_path / "notes",
        {
            "wal.md": "# WAL\n\nwrite ahead logging keeps readers and the writer apart\n",
            "vacuum.md": "# Vacuum\n\nrebuilding the database file gives free pages back\n",
        },
    )
    return cli_indexed(capsys, notes, tmp_path / "k.db")


def _search(capsys, db, *words):
    code = main(["--store", db, "--model", "fake", "search", "--json", "--explain", *words])
    out, err = capsys.readouterr()
    assert code == 0, err
    return json_hits(out), err


def _timeless(hits: list[dict]) -> list[dict]:
    """The hits without what moves with the clock between two searches (recency)."""
    moving = {"recency", "recency_bonus", "final"}
    return [
        {**hit, "score": None, "breakdown": {k: v for k, v in hit["breakdown"].items() if k not in moving}}
        for hit in hits
    ]


def _without_model(monkeypatch):
    def unavailable(self, texts):
        raise AssertionError("the model ran")

    monkeypatch.setattr(FakeEmbedder, "embed_batch", unavailable)


def _model_that_cannot_load(monkeypatch):
    def broken(self):
        raise KenningError("The embedding model files are missing.")

    monkeypatch.setattr(FakeEmbedder, "load", broken, raising=False)


def test_a_repeated_search_gives_the_same_results_without_the_model(db, capsys, monkeypatch):
    from kenning.cli import commands

    monkeypatch.setattr(commands, "MODEL_LOAD_NOTE_MIN_SECONDS", 0.0)  # the fake loads in no time
    first, err = _search(capsys, db, "readers", "writer")
    assert first and "vector" in first[0]["breakdown"]["lists"]
    assert "loading the semantic model took" in err
    _without_model(monkeypatch)
    second, err = _search(capsys, db, "readers", "writer")
    assert _timeless(second) == _timeless(first)  # the same hits, lists, cosines and scores
    assert "loading the semantic model" not in err  # no model was loaded: nothing to state


def test_a_new_query_still_loads_the_model(db, capsys, monkeypatch):
    _search(capsys, db, "readers", "writer")
    _without_model(monkeypatch)
    assert main(["--store", db, "--model", "fake", "search", "free", "pages"]) != 0
    assert "the model ran" in capsys.readouterr().err  # the guard above can fail


def test_a_corrected_query_is_remembered_by_the_words_it_searched(db, capsys, monkeypatch):
    first, _ = _search(capsys, db, "readres", "writer")  # searched as "readers writer"
    assert first and "vector" in first[0]["breakdown"]["lists"]
    _without_model(monkeypatch)
    second, _ = _search(capsys, db, "readres", "writer")
    assert _timeless(second) == _timeless(first)


def test_a_model_that_cannot_load_leaves_a_new_query_on_keywords_with_a_note(db, capsys, monkeypatch):
    _search(capsys, db, "readers", "writer")
    _model_that_cannot_load(monkeypatch)
    hits, _ = _search(capsys, db, "free", "pages")  # not remembered: needs the model
    assert hits and all(h["breakdown"]["lists"].keys() <= {"porter", "trigram"} for h in hits)
    code = main(["--store", db, "--model", "fake", "search", "free", "pages"])
    out = capsys.readouterr().out
    assert code == 0 and "semantic search unavailable (The embedding model files are missing.)" in out
    remembered, _ = _search(capsys, db, "readers", "writer")  # remembered: no model needed
    assert "vector" in remembered[0]["breakdown"]["lists"]


def test_a_search_answers_while_an_indexer_holds_the_write_lock(db, capsys):
    other = apsw.Connection(db)
    other.execute("BEGIN IMMEDIATE")
    try:
        started = time.monotonic()
        hits, _ = _search(capsys, db, "free", "pages")
        assert hits and hits[0]["path"] == "vacuum.md"
        assert time.monotonic() - started < 10  # the store's busy timeout is 15 s
    finally:
        other.execute("ROLLBACK")
        other.close()
    store = open_store(db)
    try:
        assert repo.count(store) == 0  # not remembered this time: the next search will
    finally:
        store.close()
    _search(capsys, db, "free", "pages")
    store = open_store(db)
    try:
        assert repo.count(store) == 1
    finally:
        store.close()


def test_a_read_only_store_is_searched(db, capsys, monkeypatch):
    """The store file 0400 (simulated: root ignores file modes)."""
    real = apsw.Connection

    def read_only(path, *args, **kwargs):
        kwargs["flags"] = apsw.SQLITE_OPEN_READONLY
        return real(path, *args, **kwargs)

    monkeypatch.setattr(apsw, "Connection", read_only)
    hits, _ = _search(capsys, db, "free", "pages")
    assert hits and hits[0]["path"] == "vacuum.md"


def _loads_by_thread(monkeypatch) -> list[str]:
    import threading

    loads: list[str] = []
    monkeypatch.setattr(FakeEmbedder, "load", lambda self: loads.append(threading.current_thread().name), raising=False)
    return loads


def test_a_new_query_starts_loading_the_model_before_the_search_asks_for_it(db, capsys, monkeypatch):
    """Issue #27 item 2: the command line loads the model beside the search's own start
    (Searcher.prepare), not from when the engine wants the query's vector."""
    loads = _loads_by_thread(monkeypatch)
    hits, _ = _search(capsys, db, "readers", "writer")
    assert loads == ["kenning-model-load"] and "vector" in hits[0]["breakdown"]["lists"]


def test_a_query_the_store_remembers_loads_no_model_even_early(db, capsys, monkeypatch):
    _search(capsys, db, "readers", "writer")
    loads = _loads_by_thread(monkeypatch)
    _search(capsys, db, "readers", "writer")
    _search(capsys, db, "readers", "writer", "--mode", "lexical")
    assert loads == []


def test_a_repeated_corrected_query_loads_no_model_early(db, capsys, monkeypatch):
    """A word the index lacks may be corrected, and the corrected query's vector be
    remembered: the model is then left to the search to load, which it does not."""
    _search(capsys, db, "readres", "writer")
    loads = _loads_by_thread(monkeypatch)
    second, _ = _search(capsys, db, "readres", "writer")
    assert loads == [] and "vector" in second[0]["breakdown"]["lists"]
    _search(capsys, db, "readres", "vacuum")  # a new one: loaded when the search asks
    assert loads == ["kenning-query-embed_0"]
