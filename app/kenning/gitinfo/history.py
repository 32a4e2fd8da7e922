"""Per-path commit times, read from one `git log` pass each.

Times are committer times (when the change landed on the branch), in epoch seconds.
Only the history of HEAD is read.  Renames are not followed: a renamed file's history
starts at the rename, and its old path keeps the times it had.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator

from kenning.gitinfo._git import head_sha, open_repo, split_nul, stream_git

# Starts each commit's header record.  With -z, git writes "<marker><ct>" NUL, then (if
# the commit touched files) "\n" + the first path, NUL, each further path, NUL.  Control
# bytes make a clash with a real file name practically impossible.
_MARKER = b"\x01\x02kenning\x03"

_LOG_ARGS = (
    "log",
    "-z",
    "--no-color",
    "--root",  # list the first commit's files even if log.showRoot=false
    "--no-relative",  # diff.relative=true would make paths cwd-relative
    "--no-show-signature",  # log.showSignature=true would mix gpg output into the stream
    "--no-ext-diff",
    "--no-textconv",
    "--no-renames",  # a rename is a delete plus an add: both paths get this commit
    "--name-only",
    "--format=%x01%x02kenning%x03%ct",
)

DAY = 86400.0


def path_commit_times(root: str | os.PathLike[str], *, exact_root: bool = False) -> dict[str, tuple[float, float]]:
    """Every path that appears in HEAD's history → (first commit time, last commit time).

    Deleted paths are included (with the time of the commit that deleted them as their
    last time).  Merge commits list no paths, so a path counts at the commits that
    changed it on whichever branch they were made.  A repository without commits → {}.
    """
    times: dict[str, tuple[float, float]] = {}
    for when, path in _log_paths(root, exact_root=exact_root):
        seen = times.get(path)
        if seen is None:
            times[path] = (when, when)
        elif when < seen[0] or when > seen[1]:
            # Committer dates are not monotonic along history (rebases, skewed clocks),
            # so keep the true min and max instead of trusting log order.
            times[path] = (min(seen[0], when), max(seen[1], when))
    return times


def recent_paths(root: str | os.PathLike[str], days: int = 30, now: float | None = None) -> dict[str, float]:
    """Paths changed by a commit in the last `days` days → their latest commit time.

    With `now` given the window is [now - days, now], so results are reproducible for
    any clock.  Without it, commits dated slightly in the future by a skewed clock
    still count as recent.
    """
    upper = now if now is not None else float("inf")
    since = (time.time() if now is None else now) - days * DAY
    recent: dict[str, float] = {}
    # --since prunes the walk inside git; the check below makes the window exact.
    limit = (f"--since={_git_date(since)}",) if since > 0 else ()
    for when, path in _log_paths(root, *limit):
        if since <= when <= upper and when > recent.get(path, -1.0):
            recent[path] = when
    return recent


def _git_date(epoch: float) -> str:
    # "@<seconds> +0000" is git's own raw date format; unambiguous in every locale.
    return f"@{int(epoch)} +0000"


def _log_paths(root: str | os.PathLike[str], *extra: str, exact_root: bool = False) -> Iterator[tuple[float, str]]:
    """(commit time, path) for every path of every commit of HEAD's history."""
    with open_repo(root, exact_root=exact_root) as repo:
        if head_sha(repo) is None:  # git log fails on an unborn branch; empty is normal
            return
        yield from _parse_log(split_nul(stream_git(repo, *_LOG_ARGS, *extra)))


def _parse_log(records: Iterator[bytes]) -> Iterator[tuple[float, str]]:
    when = 0.0
    first_after_header = False
    for record in records:
        if record.startswith(_MARKER):
            when = float(record[len(_MARKER) :])
            first_after_header = True
            continue
        if first_after_header:
            # git separates the header from the path list with one newline; only that
            # newline is stripped, so a path that itself starts with "\n" survives.
            record = record[1:] if record.startswith(b"\n") else record
            first_after_header = False
        if record:
            yield when, os.fsdecode(record)
