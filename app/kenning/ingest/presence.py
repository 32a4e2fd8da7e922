"""The one rule for a file Kenning cannot read, for full runs, the watcher and the app.

Only a file that is really gone loses its documents: the folder holding it was read
and the entry is not there (or a folder on its way is now a plain file).  A file that
cannot be read now (permissions, no file descriptors left, an I/O error, a folder that
became a link leading out of the source, a root that cannot be opened) keeps its
documents and is listed with its reason: that is often passing, and the indexed text
is still the best there is.  A file that is there but the rules now leave out (an
exclusion, a .gitignore line) is not "unreadable": its documents go, and so do those of
a path that now leads into `.git/`: nothing from there may stay searchable.
"""

from __future__ import annotations

import os
from collections.abc import Iterable

from kenning.core.confine import GIT_INTERNAL, OUTSIDE_ROOT, Refused, SourceRoot, split_rel
from kenning.core.fsnames import file_of
from kenning.core.records import Record
from kenning.core.types import SkippedFile
from kenning.ingest.extracted import PARTIAL

PRESENT = "present"
GONE = "gone"
UNKNOWN = "unknown"

# Skip reasons that say nothing about whether a file still exists or what it holds: an
# extraction that could not run now (its worker could not start or was killed: out of
# processes or memory) or ran out of time (a loaded machine) says nothing of the file.
KEEP_REASONS = frozenset({"unreadable", PARTIAL, OUTSIDE_ROOT, "extract-failed", "timeout"})


class Presence(Record, frozen=True):
    state: str  # PRESENT | GONE | UNKNOWN
    reason: str = ""  # for UNKNOWN: the skip reason it is listed with
    detail: str = ""

    def skipped(self, rel_path: str) -> SkippedFile:
        return SkippedFile(rel_path, self.reason, f"{self.detail}; its indexed documents are kept")


def looks_unmounted(root: SourceRoot) -> bool:
    """Whether the root folder holds no entry at all: how a mount point looks while its
    disk or share is not mounted.  Then "every file is gone" is not to be believed."""
    try:
        fd = root.open_dir(())
    except OSError:
        return False
    try:
        with os.scandir(fd) as entries:
            return next(entries, None) is None
    finally:
        os.close(fd)


def empty_root_keeps(root: SourceRoot | None, gone: Iterable[str]) -> str | None:
    """Why nothing is removed when the files of several documents seem gone at once
    from a root that is now empty (a disk not mounted looks exactly so), else None.
    A single file deleted from a folder, even its last, goes as usual."""
    files = {file_of(rel) for rel in gone}
    if len(files) < 2 or root is None or not looks_unmounted(root):
        return None
    return (
        f"{root.root} is empty now (a disk or a share that is not mounted?): the {len(files)} files "
        "indexed from it are kept until it holds files again; remove the source to drop them"
    )


def keeps_documents(reason: str) -> bool:
    """Whether a file skipped for this reason keeps what was indexed from it."""
    return reason in KEEP_REASONS


def presence(root: SourceRoot | None, rel_path: str) -> Presence:
    """Whether the file of a stored document (a part's container) is there, really gone,
    or cannot be known now.  `root` is None when the source's root cannot be opened."""
    if root is None:
        return Presence(UNKNOWN, "unreadable", "its source's folder cannot be read")
    try:
        root.resolve(split_rel(file_of(rel_path)))
    except (FileNotFoundError, NotADirectoryError):
        # Raised only once the folder holding the missing entry was opened and read.
        return Presence(GONE)
    except Refused as exc:
        if exc.reason == GIT_INTERNAL:
            return Presence(GONE)  # never to be indexed: what was is removed
        return Presence(UNKNOWN, exc.reason, exc.strerror or str(exc))
    except OSError as exc:
        return Presence(UNKNOWN, "unreadable", f"{type(exc).__name__}: {exc.strerror or exc}")
    return Presence(PRESENT)


def kept_folders(skipped: list[SkippedFile]) -> tuple[str, ...]:
    """Prefixes of folders skipped for a keeping reason ("" for the root: everything)."""
    out = []
    for s in skipped:
        if keeps_documents(s.reason):
            rel = s.rel_path.rstrip("/")
            out.append("" if rel in ("", ".") else rel + "/")
    return tuple(out)


def under(rel_path: str, prefixes: tuple[str, ...]) -> bool:
    return any(p == "" or rel_path.startswith(p) for p in prefixes)
