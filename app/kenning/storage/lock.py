"""One indexer per store: an OS file lock next to the database.

The lock dies with its process, so a SIGKILLed indexer never leaves a stale lock.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator
from pathlib import Path

from kenning.core.errors import StoreLockedError
from kenning.storage.paths import private_file_fd

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
