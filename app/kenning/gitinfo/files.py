"""The files of a work tree, exactly as git sees them."""

from __future__ import annotations

import os

from kenning.core.globcost import costly_lines
from kenning.gitinfo._git import GITLINK_MODE, GitRepo, open_repo

MAX_IGNORE_BYTES = 1 << 20  # read of each ignore file checked

# One ls-files call gives everything, each record tagged (-t) and, for index entries,
# with its mode (--stage):
#   "? path"                          untracked and not ignored
#   "<tag> <mode> <sha> <stage>\tpath"  index entry; tag H tracked, R deleted from the
#                                     work tree, S skip-worktree (sparse checkout), M unmerged, ...
# A deleted file is listed twice (H from --cached, R from --deleted).
_LS_FILES = (
    "ls-files",
    "-z",
    "-t",
    "--stage",
    "--cached",
    "--deleted",
    "--others",
    "--exclude-standard",
)

# Tags of index entries that have no file in the work tree.
_ABSENT_TAGS = (b"R", b"S")


def list_files(
    root: str | os.PathLike[str], *, exact_root: bool = False, problems: list[str] | None = None
) -> list[str]:
    """Tracked files plus untracked files that are not ignored, sorted.

    Paths are relative to the top of the work tree, '/'-separated, decoded like
    os.fsdecode (undecodable bytes become surrogate escapes, so every path can still be
    opened).  Left out: tracked files deleted from the work tree, files outside a sparse
    checkout, submodules, and untracked nested repositories.  With exact_root, `root`
    must be the top of its work tree (see open_repo).

    git's own pattern matching backtracks too (core.globcost): when a tracked ignore
    file holds a pattern that could take git minutes, untracked files are not listed
    and the reason is appended to `problems`.
    """
    with open_repo(root, exact_root=exact_root) as repo:
        costly = _costly_ignore_patterns(repo)
        if problems is not None:
            problems += costly
        raw = repo.run(*(_LS_FILES[:-2] if costly else _LS_FILES))
    present, absent = _parse_ls_files(raw)
    return sorted(os.fsdecode(p) for p in present - absent)


def _costly_ignore_patterns(repo: GitRepo) -> list[str]:
    """Costly patterns in the tracked .gitignore files and .git/info/exclude (reading
    the index runs no pattern)."""
    names = [os.fsdecode(p) for p in repo.run("ls-files", "-z", "--cached").split(b"\0") if p]
    ignore_files = [n for n in names if n == ".gitignore" or n.endswith("/.gitignore")]
    candidates = [(n, os.path.join(repo.root, *n.split("/"))) for n in ignore_files]
    candidates.append((".git/info/exclude", os.path.join(repo.git_dir, "info", "exclude")))
    problems = []
    for shown, path in candidates:
        try:
            with open(path, "rb") as f:
                text = f.read(MAX_IGNORE_BYTES).decode("utf-8", "replace")
        except OSError:
            continue
        problems += [f"{shown} {p}; untracked files are not listed" for p in costly_lines(text)]
    return problems


def _parse_ls_files(raw: bytes) -> tuple[set[bytes], set[bytes]]:
    present: set[bytes] = set()
    absent: set[bytes] = set()
    for record in raw.split(b"\0"):
        if not record:
            continue
        if record.startswith(b"? "):
            path = record[2:]
            if not path.endswith(b"/"):  # "dir/" is an untracked nested repository
                present.add(path)
            continue
        info, _, path = record.partition(b"\t")
        tag, mode = info.split(b" ", 2)[:2]
        if mode.decode() == GITLINK_MODE:
            continue
        # Unmerged files appear once per stage; the sets deduplicate them.
        (absent if tag in _ABSENT_TAGS else present).add(path)
    return present, absent
