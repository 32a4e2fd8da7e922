"""Background work for the window: search, model loading, indexing, stats.

Every long call runs off the UI thread (normcap style: a QRunnable doing the work and
a QObject whose signals carry the answer back).  Each worker family owns its own
Store, because apsw serialises use of one connection and the indexer holds long
transactions:

* search store  – one Searcher (workspace.searcher: the engines and their caches, the
  model) used by one search thread, under a lock it shares with the app's service when
  the app serves (gui.service_host: one copy of the engines, scan and page cache for both);
  a window search waits for that lock at most SHARED_SEARCHER_WAIT_SECONDS, then searches
  on a spare connection of its own; with a team store attached the window searches its
  own Workspace (personal + team), the shared one staying the personal store's alone;
* index store   – opened inside the indexing thread for the run's duration;
* stats store   – the stats reader's own Workspace, so counting never holds the
  window's connection;
* the window's  – settings and layout (small reads at start and close); source changes
  run on SourceJobs' worker with a Workspace of their own.

Failures are logged with their tracebacks (workspace.report) and reach the user as
words, never as str(exc).
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Literal

from PySide6.QtCore import QObject, QRunnable, QThreadPool, QTimer, Signal

from kenning.core.logger import get_logger
from kenning.core.records import Record
from kenning.embedding import QUERY_THREADS, Embedder
from kenning.gui.index_process import run_in_child
from kenning.search.engine import SearchEngine
from kenning.workspace import Settings, Workspace, report
from kenning.workspace.searcher import (
    SAVE_QUERY_VECTORS_AFTER_PAUSE_SECONDS,
    SAVE_QUERY_VECTORS_RETRIES_AFTER_PAUSE,
    Searcher,
)

log = get_logger(__name__)

# A window search waits at most this long for the Searcher it shares with the app's
# service while the service answers another program with it (a served search takes
# 0.1-0.5 s at 100k chunks on a loaded 2-core machine; an assistant's `index` can take
# minutes); past that it searches on a spare connection of its own, made then and
# closed at the next search that gets its turn.  A newer query ends the wait at once.
SHARED_SEARCHER_WAIT_SECONDS = 1.0
TURN_POLL_SECONDS = 0.02  # how often a waiting search looks whether it was superseded


class _Task(QRunnable):
    """Runs a callable in a pool thread; the callable reports through signals."""

    def __init__(self, fn: Callable[[], None]) -> None:
        super().__init__()
        self._fn = fn

    def run(self) -> None:
        self._fn()


class EmbedderHolder:
    """Loads the model once (1-2 s), on whichever worker thread asks first."""

    def __init__(self, factory: Callable[[], Embedder]) -> None:
        self.factory = factory
        self._lock = threading.Lock()
        self._embedder: Embedder | None = None
        self.error: str | None = None  # why the model could not be loaded, in the user's words

    def get(self) -> Embedder:
        with self._lock:
            if self._embedder is None:
                self._embedder = self.factory()
            return self._embedder


# -- search --------------------------------------------------------------------------


class SearchRequest(Record, frozen=True):
    request_id: int
    text: str
    mode: str
    settings: Settings | None = None  # the window's: in effect before the store has them


class SearchService(QObject):
    """Runs queries on one thread; only the newest request's answer reaches the UI."""

    results = Signal(int, object)  # request id, SearchResult (latest only)
    totals = Signal(int, object)  # request id, MatchTotal: counted just after the results were sent
    failed = Signal(int, str)
    model_ready = Signal(str)  # model name, or "" when semantic search is unavailable
    related = Signal(int, object)  # chunk id, list[RelatedNote] (nearest files by meaning)
    _done = Signal(int, object)  # emitted from the worker thread, filtered on the UI side
    _counted = Signal(int, object)
    _error = Signal(int, str)
    _loaded = Signal(object, str)  # embedder or None, error text
    _unsaved = Signal()  # the save after a pause found the store busy (worker side)
    team_lost = Signal(str)  # the team store failed a search: searching the personal store alone

    def __init__(self, store_path: Path, holder: EmbedderHolder, parent=None) -> None:
        super().__init__(parent)
        self.store_path = Path(store_path)
        self.workspace = Workspace(store_path)  # this thread family's own connection
        # The personal store's Searcher, under `lock`: the search thread's, and the app's
        # service's too when it serves (gui.service_host lends both to serve.warm).
        self.searcher = self.workspace.searcher()
        self.lock = threading.RLock()
        self._together: Searcher | None = None  # a team store attached: the window's own Searcher
        self._spare: Searcher | None = None  # the window's while the shared one was busy too long
        self._model: Embedder | None = None  # the window's model once loaded (the UI thread sets it)
        self._model_error: str | None = None
        self.holder = holder
        self.pool = QThreadPool(self)
        self.pool.setMaxThreadCount(1)  # one engine, one query at a time; the rest wait or get skipped
        self.loader_pool = QThreadPool(self)
        self.loader_pool.setMaxThreadCount(1)
        self._latest = 0
        self._closed = False
        self._done.connect(self._deliver)
        self._counted.connect(self._deliver_total)
        self._error.connect(self._deliver_error)
        self._loaded.connect(self._on_loaded)
        # Once the searches pause, what they embedded is written for the other front ends.
        self._remember = QTimer(self, singleShot=True, interval=int(SAVE_QUERY_VECTORS_AFTER_PAUSE_SECONDS * 1000))
        self._remember.timeout.connect(self._save_query_vectors)
        self._save_retries_left = SAVE_QUERY_VECTORS_RETRIES_AFTER_PAUSE
        self._unsaved.connect(self._retry_save)

    @property
    def engine(self) -> SearchEngine | None:
        """The engine meaning searches run on, once the model is in (for tests and benchmarks)."""
        with self.lock:
            searcher = self._together or self.searcher
            return searcher.engine(True) if searcher.embedder is not None else None

    @property
    def lexical(self) -> SearchEngine:
        with self.lock:
            return (self._together or self.searcher).engine(False)

    # The UI thread calls these.
    def submit(self, text: str, mode: str, settings: Settings | None = None) -> int:
        self._latest += 1
        if self._closed:
            return self._latest
        request = SearchRequest(self._latest, text, mode, settings)
        self.pool.start(_Task(lambda: self._run(request)))
        return request.request_id

    def find_related(self, chunk_id: int) -> None:
        """Queue the related-notes lookup for a selected hit (after any pending search).

        How many it lists is the searcher's default (search.fusion.RELATED_LIMIT), the same
        number the CLI and the MCP server use."""
        if self._closed or self._model is None:
            self.related.emit(chunk_id, None)  # None: no model (yet), nothing to compare with
            return
        asked_at = self._latest

        def run() -> None:
            if self._latest != asked_at:
                return  # a newer search came in meanwhile: it goes first, this answer would be stale
            try:
                with self._turn(asked_at) as searcher:
                    notes = searcher.related_notes(chunk_id)
            except _NoTurn:
                return  # superseded while the service had the searcher
            except Exception:  # a lookup that fails leaves the list empty, never the window broken
                log.exception("related notes for chunk %s failed", chunk_id)
                notes = []
            try:
                self.related.emit(chunk_id, notes)
            except RuntimeError:  # the window is gone
                pass

        self.pool.start(_Task(run))

    # -- a team store searched together with the personal one (gui/team_store.py) --------

    @property
    def team_attached(self) -> bool:
        return self._together is not None

    def attach_team(self, target: str) -> None:
        """Search the team store at target together with the personal one (on the search
        thread, each with a connection of the window's own: the shared Searcher stays the
        personal store's, which is what the CLI and assistants the app serves must see);
        a failure is said through team_lost."""

        def run() -> None:
            if self._together is not None:
                return
            together = Workspace(self.store_path)
            try:
                together.also(Workspace(target))
            except Exception as exc:
                together.close()
                self._emit_team_lost(report(exc, target, doing="searching the team store too"))
                return
            self._together = together.searcher(self._model, self._model_error)

        self.pool.start(_Task(run))

    def detach_team(self) -> None:
        self.pool.start(_Task(self._detach))

    def _detach(self) -> None:
        """Worker side: the personal store alone again (the team's connections closed)."""
        together, self._together = self._together, None
        if together is not None:
            self._close_searcher(together)

    def _emit_team_lost(self, message: str) -> None:
        try:
            self.team_lost.emit(message)
        except RuntimeError:  # the window is gone
            pass

    def cancel_pending(self) -> None:
        """Newer input (or an empty box) supersedes everything in flight."""
        self._latest += 1

    @property
    def latest(self) -> int:
        return self._latest

    def load_model(self) -> None:
        if self._closed:
            return
        self.loader_pool.start(_Task(self._load))

    def is_stale(self, request_id: int) -> bool:
        return request_id != self._latest

    def shutdown(self) -> None:
        self._closed = True
        self._remember.stop()
        self.cancel_pending()
        self.pool.clear()
        self.pool.waitForDone(5000)
        self.loader_pool.waitForDone(10000)
        self._detach()  # (each closed Searcher saves its query vectors first)
        self._drop_spare()
        self._write_query_vectors(now=True)  # what was searched here is remembered for the next process
        with self.lock:  # (the app's service stops before its window: gui.app)
            self.workspace.close()

    # The search thread's turn with a Searcher.
    @contextlib.contextmanager
    def _turn(self, request_id: int | None = None, *, spare: bool = True) -> Iterator[Searcher]:
        """The Searcher this search thread may use now, with the window's model: the team
        one while a team store is attached (the window's alone); else the shared one under
        `lock`, waited for at most SHARED_SEARCHER_WAIT_SECONDS, then the spare (spare=False:
        _NoTurn instead).  _NoTurn too when request_id is superseded while waiting."""
        if self._together is not None:
            yield self._with_model(self._together)
            return
        deadline = time.monotonic() + SHARED_SEARCHER_WAIT_SECONDS
        while not self.lock.acquire(timeout=TURN_POLL_SECONDS):
            if request_id is not None and self.is_stale(request_id):
                raise _NoTurn("superseded")
            if time.monotonic() >= deadline:
                if not spare:
                    raise _NoTurn("the service is using the searcher")
                if self._spare is None:
                    log.info(
                        "the service kept the searcher over %g s: this search uses a spare connection",
                        SHARED_SEARCHER_WAIT_SECONDS,
                    )
                    self._spare = Workspace(self.store_path).searcher()
                yield self._with_model(self._spare)
                return
        try:
            if request_id is not None and self.is_stale(request_id):
                raise _NoTurn("superseded")  # while it waited, however briefly
            self._drop_spare()
            yield self._with_model(self.searcher)
        finally:
            self.lock.release()

    def _with_model(self, searcher: Searcher) -> Searcher:
        """The window's model on this searcher, once the window has it (the same object is
        kept: workspace.searcher); a service request meanwhile may have set its own view."""
        if self._model is not None or self._model_error is not None:
            searcher.set_model(self._model, self._model_error)
        return searcher

    def _drop_spare(self) -> None:
        spare, self._spare = self._spare, None
        if spare is not None:
            self._close_searcher(spare)

    @staticmethod
    def _close_searcher(searcher: Searcher) -> None:
        try:
            searcher.save_query_vectors(now=True)
        except Exception:
            log.exception("remembering the query vectors failed")
        searcher.workspace.close()

    # Worker side.
    def _run(self, request: SearchRequest) -> None:
        if self.is_stale(request.request_id):
            return  # superseded while queued: never started
        try:
            lost = self._answer(request)
            if lost is not None:  # the team store failed (unreachable, restarting): the personal store answers
                self._answer(request, lost)
        except _NoTurn:
            pass  # superseded while the service had the searcher

    def _answer(self, request: SearchRequest, team_lost: str | None = None) -> str | None:
        """One search and its total, within one turn; what the team store's failure said
        when it was searched together and failed (the caller then searches again)."""
        with self._turn(request.request_id) as searcher:
            try:
                # "Results shown" counts the list's files, not chunks (a few long files never fill it alone).
                result = searcher.search(request.text, request.mode, by_file=True, settings=request.settings)
            except Exception as exc:  # a bad query must never kill the worker
                if searcher is self._together:
                    message = report(exc, self.store_path, doing="searching the team store too")
                    self._detach()
                    self._emit_team_lost(message)
                    return message
                self._error.emit(request.request_id, report(exc, self.store_path, doing=f"searching {request.text!r}"))
                return None
            if team_lost is not None:
                result.notes.append(team_lost)
            self._done.emit(request.request_id, result)
            self._count(request.request_id, result)
            self._save(searcher, now=False)  # at most every so often (workspace.searcher)
        return None

    def _count(self, request_id: int, result) -> None:
        """The true total, after the hits are on their way: counting never delays them."""
        if result.counter is None or result.total is not None or self.is_stale(request_id):
            return
        try:
            total = result.counter()
        except Exception:  # the hits are shown; only the total is missing
            log.exception("counting the matches of %r failed", result.query)
            return
        self._counted.emit(request_id, total)

    def _load(self) -> None:
        try:
            embedder = self.holder.get()
        except Exception as exc:  # missing model files, broken download: stay lexical
            self._loaded.emit(None, report(exc, self.store_path, doing="loading the embedding model"))
            return
        self._loaded.emit(embedder, "")

    # UI side.
    def _on_loaded(self, embedder, error: str) -> None:
        if embedder is None:
            self.holder.error = error
            self._model_error = error
            self.pool.start(_Task(self._adopt))
            self.model_ready.emit("")
            return
        if self._closed:
            return
        self._model = embedder  # every turn from here on searches with it (_with_model)
        # On the search thread, before any meaning search: it would wait for the vectors.
        self.pool.start(_Task(self._adopt))
        self.model_ready.emit(embedder.model_id)

    def _adopt(self) -> None:
        """Worker side: the searcher gets the model, and reads the scan's copy of the vectors
        now (a search queued meanwhile runs after it, as it would have read them anyway)."""
        if self._closed:
            return
        try:
            with self._turn(spare=False) as searcher:
                if self._model is not None:
                    searcher.warm()
        except _NoTurn:
            pass  # the service is busy with it: the first search reads them
        except Exception:  # the first search reads them again and reports what fails
            log.exception("reading the vectors ahead of the first search failed")

    def _deliver(self, request_id: int, result) -> None:
        if not self.is_stale(request_id):
            self.results.emit(request_id, result)
        if not self._closed:
            self._save_retries_left = SAVE_QUERY_VECTORS_RETRIES_AFTER_PAUSE
            self._remember.start()  # again: the pause is counted from the last answer

    def _save_query_vectors(self) -> None:
        """UI side, once the searches pause: the save runs on the search thread, after any
        search queued meanwhile (the searcher is that thread's)."""
        if self._closed:
            return
        self.pool.start(_Task(self._save_after_pause))

    def _save_after_pause(self) -> None:
        """Worker side: a save that found the store busy is tried again (_retry_save)."""
        if not self._closed and not self._write_query_vectors(now=True):
            self._unsaved.emit()

    def _retry_save(self) -> None:
        """UI side: once more after another pause, a bounded number of times (a read-only
        store is never written; its vectors are only kept for the app's lifetime)."""
        if self._closed or self._save_retries_left <= 0:
            return
        self._save_retries_left -= 1
        self._remember.start()

    def _write_query_vectors(self, *, now: bool) -> bool:
        """Worker side (or at shutdown): best effort, a failure is only logged.  False when
        nothing could be written: the store was busy, or the service held the searcher."""
        try:
            with self._turn(spare=False) as searcher:
                return self._save(searcher, now=now)
        except _NoTurn:
            return False  # the service has it: it saves them on its own schedule, or a retry does

    @staticmethod
    def _save(searcher: Searcher, *, now: bool) -> bool:
        try:
            return searcher.save_query_vectors(now=now)
        except Exception:
            log.exception("remembering the query vectors failed")
            return False

    def _deliver_total(self, request_id: int, total) -> None:
        if not self.is_stale(request_id):
            self.totals.emit(request_id, total)

    def _deliver_error(self, request_id: int, message: str) -> None:
        if not self.is_stale(request_id):
            self.failed.emit(request_id, message)


class _NoTurn(Exception):
    """The search thread did not get the shared Searcher (superseded, or not worth a spare)."""


# -- indexing ------------------------------------------------------------------------


class IndexService(QObject):
    """One indexing run at a time, in a child process (see index_process) with its own Store."""

    started = Signal()
    progress = Signal(object)  # Progress, at most every PROGRESS_INTERVAL (phase changes always)
    finished = Signal(object, str)  # IndexRun or None, error message ("" when fine)
    _finished_internal = Signal(object, str)

    def __init__(self, store_path: Path, factory, parent=None, *, size_cap: int | None = None) -> None:
        super().__init__(parent)
        self.store_path = store_path
        self.factory = factory  # picklable: it is called in the indexing process
        self.size_cap = size_cap
        self.pool = QThreadPool(self)
        self.pool.setMaxThreadCount(1)
        self._cancel: Any = None  # a multiprocessing Event while a run is going
        self._queued: list[int] | None | Literal[False] = False  # False: nothing queued; None: all sources
        self._finished_internal.connect(self._on_finished)

    @property
    def running(self) -> bool:
        return self._cancel is not None

    def start(self, source_ids: list[int] | None = None) -> bool:
        """Index the given sources (None: all). While running, the request is queued."""
        if self.running:
            self._queue(source_ids)
            return False
        self._cancel = multiprocessing.get_context("spawn").Event()
        cancel = self._cancel
        self.started.emit()
        self.pool.start(_Task(lambda: self._run(source_ids, cancel)))
        return True

    def cancel(self) -> None:
        self._queued = False
        if self._cancel is not None:
            self._cancel.set()

    def shutdown(self, timeout_ms: int = 15000) -> bool:
        """Stop cleanly: the indexer commits what it has, the next start resumes."""
        self.cancel()
        return self.pool.waitForDone(timeout_ms)

    def _queue(self, source_ids: list[int] | None) -> None:
        if self._queued is False:
            self._queued = source_ids
        elif self._queued is None or source_ids is None:
            self._queued = None
        else:
            self._queued = sorted(set(self._queued) | set(source_ids))

    def _run(self, source_ids: list[int] | None, cancel) -> None:
        try:
            run, error = run_in_child(
                self.store_path, source_ids, self.factory, self.size_cap, cancel, self.progress.emit
            )
        except Exception as exc:  # could not even start the process
            run, error = None, report(exc, self.store_path, doing="starting the indexing process")
        self._finish(run, error)

    def _finish(self, run, error: str) -> None:
        # Emitted from the worker; _on_finished runs on the UI thread (queued connection).
        try:
            self._finished_internal.emit(run, error)
        except RuntimeError:  # the window is gone (closed while the run ended): nobody to tell
            pass

    @property
    def has_queued(self) -> bool:
        """Another run starts as soon as this one has reported."""
        return self._queued is not False

    def _on_finished(self, run, error: str) -> None:
        self._cancel = None
        self.finished.emit(run, error)
        queued, self._queued = self._queued, False
        if queued is not False:
            self.start(queued)


# -- light reads ---------------------------------------------------------------------


RETRY_STATS_MS = 500


class StatsService(QObject):
    """Source list + counts, read off the UI thread (counting 100k chunks takes a while)
    on the reader's own connection: the window never waits for a count to finish."""

    ready = Signal(object, object)  # list[Source], dict[int, SourceStats]
    tags_ready = Signal(object)  # dict[str, int]: tag -> documents (emitted from the worker; queued)
    _ready = Signal(object, object)

    def __init__(self, store_path: Path, parent=None) -> None:
        super().__init__(parent)
        self.store_path = Path(store_path)
        self._workspace: Workspace | None = None  # opened on the reader's thread
        self.pool = QThreadPool(self)
        self.pool.setMaxThreadCount(1)
        self._busy = False
        self._again = False
        self._closed = False
        self._ready.connect(self._deliver)

    def refresh(self) -> None:
        if self._closed:
            return
        if self._busy:
            self._again = True  # coalesce bursts of refresh requests into one more read
            return
        self._busy = True
        self.pool.start(_Task(self._read))

    def _read(self) -> None:
        try:
            if self._workspace is None:
                self._workspace = Workspace(self.store_path)
            overview = self._workspace.overview()
            sources, stats = overview.sources, overview.stats
            self.tags_ready.emit(self._workspace.tag_counts())
        except Exception as exc:
            # A failed read (the store busy at that instant) says nothing about the
            # sources: reporting none would send the window to its welcome page.
            report(exc, self.store_path, doing="counting the sources' documents")
            sources, stats = None, None
        self._ready.emit(sources, stats)

    def _deliver(self, sources, stats) -> None:
        self._busy = False
        if self._closed:
            return
        if sources is None:
            QTimer.singleShot(RETRY_STATS_MS, self.refresh)
            return
        self.ready.emit(sources, stats)
        if self._again:
            self._again = False
            self.refresh()

    def shutdown(self) -> None:
        self._closed = True
        self.pool.waitForDone(5000)
        if self._workspace is not None:
            self._workspace.close()  # the reader is done: closing from here is safe


def query_embedder_factory(workspace: Workspace) -> Callable[[], Embedder]:
    """The window's own model: it only ever embeds queries (indexing runs in a child)."""
    return workspace.embedder_factory(threads=QUERY_THREADS)


def background_threads(cores: int | None = None) -> int:
    """Threads for the app's background model: every core but one, left for the window."""
    return max(1, (cores or os.cpu_count() or 2) - 1)


def index_embedder_factory(workspace: Workspace) -> Callable[[], Embedder]:
    """The indexing and watching processes' model: it leaves a core for the window and its searches."""
    return workspace.embedder_factory(threads=background_threads())
