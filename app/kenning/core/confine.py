"""Keeping every file read inside its source's root.

A path is judged by where it really leads: every component resolved (symlinked
parent folders included), not only its last one.  Every reader of source files asks
here first.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from typing import BinaryIO

from kenning.core.errors import SourceError
from kenning.core.fsnames import file_of, filesystem_name


def is_inside(path: str, real_root: str) -> bool:
    """`path` (already resolved) is `real_root` or below it."""
    return path == real_root or path.startswith(real_root.rstrip(os.sep) + os.sep)


def resolve_inside(path: str, real_root: str) -> str | None:
    """The real path `path` leads to, or None when any component leads out of the root."""
    real = os.path.realpath(path)
    return real if is_inside(real, real_root) else None


def checked_root(root: str) -> str:
    """The real path of a source's root, or SourceError when it cannot be walked now.

    A root that is missing (an unmounted drive, a renamed folder) or unreadable says
    nothing about its files: the caller must keep what it indexed from it.  A root that
    now leads somewhere else through a symlink is not followed either: the source is
    what the user linked, not whatever a link points at today.
    """
    kept = "its indexed documents are kept"
    if not os.path.lexists(root):
        raise SourceError(f"{root} is missing (unmounted, moved or renamed?); {kept}.")
    real = os.path.realpath(root)
    if real != os.path.normpath(os.path.abspath(root)):
        raise SourceError(
            f"{root} now leads to {real} through a symbolic link; Kenning does not follow it and {kept}. "
            "Remove the source and add the folder it should be if this is intended."
        )
    if not os.path.isdir(real):
        raise SourceError(f"{root} is no longer a folder; {kept}.")
    try:
        with os.scandir(real) as entries:
            next(entries, None)
    except OSError as exc:
        raise SourceError(f"{root} cannot be read ({exc.strerror or exc}); {kept}.") from None
    return real


def read_source_file(root: str, rel_path: str, limit: int) -> bytes:
    """The first `limit` bytes of an indexed file, read as the indexer reads it: inside
    the source's real root (no symlinked folder or file leading out, however the file
    system changed since indexing, and no `..` in a stored path), a regular file, never
    followed through a link swapped in at the last moment.  For front ends showing a
    hit's file; OSError (with a strerror for the user) when it cannot or must not be read.
    """
    with open_regular(_real_path_inside(root, rel_path)) as handle:
        return read_at_most(handle, limit)


def path_to_open(root: str, rel_path: str) -> str:
    """The real path of an indexed file for another program to open (the user's editor,
    the system's opener), checked as read_source_file checks a read: inside the source's
    real root however the file system changed since indexing, and a regular file.  The
    program is given this resolved path, so a link swapped in later is not what it
    follows out of the source.  OSError (with a strerror for the user) otherwise."""
    real = _real_path_inside(root, rel_path)
    if not stat.S_ISREG(os.stat(real).st_mode):
        raise OSError(errno.EINVAL, "not a regular file")
    return real


def _real_path_inside(root: str, rel_path: str) -> str:
    """Where a stored path (a part's container file) really leads, when that is inside
    the source's real root; OSError otherwise."""
    if not root:
        raise OSError(errno.ENOENT, "its source's folder is not known")
    parts = filesystem_name(file_of(rel_path)).split("/")
    if any(part in ("", ".", "..") for part in parts):
        raise OSError(errno.EACCES, "not a path inside its source")
    try:
        real_root = checked_root(root)
    except SourceError as exc:
        raise OSError(errno.ENOENT, str(exc)) from None
    real = resolve_inside(os.path.join(real_root, *parts), real_root)
    if real is None:
        raise OSError(errno.EACCES, "it now leads outside its source's folder")
    return real


def open_no_follow(path: str | os.PathLike[str]) -> int:
    """A file descriptor for reading path, which must not be a symlink.

    O_NONBLOCK so a FIFO in a notes folder cannot hang the reader on open().
    O_NOFOLLOW: callers pass resolved paths (is_inside, resolve_inside); a file swapped
    for a symlink since then is refused rather than followed out of the root."""
    flags = os.O_RDONLY | getattr(os, "O_BINARY", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0)
    return os.open(path, flags)


@contextmanager
def open_regular(path: str | os.PathLike[str]) -> Iterator[BinaryIO]:
    """An unbuffered binary handle on path, which must be a regular file reached without
    a link (open_no_follow); OSError otherwise (a FIFO, a device, a folder)."""
    with os.fdopen(open_no_follow(path), "rb", buffering=0) as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            raise OSError(errno.EINVAL, "not a regular file")
        yield handle


def read_at_most(handle: BinaryIO, limit: int) -> bytes:
    """Up to limit bytes from an unbuffered file (whose reads may return short)."""
    parts: list[bytes] = []
    remaining = limit
    while remaining > 0:
        block = handle.read(remaining)
        if not block:
            break
        parts.append(block)
        remaining -= len(block)
    return b"".join(parts)
