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

from dataclasses import dataclass

from kenning.core.confine import GIT_INTERNAL, OUTSIDE_ROOT, Refused, SourceRoot, split_rel
from kenning.core.fsnames import file_of
from kenning.core.types import SkippedFile
from kenning.ingest.extracted import PARTIAL

PRESENT = "present"
GONE = "gone"
UNKNOWN = "unknown"

# Skip reasons that say nothing about whether a file still exists or what it holds.
KEEP_REASONS = frozenset({"unreadable", PARTIAL, OUTSIDE_ROOT})


@dataclass(frozen=True)
class Presence:
    state: str  # PRESENT | GONE | UNKNOWN
    reason: str = ""  # for UNKNOWN: the skip reason it is listed with
    detail: str = ""

    def skipped(self, rel_path: str) -> SkippedFile:
        return SkippedFile(rel_path, self.reason, f"{self.detail}; its indexed documents are kept")


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
