"""Searching and other writes while an indexer works; two indexers on one store.

The indexer runs in a forked process (as the GUI's index process or a second
terminal would); the test process plays the user: searching through the engine and
through the CLI, adding a source and saving settings meanwhile.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import signal
import threading
import time
from pathlib import Path

import pytest

from kenning.cli.main import main
from kenning.core.errors import StoreLockedError
from kenning.embedding import FakeEmbedder
from kenning.ingest.indexer import Indexer
from kenning.ingest.sources import add_source
from kenning.search.engine import SearchEngine, SearchOptions
from kenning.storage import connection as connection_module
from kenning.storage import open_store
from kenning.storage.settings import set_setting
from kenning_testing import document_count
from reliability.helpers import assert_healthy, count, diff_snapshots, note, pick, snapshot, write_files

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")

N_FILES = pick(200, 3000)


class SlowFake(FakeEmbedder):
    """Phase 2 that takes a while, so the test has time to act during it."""

    def embed_batch(self, texts):
        time.sleep(0.01)
        return super().embed_batch(texts)


def _fork_indexer(db: Path, result: Path, *, wait: float = 0.0, lock=True) -> int:
    pid = os.fork()
    if pid:
        return pid
    code = 0
    try:
        store = open_store(db)
        real_lock = store.indexing_lock

        @contextlib.contextmanager
        def announced(*args, **kwargs):  # tells the test when this indexer holds the lock
            with real_lock(*args, **kwargs):
                Path(str(result) + ".locked").touch()
                yield

        store.indexing_lock = (lambda *a, **k: contextlib.nullcontext()) if not lock else announced
        run = Indexer(store, SlowFake, lock_wait_seconds=wait).run()
        errors = [e for r in run.reports for e in r.errors]
        result.write_text(json.dumps({"errors": errors, "added": sum(r.added for r in run.reports)}))
        store.close()
    except StoreLockedError as exc:
        result.write_text(json.dumps({"locked": str(exc)}))
    except BaseException as exc:
        result.write_text(json.dumps({"crash": f"{type(exc).__name__}: {exc}"}))
        code = 3
    finally:
        os._exit(code)


_REAPED: dict[int, int] = {}


def _wait(pid: int, timeout: float = 300) -> int:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not _running(pid):
            return _REAPED.pop(pid)
        time.sleep(0.01)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    raise AssertionError("indexer did not finish")


def _running(pid: int) -> bool:
    if pid in _REAPED:
        return False
    done, status = os.waitpid(pid, os.WNOHANG)
    if done:
        _REAPED[pid] = status
    return not done


def _cli(db: Path, *argv: str) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main(["--store", str(db), "--model", "fake", *argv])
    return rc, err.getvalue()


@pytest.fixture
def corpus(tmp_path):
    notes = write_files(tmp_path / "notes", {f"d{i % 10}/n{i:04}.md": note(i, 200) for i in range(N_FILES)})
    extra = write_files(tmp_path / "extra", {"e.md": "# Extra\n\nadded while indexing\n"})
    db = tmp_path / "store" / "k.db"
    store = open_store(db)
    add_source(store, notes)
    store.close()
    return {"db": db, "notes": notes, "extra": extra, "tmp": tmp_path}


def test_search_and_writes_during_indexing_never_see_a_locked_store(corpus):
    db, result = corpus["db"], corpus["tmp"] / "result.json"
    pid = _fork_indexer(db, result)
    store = open_store(db)
    engine = SearchEngine(store, FakeEmbedder())
    searches = cli_calls = writes = 0
    added_extra = False
    stop = threading.Event()
    writer_errors: list[str] = []
    writer_count = [0]

    def gui_saving_settings():
        # Small, frequent commits from another connection: each one can invalidate the
        # indexer's read snapshot mid-transaction (what made it report "locked").
        own = open_store(db)
        try:
            while not stop.is_set():
                try:
                    set_setting(own, "ui.window", str(writer_count[0]))
                    writer_count[0] += 1
                except Exception as exc:
                    writer_errors.append(f"{type(exc).__name__}: {exc}")
                time.sleep(0.003)
        finally:
            own.close()

    writer = threading.Thread(target=gui_saving_settings)
    writer.start()
    try:
        while _running(pid):
            for mode in ("lexical", "hybrid"):
                engine.search("w5 details note", SearchOptions(mode=mode, limit=5))
                searches += 1
            rc, err = _cli(db, "search", "--mode", "lexical", "w7")
            assert rc == 0 and not err, err
            cli_calls += 1
            set_setting(store, "ui.last_query", f"w{searches}")  # what a GUI saves
            writes += 1
            if not added_extra:
                rc, err = _cli(db, "sources", "add", str(corpus["extra"]))
                assert rc == 0, err
                added_extra = True
            time.sleep(0.02)
    finally:
        status = _wait(pid)
        stop.set()
        writer.join()
    outcome = json.loads(result.read_text())
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, outcome
    assert outcome["errors"] == [], outcome["errors"][:5]
    assert writer_errors == [] and writer_count[0] > 50, (writer_errors[:3], writer_count)
    writes += writer_count[0]
    assert outcome["added"] >= N_FILES
    assert searches > 10 and cli_calls > 3 and added_extra
    # The indexer was busy the whole time and the store is whole.
    assert document_count(store) >= N_FILES
    store.close()
    assert_healthy(db)
    count("concurrency: searches run while indexing", searches + cli_calls)
    count("concurrency: writes made while indexing", writes + 1)


def test_second_indexer_refuses_clearly_while_first_runs(corpus):
    db, result = corpus["db"], corpus["tmp"] / "first.json"
    pid = _fork_indexer(db, result)
    try:
        locked = Path(str(result) + ".locked")
        deadline = time.monotonic() + 60
        while not locked.exists():  # the first indexer holds the lock
            assert time.monotonic() < deadline and _running(pid), "the first indexer never took the lock"
            time.sleep(0.01)
        assert _running(pid)
        store = open_store(db)
        started = time.monotonic()
        with pytest.raises(StoreLockedError, match="Another Kenning indexer"):
            Indexer(store, FakeEmbedder).run()
        assert time.monotonic() - started < 2, "refusing must be quick"
        store.close()
        rc, err = _cli(db, "index")
        assert rc == 2 and err.startswith("kenning: Another Kenning indexer") and "Traceback" not in err
    finally:
        status = _wait(pid)
    assert os.WEXITSTATUS(status) == 0 and json.loads(result.read_text())["errors"] == []
    assert_healthy(db)


def test_two_indexers_started_together_serialise_and_match_a_clean_run(corpus, tmp_path):
    clean_db = tmp_path / "clean" / "k.db"
    clean_db.parent.mkdir()
    store = open_store(clean_db)
    add_source(store, corpus["notes"])
    Indexer(store, FakeEmbedder).run()
    clean = snapshot(store)
    store.close()

    db = corpus["db"]
    results = [tmp_path / "a.json", tmp_path / "b.json"]
    pids = [_fork_indexer(db, r, wait=300) for r in results]
    statuses = [_wait(pid) for pid in pids]
    assert all(os.WIFEXITED(s) and os.WEXITSTATUS(s) == 0 for s in statuses)
    outcomes = [json.loads(r.read_text()) for r in results]
    assert all(o["errors"] == [] for o in outcomes), outcomes
    # One did the work, the other waited for the lock and found nothing left to do.
    assert sorted(o["added"] for o in outcomes) == [0, N_FILES]
    assert_healthy(db)
    store = open_store(db)
    assert not diff_snapshots(_sans_mtimes(clean), _sans_mtimes(snapshot(store)))
    store.close()


def test_even_without_the_lock_two_indexers_cannot_corrupt_the_store(corpus, tmp_path):
    """Defence in depth (a lock file on a network share may not lock): SQLite's own
    transactions keep the store whole; the next normal run completes it."""
    db = corpus["db"]
    results = [tmp_path / "a.json", tmp_path / "b.json"]
    pids = [_fork_indexer(db, r, lock=False) for r in results]
    for pid in pids:
        _wait(pid)
    assert_healthy(db)
    store = open_store(db)
    Indexer(store, FakeEmbedder).run()
    assert document_count(store) == N_FILES
    assert store.vectors.count_pending() == 0
    store.close()
    assert_healthy(db)


def test_busy_store_gives_a_clear_message_not_database_is_locked(corpus, monkeypatch):
    """A writer blocked past the busy timeout: the CLI explains, never a traceback."""
    db = corpus["db"]
    monkeypatch.setattr(connection_module, "BUSY_TIMEOUT_MS", 200)
    holder = open_store(db)
    holder.conn.execute("BEGIN IMMEDIATE")  # another process mid-write, for too long
    try:
        rc, err = _cli(db, "sources", "add", str(corpus["extra"]))
        assert rc == 2
        assert "busy" in err and "Traceback" not in err and "database is locked" not in err, err
        rc, err = _cli(db, "index", "--no-embed")
        assert rc == 2 and "busy" in err and "database is locked" not in err, err
    finally:
        holder.conn.execute("ROLLBACK")
        holder.close()


def _sans_mtimes(snap: dict) -> dict:
    return {k: v for k, v in snap.items() if k != "sources"}


def test_a_transaction_that_reads_first_survives_another_connections_commit(tmp_path):
    """The indexer's batch transactions read (is the document known?) before they
    write.  If another connection commits in between, a deferred transaction can no
    longer write: SQLite answers SQLITE_BUSY at once, busy timeout or not.  Store.atomic
    takes the write lock up front so the other writer waits instead."""
    db = tmp_path / "k.db"
    indexer_side, gui_side = open_store(db), open_store(db)
    other_error: list[BaseException] = []

    def gui_write():
        try:
            set_setting(gui_side, "ui.theme", "dark")
        except BaseException as exc:
            other_error.append(exc)

    try:
        with indexer_side.atomic():
            document_count(indexer_side)  # the read
            other = threading.Thread(target=gui_write)
            other.start()
            other.join(timeout=0.3)  # it commits now, or waits for us
            set_setting(indexer_side, "phase", "text")  # the write
        other.join(timeout=20)
        assert not other.is_alive() and other_error == []
        assert indexer_side.settings.get("ui.theme") == "dark"
        assert indexer_side.settings.get("phase") == "text"
    finally:
        indexer_side.close()
        gui_side.close()
