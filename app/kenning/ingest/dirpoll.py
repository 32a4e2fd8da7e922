"""The watcher's fallback when the OS has no watches left: poll the directories that changed.

watchdog's PollingObserver snapshots the whole tree every period: it lists every
directory, stats every entry and diffs two complete snapshots, so a 200k-file
repository (the kind that exhausts inotify) costs a full walk every few seconds.

This poller keeps, per directory, the directory's own (mtime, inode) and, for each
file in it, (mtime, size, inode).  Each period:

* every known directory is stat'ed, one call each (directories are far fewer than
  files).  A directory's mtime changes when an entry in it is added, removed or
  renamed, and only then is the directory listed again: its new files are reported,
  its new subdirectories walked (reported as one folder path, which the indexer
  expands), its vanished ones dropped with everything under them.  Unchanged
  subtrees are never listed again.
* a file edited in place leaves its directory's mtime alone, so files are stat'ed
  too, but not all of them every period in a large tree: the files of directories
  that changed lately are checked every period, and the rest a share at a time, so
  that each file is checked about every FILE_ROUND_POLLS periods (in a tree of
  at most EVERY_POLL_FILES files, every file every period).  Editors that save by
  writing a new file and renaming it over the old one change the directory and are
  seen in the next period.
* a directory whose mtime is within SETTLE_SECONDS of the listing is listed again
  next period: on a file system with coarse timestamps a change in the same tick
  would leave the mtime as it was.

Directories the event filter ignores anyway (hidden ones, node_modules, …:
changes.worth_a_look) are never entered, and symbolic links to directories are not
followed (the walker judges them).  The object offers what the watcher uses of a
watchdog observer: schedule, start, stop, join, is_alive.
"""

from __future__ import annotations

import os
import stat
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import field
from typing import Any

from watchdog.events import (
    DirCreatedEvent,
    DirDeletedEvent,
    FileCreatedEvent,
    FileDeletedEvent,
    FileModifiedEvent,
    FileSystemEvent,
)

from kenning.core.records import Record

FILE_ROUND_POLLS = 6  # in a large tree every file is stat'ed at least once in this many periods
EVERY_POLL_FILES = 20_000  # up to this many files, all of them are stat'ed every period
HOT_POLLS = 12  # a directory that changed stays "hot" (its files checked every period) this long
SETTLE_SECONDS = 2.0  # a directory modified this recently is listed again next period

FileStamp = tuple[int, int, int]  # (mtime_ns, size, inode)


class _Dir(Record):
    stamp: tuple[int, int]  # the directory's own (mtime_ns, inode)
    files: dict[str, FileStamp] = field(default_factory=dict)
    subdirs: set[str] = field(default_factory=set)  # names
    hot_until: int = 0  # poll number until which its files are checked every period
    unsettled: bool = False  # listed while its mtime was recent: list again


class DirectoryPoller(threading.Thread):
    """Polls one tree every `interval` seconds and reports changes to a watchdog handler."""

    def __init__(self, interval: float, *, dir_filter: Callable[[str], bool] = lambda _: True) -> None:
        super().__init__(name="kenning-dirpoll", daemon=True)
        self.interval = interval
        self.dir_filter = dir_filter  # given a directory's path relative to the root ("a/b"): enter it?
        self._stopped = threading.Event()
        self._root = ""
        self._handler = None
        self._dirs: dict[str, _Dir] = {}
        self._polls = 0
        self._cursor = 0  # where the last share of the cold files ended
        self.listed = 0  # directories listed, in total (for tests and the benchmark)
        self.stats = 0  # stat calls, in total

    # -- the observer interface the watcher uses ------------------------------------

    def schedule(self, handler: Any, path: str, recursive: bool = True) -> None:
        self._handler = handler
        self._root = os.path.abspath(path)
        self._dirs.clear()
        self._add_tree(self._root)  # raises OSError if the root cannot be read: the watcher reports it

    def run(self) -> None:
        while not self._stopped.wait(self.interval):
            try:
                self.poll()
            except OSError:  # the root vanished or went unreadable: try again next period
                continue

    def stop(self) -> None:
        self._stopped.set()

    # -- polling --------------------------------------------------------------------

    def poll(self) -> list[FileSystemEvent]:
        """One period's check; the events found are given to the handler and returned."""
        self._polls += 1
        events: list[FileSystemEvent] = []
        for path in list(self._dirs):
            entry = self._dirs.get(path)
            if entry is None:  # dropped with a vanished parent earlier in this loop
                continue
            stamp = self._dir_stamp(path)
            if stamp is None:
                events.append(DirDeletedEvent(path))
                self._drop_tree(path)
            elif stamp != entry.stamp or entry.unsettled:
                self._relist(path, entry, stamp, events)
        self._check_files(events)
        for event in events:
            if self._handler is not None:
                self._handler.dispatch(event)
        return events

    def _relist(self, path: str, entry: _Dir, stamp: tuple[int, int], events: list[FileSystemEvent]) -> None:
        listing = self._list(path, stamp)
        if listing is None:
            events.append(DirDeletedEvent(path))
            self._drop_tree(path)
            return
        stamp, files, subdirs = listing
        for name in entry.files.keys() - files.keys():
            events.append(FileDeletedEvent(os.path.join(path, name)))
        for name, file_stamp in files.items():
            old = entry.files.get(name)
            if old is None:
                events.append(FileCreatedEvent(os.path.join(path, name)))
            elif old != file_stamp:
                events.append(FileModifiedEvent(os.path.join(path, name)))
        for name in entry.subdirs - subdirs:
            events.append(DirDeletedEvent(os.path.join(path, name)))
            self._drop_tree(os.path.join(path, name))
        for name in subdirs - entry.subdirs:
            child = os.path.join(path, name)
            events.append(DirCreatedEvent(child))  # the indexer expands a folder path itself
            self._add_tree(child)
        entry.stamp, entry.files, entry.subdirs = stamp, files, subdirs
        entry.hot_until = self._polls + HOT_POLLS
        entry.unsettled = _recent(stamp[0])

    def _check_files(self, events: list[FileSystemEvent]) -> None:
        """Content edits: stat the files of hot directories, and the next share of the rest."""
        paths = list(self._dirs)
        total = sum(len(d.files) for d in self._dirs.values())
        if total <= EVERY_POLL_FILES:
            chosen: list[str] = paths
        else:
            share = -(-len(paths) // FILE_ROUND_POLLS)  # ceil: every directory within the round
            start = self._cursor % max(len(paths), 1)
            rotated = (paths[start:] + paths[:start])[:share]
            self._cursor = start + share
            chosen = list(dict.fromkeys([*rotated, *(p for p in paths if self._dirs[p].hot_until >= self._polls)]))
        for path in chosen:
            entry = self._dirs.get(path)
            if entry is None:
                continue
            for name, old in list(entry.files.items()):
                current = self._file_stamp(os.path.join(path, name))
                if current is None:
                    continue  # gone: its directory's mtime changed, the next listing reports it
                if current != old:
                    entry.files[name] = current
                    entry.hot_until = self._polls + HOT_POLLS
                    events.append(FileModifiedEvent(os.path.join(path, name)))

    # -- the tree -------------------------------------------------------------------

    def _add_tree(self, top: str) -> None:
        """Record top and every directory under it (the filter's choice) without reporting."""
        stack = [top]
        while stack:
            path = stack.pop()
            listing = self._list(path)
            if listing is None:
                if path == self._root:
                    raise FileNotFoundError(path)
                continue
            stamp, files, subdirs = listing
            self._dirs[path] = _Dir(stamp, files, subdirs, unsettled=_recent(stamp[0]))
            stack.extend(os.path.join(path, name) for name in subdirs)

    def _drop_tree(self, top: str) -> None:
        prefix = top + os.sep
        for path in [p for p in self._dirs if p == top or p.startswith(prefix)]:
            del self._dirs[path]

    def _list(
        self, path: str, stamp: tuple[int, int] | None = None
    ) -> tuple[tuple[int, int], dict[str, FileStamp], set[str]] | None:
        """(the directory's stamp, its files' stamps, its subdirectories to follow), or None if
        gone; stamp: the directory's own, when the caller has just read it."""
        stamp = stamp or self._dir_stamp(path)
        if stamp is None:
            return None
        files: dict[str, FileStamp] = {}
        subdirs: set[str] = set()
        self.listed += 1
        try:
            for entry in _scandir(path):
                if entry.is_dir(follow_symlinks=False):
                    if self.dir_filter(self._relative(entry.path)):
                        subdirs.add(entry.name)
                    continue
                found = self._file_stamp(entry.path)
                if found is not None:
                    files[entry.name] = found
        except OSError:
            return None
        return stamp, files, subdirs

    def _relative(self, path: str) -> str:
        return os.path.relpath(path, self._root).replace(os.sep, "/")

    def _dir_stamp(self, path: str) -> tuple[int, int] | None:
        self.stats += 1
        try:
            st = os.stat(path, follow_symlinks=False)
        except OSError:
            return None
        return (st.st_mtime_ns, st.st_ino) if stat.S_ISDIR(st.st_mode) else None

    def _file_stamp(self, path: str) -> FileStamp | None:
        self.stats += 1
        try:
            st = os.stat(path, follow_symlinks=False)
        except OSError:
            return None
        return (st.st_mtime_ns, st.st_size, st.st_ino)

    @property
    def directories(self) -> int:
        return len(self._dirs)


def _scandir(path: str) -> Iterator[os.DirEntry[str]]:
    with os.scandir(path) as entries:
        yield from entries


def _recent(mtime_ns: int) -> bool:
    return time.time() - mtime_ns / 1e9 < SETTLE_SECONDS
