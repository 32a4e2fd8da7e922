"""Keeping every file read inside its source's root.

A path is judged by where it really leads: every component resolved (symlinked
parent folders included), not only its last one.  Every reader of source files asks
here first.
"""

from __future__ import annotations

import os

from kenning.core.errors import SourceError


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
