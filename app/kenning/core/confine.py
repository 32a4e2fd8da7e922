"""Keeping every file read inside its source's root, and out of `.git/`.

A source's root is opened once as a directory descriptor; every file and folder below
it is opened from there one component at a time (`os.open(name, dir_fd=...)` with
O_NOFOLLOW), never by a path checked first and opened later: a parent folder swapped
for a symlink between a check and an open cannot lead the open elsewhere.  A symlink
met on the way is read and followed only while it stays inside the root, and never
into a `.git` folder (a tracked `notes.md -> .git/config` would expose a clone's
credentials).  Every reader of source files opens through here.

Platforms without `dir_fd` support (Windows) fall back to resolving the whole path
and checking it: the same rules, without the race-freedom.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import BinaryIO

from kenning.core.errors import SourceError
from kenning.core.fsnames import file_of, filesystem_name

GIT_DIR_NAME = ".git"
MAX_LINKS = 40  # the kernel's own limit on links in one path resolution
_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_O_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
# O_NONBLOCK: a FIFO swapped in after the look cannot hang the open.
_FILE_FLAGS = os.O_RDONLY | getattr(os, "O_BINARY", 0) | _O_NOFOLLOW | getattr(os, "O_NONBLOCK", 0) | _O_CLOEXEC
_DIR_FLAGS = os.O_RDONLY | _O_NOFOLLOW | _O_DIRECTORY | _O_CLOEXEC
# Opening component by component needs openat(), fstatat() and readlinkat().
FD_CONFINED = (
    os.open in os.supports_dir_fd
    and os.stat in os.supports_dir_fd
    and os.readlink in os.supports_dir_fd
    and bool(_O_NOFOLLOW and _O_DIRECTORY)
)

# Skip reasons of paths Kenning refuses to read.
OUTSIDE_ROOT = "outside-root"
GIT_INTERNAL = "git-internal"
KEPT = "its indexed documents are kept"
NOT_INSIDE = "not a path inside its source"


class Refused(PermissionError):
    """A path Kenning will not read: it leads out of the root or into `.git/`.
    `reason` is the skip reason recorded for it."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(errno.EACCES, detail)
        self.reason = reason


def is_inside(path: str, real_root: str) -> bool:
    """`path` (already resolved) is `real_root` or below it."""
    return path == real_root or path.startswith(real_root.rstrip(os.sep) + os.sep)


def is_git_name(name: str) -> bool:
    """A `.git` folder or file, however a case-insensitive file system spells it."""
    return name.casefold() == GIT_DIR_NAME


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
    if not os.path.lexists(root):
        raise SourceError(f"{root} is missing (unmounted, moved or renamed?); {KEPT}.")
    real = os.path.realpath(root)
    if real != os.path.normpath(os.path.abspath(root)):
        raise SourceError(
            f"{root} now leads to {real} through a symbolic link; Kenning does not follow it and {KEPT}. "
            "Remove the source and add the folder it should be if this is intended."
        )
    if not os.path.isdir(real):
        raise SourceError(f"{root} is no longer a folder; {KEPT}.")
    try:
        with os.scandir(real) as entries:
            next(entries, None)
    except OSError as exc:
        raise SourceError(f"{root} cannot be read ({exc.strerror or exc}); {KEPT}.") from None
    return real


def split_rel(rel_path: str) -> list[str]:
    """A stored '/'-separated path as file-system names; Refused for '', '.', '..' parts."""
    if not rel_path:
        return []
    parts = filesystem_name(rel_path).split("/")
    if any(p in ("", ".", "..") for p in parts):
        raise Refused(OUTSIDE_ROOT, NOT_INSIDE)
    return parts


# (the parts the path leads to, lstat of what is there, a descriptor on it or -1)
_Located = tuple[tuple[str, ...], os.stat_result, int]


class SourceRoot:
    """A source's root folder held open; everything below it opened from it.

    SourceError when the root cannot be opened (missing, unreadable, now leading
    elsewhere): the caller keeps what it indexed.  Paths are sequences of file-system
    names below the root.  Errors of the methods: FileNotFoundError (the entry is not
    there), NotADirectoryError (a component is a file), Refused (leads out of the root
    or into .git), OSError(EINVAL) (a FIFO, a device, or a folder where a file was
    wanted), and whatever else the system says (EACCES, EMFILE, EIO...).
    """

    def __init__(self, root: str) -> None:
        self.root = root
        self.real = checked_root(root)
        self._fd: int | None = _open_root(self.real, root) if FD_CONFINED else None

    def close(self) -> None:
        fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)

    def __enter__(self) -> SourceRoot:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def abs_path(self, parts: Sequence[str]) -> str:
        """The lexical path below the real root: for showing, never for opening."""
        return os.path.join(self.real, *parts)

    def resolve(self, parts: Sequence[str]) -> tuple[tuple[str, ...], os.stat_result]:
        """Where parts lead inside the root (links followed) and the lstat of what is
        there; the last component is only looked at, never opened."""
        resolved, info, _ = self._locate(parts, None)
        return resolved, info

    def lstat(self, parts: Sequence[str]) -> os.stat_result:
        """The last component itself, not followed; its folders reached inside the root."""
        if not parts:
            return self.resolve(parts)[1]
        folder, _ = self.resolve(parts[:-1])
        _refuse_git([parts[-1]])
        if self._fd is None:
            return os.lstat(self.abs_path([*folder, parts[-1]]))
        fd = self.open_dir(folder)
        try:
            return os.stat(parts[-1], dir_fd=fd, follow_symlinks=False)
        finally:
            os.close(fd)

    def has_entry(self, folder: Sequence[str], name: str) -> bool:
        """Whether folder holds an entry called name (looked at only: `.git` included)."""
        try:
            resolved, _ = self.resolve(folder)
            if self._fd is None:
                os.lstat(self.abs_path([*resolved, name]))
                return True
            fd = self.open_dir(resolved)
            try:
                os.stat(name, dir_fd=fd, follow_symlinks=False)
            finally:
                os.close(fd)
        except OSError:
            return False
        return True

    def open_file(self, parts: Sequence[str]) -> int:
        """A read-only descriptor on a regular file."""
        return self._locate(parts, False)[2]

    def open_dir(self, parts: Sequence[str]) -> int:
        """A descriptor on a folder (for os.scandir and further dir_fd opens)."""
        return self._locate(parts, True)[2]

    @contextmanager
    def opened(self, parts: Sequence[str]) -> Iterator[BinaryIO]:
        """An unbuffered binary handle on a regular file, closed afterwards."""
        with os.fdopen(self.open_file(parts), "rb", buffering=0) as handle:
            yield handle

    def _locate(self, parts: Sequence[str], want_dir: bool | None) -> _Located:
        current = list(parts)
        for _ in range(MAX_LINKS + 1):
            _refuse_git(current)
            found = self._descend(current, want_dir) if self._fd is not None else self._by_path(current, want_dir)
            if isinstance(found, list):  # a link met on the way: start again with where it leads
                current = found
                continue
            return found
        raise OSError(errno.ELOOP, "too many symbolic links")

    def _descend(self, parts: list[str], want_dir: bool | None) -> _Located | list[str]:
        """One pass down from the root: (parts, lstat, fd or -1), or the parts a link leads to."""
        assert self._fd is not None
        fd = os.open(".", _DIR_FLAGS, dir_fd=self._fd)
        try:
            info = os.fstat(fd)
            for i, name in enumerate(parts):
                info = os.stat(name, dir_fd=fd, follow_symlinks=False)
                if stat.S_ISLNK(info.st_mode):
                    return _link_target(self.real, parts[:i], os.readlink(name, dir_fd=fd)) + parts[i + 1 :]
                if i == len(parts) - 1:
                    break
                if not stat.S_ISDIR(info.st_mode):
                    raise NotADirectoryError(errno.ENOTDIR, "not a folder", "/".join(parts[: i + 1]))
                child = os.open(name, _DIR_FLAGS, dir_fd=fd)
                os.close(fd)
                fd = child
            if want_dir is None:
                return tuple(parts), info, -1
            _check_kind(info, want_dir)
            if not parts:
                opened, fd = fd, -1
                return (), info, opened
            opened = os.open(parts[-1], _DIR_FLAGS if want_dir else _FILE_FLAGS, dir_fd=fd)
            try:
                _check_kind(os.fstat(opened), want_dir)  # swapped since the look
            except OSError:
                os.close(opened)
                raise
            return tuple(parts), info, opened
        finally:
            if fd >= 0:
                os.close(fd)

    def _by_path(self, parts: list[str], want_dir: bool | None) -> _Located:
        """Without dir_fd: the whole path resolved, then checked and opened."""
        real = os.path.realpath(self.abs_path(parts))
        if not is_inside(real, self.real):
            raise Refused(OUTSIDE_ROOT, "a symlink on its path leads out of the source")
        inner = [] if real == self.real else os.path.relpath(real, self.real).split(os.sep)
        _refuse_git(inner)
        info = os.lstat(real)
        if want_dir is None:
            return tuple(inner), info, -1
        _check_kind(info, want_dir)
        fd = os.open(real, (os.O_RDONLY | getattr(os, "O_BINARY", 0)) if not want_dir else os.O_RDONLY)
        return tuple(inner), info, fd


def _open_root(real: str, shown: str) -> int:
    """The root's descriptor, reached from `/` without following a link (checked_root
    looked at the path; this makes the look and the open one)."""
    fd = os.open(os.sep, _DIR_FLAGS)
    try:
        for name in [p for p in real.split(os.sep) if p]:
            try:
                child = os.open(name, _DIR_FLAGS, dir_fd=fd)
            except OSError as exc:
                raise SourceError(f"{shown} cannot be opened ({exc.strerror or exc}); {KEPT}.") from None
            os.close(fd)
            fd = child
    except BaseException:
        os.close(fd)
        raise
    return fd


def _link_target(real_root: str, base: list[str], target: str) -> list[str]:
    """The parts below the root a link in folder `base` leads to; Refused when it leaves."""
    if os.path.isabs(target):
        norm = os.path.normpath(target)
        if not is_inside(norm, real_root):
            raise Refused(OUTSIDE_ROOT, "a symlink on its path leads out of the source")
        return [] if norm == real_root else os.path.relpath(norm, real_root).split(os.sep)
    out = list(base)
    for part in target.split(os.sep):
        if part in ("", "."):
            continue
        if part == "..":
            if not out:
                raise Refused(OUTSIDE_ROOT, "a symlink on its path leads out of the source")
            out.pop()
        else:
            out.append(part)
    return out


def _refuse_git(parts: Sequence[str]) -> None:
    if any(is_git_name(p) for p in parts):
        raise Refused(GIT_INTERNAL, "inside a .git folder: never read")


def _check_kind(info: os.stat_result, want_dir: bool) -> None:
    if want_dir:
        if not stat.S_ISDIR(info.st_mode):
            raise NotADirectoryError(errno.ENOTDIR, "not a folder")
    elif stat.S_ISDIR(info.st_mode):
        raise IsADirectoryError(errno.EISDIR, "a folder, not a file")
    elif not stat.S_ISREG(info.st_mode):
        raise OSError(errno.EINVAL, "not a regular file")


# -- reading one indexed file for a front end ------------------------------------------


def read_source_file(root: str, rel_path: str, limit: int) -> bytes:
    """The first `limit` bytes of an indexed file (a part's container file), read as the
    indexer reads it: from the source's root, component by component, never out of it
    nor into .git, a regular file.  For front ends showing a hit's file; OSError (with a
    strerror for the user) when it cannot or must not be read."""
    with _root_for(root) as source_root, _worded(), source_root.opened(split_rel(file_of(rel_path))) as handle:
        return read_at_most(handle, limit)


def path_to_open(root: str, rel_path: str) -> str:
    """The real path of an indexed file for another program to open (the user's editor,
    the system's opener), checked as read_source_file checks a read.  The program is
    given the resolved path, so a link swapped in later is not what it follows out of
    the source.  OSError (with a strerror for the user) otherwise."""
    with _root_for(root) as source_root, _worded():
        parts = split_rel(file_of(rel_path))
        os.close(source_root.open_file(parts))  # a regular file, reachable inside the root
        resolved, _ = source_root.resolve(parts)
        return source_root.abs_path(resolved)


@contextmanager
def _worded() -> Iterator[None]:
    """A refusal in the words a front end shows."""
    try:
        yield
    except Refused as exc:
        if exc.strerror == NOT_INSIDE:
            raise OSError(errno.EACCES, NOT_INSIDE) from None
        if exc.reason == GIT_INTERNAL:
            raise OSError(errno.EACCES, "it leads into a .git folder, which Kenning never reads") from None
        raise OSError(errno.EACCES, "it now leads outside its source's folder") from None


def _root_for(root: str) -> SourceRoot:
    if not root:
        raise OSError(errno.ENOENT, "its source's folder is not known")
    try:
        return SourceRoot(root)
    except SourceError as exc:
        raise OSError(errno.ENOENT, str(exc)) from None


def open_no_follow(path: str | os.PathLike[str]) -> int:
    """A descriptor for reading a file outside any source (Kenning's own files, a user's
    config), which must not be a symlink; O_NONBLOCK so a FIFO cannot hang the open."""
    return os.open(path, _FILE_FLAGS)


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
