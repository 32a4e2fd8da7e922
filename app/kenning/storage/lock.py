"""One indexer per store: an OS file lock next to the database.

The lock dies with its process, so a SIGKILLed indexer never leaves a stale lock.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator
from pathlib import Path

from kenning.core.errors import StoreLockedError, StoreWatchedError
from kenning.core.owndirs import private_file_fd

try:
    import fcntl
except ImportError:  # Windows
    fcntl = None  # type: ignore[assignment]
    import msvcrt


def _try_lock(fd: int) -> bool:
    try:
        if fcntl is not None:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        else:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        return True
    except OSError:
        return False


def _unlock(fd: int) -> None:
    if fcntl is not None:
        fcntl.flock(fd, fcntl.LOCK_UN)
    else:
        msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)


@contextlib.contextmanager
def indexing_lock(db_path: Path, *, wait_seconds: float = 0.0) -> Iterator[None]:
    """Hold the store's indexing lock, waiting up to wait_seconds for it."""
    lock_path = Path(str(db_path) + ".lock")
    fd = private_file_fd(lock_path, os.O_RDWR)
    try:
        deadline = time.monotonic() + wait_seconds
        while not _try_lock(fd):
            if time.monotonic() >= deadline:
                raise StoreLockedError(
                    "Another Kenning indexer is working on this store; "
                    "wait for it to finish (or stop it) and try again."
                )
            time.sleep(0.2)
        try:
            yield
        finally:
            _unlock(fd)
    finally:
        os.close(fd)


def watching_lock(db_path: Path) -> contextlib.AbstractContextManager[None]:
    """Held (shared: several watchers may run) for as long as a watcher indexes into the
    store, so `kenning rebuild` never moves the store aside under it.  Waits while a
    rebuild holds it.  A no-op where the OS has no shared locks (Windows): there the
    watcher notices the store was replaced (ingest.watch)."""
    return _watch_lock(db_path, exclusive=False)


def no_watchers(db_path: Path) -> contextlib.AbstractContextManager[None]:
    """Hold off watchers (StoreLockedError while one runs), for replacing the store file."""
    return _watch_lock(db_path, exclusive=True)


@contextlib.contextmanager
def _watch_lock(db_path: Path, *, exclusive: bool) -> Iterator[None]:
    if fcntl is None:
        yield
        return
    fd = private_file_fd(Path(str(db_path) + ".watch.lock"), os.O_RDWR)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB if exclusive else fcntl.LOCK_SH)
        except OSError:
            if exclusive:  # a watcher holds it: nothing may be moved
                raise StoreWatchedError(str(db_path)) from None  # workspace.messages words it
            raise
        try:
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)
