"""Watching every enabled source and indexing what changes, as it changes.

Why watchdog and not Qt's QFileSystemWatcher: sources are whole trees.  Qt watches
single folders (one call per folder, no recursion, folders created later must be
added by hand) and lives in the GUI layer, while `kenning index --watch` needs the
same watcher from a terminal.  watchdog watches a tree recursively with the
platform's own API (inotify, FSEvents, ReadDirectoryChangesW) from plain Python.

Flow: the observer threads hear created/modified/deleted/moved paths; a path is
queued under its source; once the stream has been quiet for DEBOUNCE_SECONDS
(editors write a file several times per save) or the oldest change has waited
MAX_DELAY_SECONDS, the queued paths are indexed (ingest.changes: only those paths,
no walk), then their vectors are computed.  New changes interrupt the embedding so
text always comes first.

When the OS refuses more watches (inotify's max_user_watches on a large repository:
ENOSPC), that source falls back to ingest.dirpoll, which every POLL_SECONDS stats its
directories and lists again only those whose mtime changed (watchdog's own polling
observer re-walks and diffs the whole tree each time), and the watcher says so
through on_notice.
"""

from __future__ import annotations

import errno
import os
import threading
import time
from collections.abc import Callable
from dataclasses import field
from typing import Any

from watchdog.events import FileSystemEvent, FileSystemEventHandler
from watchdog.observers import Observer

from kenning.core.errors import StoreLockedError
from kenning.core.progress import CancelToken, no_progress
from kenning.core.records import Record
from kenning.core.types import IndexReport, Source
from kenning.embedding import Embedder
from kenning.ingest.changes import index_paths, relative_path, worth_a_look
from kenning.ingest.dirpoll import DirectoryPoller
from kenning.ingest.embedphase import embed_pending
from kenning.ingest.limits import DEFAULT_SIZE_CAP
from kenning.ingest.textphase import TextOptions
from kenning.storage.api import Store

DEBOUNCE_SECONDS = 0.25  # quiet time after the last event before indexing
MAX_DELAY_SECONDS = 1.0  # a file written continuously is still indexed this often
POLL_SECONDS = 5.0  # the fallback's polling interval when the OS has no watches left
SOURCES_RECHECK_SECONDS = 2.0  # sources added, removed, enabled or disabled are noticed this fast
LOCK_RETRY_SECONDS = 1.0  # a full index run holds the store: try again after this
WATCH_LIMIT_ERRNOS = (errno.ENOSPC, errno.EMFILE)


class WatchUpdate(Record):
    """One batch of changes indexed: per-source reports and how long it took."""

    reports: list[IndexReport] = field(default_factory=list)
    seconds: float = 0.0
    embedded: int = 0

    @property
    def files(self) -> int:
        return sum(r.added + r.changed + r.removed for r in self.reports)


# Which inotify limit each refusal means (ENOSPC: watches; EMFILE: watcher instances, e.g.
# other programs' file watchers), so the notice names the setting to raise.
LIMIT_SETTINGS = {errno.ENOSPC: "max_user_watches", errno.EMFILE: "max_user_instances"}


def watch_limit_notice(source: Source, poll_seconds: float = POLL_SECONDS, err: int = errno.ENOSPC) -> str:
    setting = LIMIT_SETTINGS.get(err, "max_user_watches")
    return (
        f"{source.name}: the system's file-watch limit is reached (inotify {setting}); "
        f"checking it for changes every {poll_seconds:g} s instead"
    )


class _Queue(FileSystemEventHandler):
    """Collects changed paths per source from the observer threads."""

    def __init__(self, source: Source, pending: _Pending) -> None:
        self.source = source
        self.pending = pending

    def on_any_event(self, event: FileSystemEvent) -> None:
        if event.event_type in ("opened", "closed_no_write"):
            return  # reads, not changes
        for path in (event.src_path, getattr(event, "dest_path", "")):
            if not path:
                continue
            rel = relative_path(self.source, os.fsdecode(path))
            if rel is not None and worth_a_look(rel):
                self.pending.add(self.source.id, rel)


class _Pending:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._paths: dict[int, set[str]] = {}
        self._first = 0.0
        self._last = 0.0
        self.arrived = threading.Event()
        self.embed_cancel: CancelToken | None = None

    def add(self, source_id: int, rel: str) -> None:
        now = time.monotonic()
        with self._lock:
            if not self._paths:
                self._first = now
            self._paths.setdefault(source_id, set()).add(rel)
            self._last = now
            cancel = self.embed_cancel
        if cancel is not None:
            cancel.cancel()  # text first: the vectors wait for the next quiet moment
        self.arrived.set()

    def due(self, now: float, debounce: float) -> bool:
        with self._lock:
            return bool(self._paths) and (now - self._last >= debounce or now - self._first >= MAX_DELAY_SECONDS)

    def take(self) -> dict[int, set[str]]:
        with self._lock:
            paths, self._paths = self._paths, {}
            return paths

    def put_back(self, paths: dict[int, set[str]]) -> None:
        with self._lock:
            for sid, rels in paths.items():
                self._paths.setdefault(sid, set()).update(rels)
            self._first = self._last = time.monotonic()

    def __bool__(self) -> bool:
        with self._lock:
            return bool(self._paths)


class Watcher:
    """Watches the store's enabled sources until stopped; index through `run()`."""

    def __init__(
        self,
        store: Store,
        embedder_factory: Callable[[], Embedder] | None,
        *,
        size_cap: int = DEFAULT_SIZE_CAP,
        on_update: Callable[[WatchUpdate], None] = lambda _: None,
        on_notice: Callable[[str], None] = lambda _: None,
        observer_factory: Callable[[], object] = Observer,
        debounce: float = DEBOUNCE_SECONDS,
        poll_seconds: float = POLL_SECONDS,
    ) -> None:
        self.store = store
        self.embedder_factory = embedder_factory
        self.options = TextOptions(size_cap)
        self.on_update = on_update
        self.on_notice = on_notice
        self.observer_factory = observer_factory
        self.debounce = debounce
        self.poll_seconds = poll_seconds
        self.pending = _Pending()
        self.polling: set[int] = set()  # sources on the fallback
        self._observers: dict[int, tuple[Source, object]] = {}
        self._root_ids: dict[int, tuple[int, int] | None] = {}  # each watched root's (device, inode)
        self._embedder: Embedder | None = None
        self._sources_checked = 0.0
        # Set once run() has its watches in place: a change made after it is seen
        # (watchdog's start() adds the inotify watches before it returns).
        self.ready = threading.Event()
        self._store_file = _file_identity(store.location)
        self.replaced = False  # the store file was replaced under the watcher: it stops

    # -- sources -----------------------------------------------------------------

    def sync_sources(self) -> None:
        """Watch every enabled source, stop watching the rest (cheap; called every few seconds)."""
        self._sources_checked = time.monotonic()
        wanted = {s.id: s for s in self.store.sources.list() if s.enabled and os.path.isdir(s.root)}
        changed_rules = set()
        for sid in list(self._observers):
            source, _ = self._observers[sid]
            # A root that is another folder now (a disk mounted again, a folder made anew
            # at its path): the watch is on the old one, so it is watched and read afresh.
            moved = sid in wanted and _file_identity(wanted[sid].root) != self._root_ids.get(sid)
            if sid not in wanted or _rules(wanted[sid]) != _rules(source) or moved:
                self._unwatch(sid)
                if sid in wanted:
                    changed_rules.add(sid)
        for sid, source in wanted.items():
            if sid not in self._observers:
                self._watch(source)
        for sid in changed_rules:
            # New globs (or a new folder at the root's path) change what is indexed anywhere
            # in the source: everything is looked at again (an excluded document must not
            # stay searchable until a full run).
            self.pending.add(sid, "")

    def _watch(self, source: Source) -> None:
        self._root_ids[source.id] = _file_identity(source.root)  # before the watch: a change after it is seen
        handler = _Queue(source, self.pending)
        try:
            observer = self._start(self.observer_factory(), source, handler)
        except OSError as exc:
            if exc.errno not in WATCH_LIMIT_ERRNOS:
                self.on_notice(f"{source.name}: cannot watch for changes ({exc.strerror or exc})")
                return
            poller = DirectoryPoller(self.poll_seconds, dir_filter=worth_a_look)
            observer = self._start(poller, source, handler)
            self.polling.add(source.id)
            self.on_notice(watch_limit_notice(source, self.poll_seconds, exc.errno))
        self._observers[source.id] = (source, observer)

    @staticmethod
    def _start(observer: Any, source: Source, handler: Any) -> object:
        observer.daemon = True
        try:
            observer.schedule(handler, source.root, recursive=True)
            observer.start()
        except BaseException:
            _stop(observer)
            raise
        return observer

    def _unwatch(self, sid: int) -> None:
        _, observer = self._observers.pop(sid)
        self._root_ids.pop(sid, None)
        self.polling.discard(sid)
        _stop(observer)

    @property
    def watched_count(self) -> int:
        return len(self._observers)

    def close(self) -> None:
        for sid in list(self._observers):
            self._unwatch(sid)

    # -- the loop ----------------------------------------------------------------

    def run(self, stop: threading.Event, on_ready: Callable[[], None] = lambda: None) -> None:
        """Index changes until `stop` is set (the caller's thread does the work), or
        until the store is replaced under it (then on_notice says so); on_ready is
        called once the watches are in place."""
        with self.store.watching_lock():  # `kenning rebuild` waits for no watcher
            self.sync_sources()
            self.ready.set()
            on_ready()
            try:
                while not stop.is_set() and not self.replaced:
                    self.step(stop)
            finally:
                self.close()

    def step(self, stop: threading.Event | None = None) -> WatchUpdate | None:
        """Wait a little for changes; index them when due.  Returns the batch indexed, if any."""
        self.pending.arrived.wait(self.debounce / 2)
        self.pending.arrived.clear()
        now = time.monotonic()
        if now - self._sources_checked >= SOURCES_RECHECK_SECONDS:
            self.sync_sources()
        if stop is not None and stop.is_set():
            return None
        if not self.pending.due(now, self.debounce):
            return None
        return self.flush()

    def flush(self) -> WatchUpdate | None:
        """Index everything queued now (tests and --watch's exit call this directly)."""
        paths = self.pending.take()
        if not paths or self._store_replaced():
            return None
        started = time.monotonic()
        try:
            with self.store.indexing_lock(wait_seconds=0.0):
                update = self._index(paths)
        except StoreLockedError:
            self.pending.put_back(paths)  # a full run is going; it may see them too, but try again
            time.sleep(LOCK_RETRY_SECONDS)
            return None
        update.seconds = time.monotonic() - started
        self.on_update(update)
        if self.embedder_factory is not None and not self.pending:
            update.embedded = self._embed()
            if update.embedded:
                self.on_update(WatchUpdate(seconds=time.monotonic() - started, embedded=update.embedded))
        return update

    def _store_replaced(self) -> bool:
        """The store file is not the one this watcher opened (moved aside by a rebuild
        the lock could not hold off, or by hand): stop rather than index into the old one."""
        if not self.replaced and _file_identity(self.store.location) != self._store_file:
            self.replaced = True
            self.on_notice(
                f"the store {self.store.location} was replaced (moved aside or rebuilt) while watching; "
                "stopped watching: start the watch again to index into the new store"
            )
        return self.replaced

    def _index(self, paths: dict[int, set[str]]) -> WatchUpdate:
        update = WatchUpdate()
        # The sources as they are now: one removed or disabled since its changes were
        # heard gets none of them (its rows are gone, or the user switched it off).
        current = {s.id: s for s in self.store.sources.list() if s.enabled}
        for sid, rels in paths.items():
            source = current.get(sid)
            if source is None or sid not in self._observers:
                continue
            try:
                update.reports.append(index_paths(self.store, source, rels, self.options))
            except Exception as exc:  # one bad batch must not end the watch
                update.reports.append(IndexReport(source=source.name, errors=[f"{type(exc).__name__}: {exc}"]))
        return update

    def _embed(self) -> int:
        cancel = CancelToken()
        self.pending.embed_cancel = cancel
        try:
            if self._embedder is None:
                assert self.embedder_factory is not None  # _embed runs only with a factory
                self._embedder = self.embedder_factory()
            with self.store.indexing_lock(wait_seconds=0.0):
                stats = embed_pending(self.store, self._embedder, no_progress, cancel)
            return stats.embedded
        except StoreLockedError:
            return 0
        except Exception as exc:  # a broken model leaves text search working
            self.on_notice(f"vectors for changed files not computed: {exc}")
            self.embedder_factory = None
            return 0
        finally:
            self.pending.embed_cancel = None


def _file_identity(path: object) -> tuple[int, int] | None:
    try:
        info = os.stat(path)  # type: ignore[arg-type]  # a path, or ":memory:"/None for an in-memory store
    except (OSError, TypeError, ValueError):  # gone, or an in-memory store
        return None
    return info.st_dev, info.st_ino


def _rules(source: Source) -> tuple[object, ...]:
    """What a watch depends on (not the last-indexed time a full run updates)."""
    return (source.kind, source.root, source.name, source.include, source.exclude)


def _stop(observer: Any) -> None:
    try:
        observer.stop()
        if observer.is_alive():
            observer.join(2)
    except (RuntimeError, OSError):
        pass
