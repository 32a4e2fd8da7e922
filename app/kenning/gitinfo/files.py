"""The files of a work tree: what git tracks, plus the untracked files no ignore rule
leaves out.

git lists tracked and untracked files without reading a single ignore file (no
`--exclude-standard`): its matcher backtracks on hostile patterns (hours for
`*a*a*/*a*a*/…`), and it blocks on a FIFO named .gitignore.  Kenning obeys the ignore
files itself (core.ignorefiles: read through the work tree's SourceRoot, matched in
linear time), with git's precedence: each folder's .gitignore (deeper ones win), then
.git/info/exclude, then the user's global excludes file.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator

from kenning.core.confine import SourceRoot, is_git_name
from kenning.core.errors import SourceError
from kenning.core.ignorefiles import IgnoreRules, IgnoreUnreadable, read_rules_file, shown
from kenning.core.types import SkippedFile
from kenning.core.wildmatch import PatternList
from kenning.gitinfo._git import GITLINK_MODE, GitRepo, open_repo

MAX_UNTRACKED_DEPTH = 64

# One ls-files call gives everything, each record tagged (-t) and, for index entries,
# with its mode (--stage):
#   "? path"                          untracked; "? dir/" a wholly untracked folder (or a
#                                     nested repository), which Kenning walks itself
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
    "--directory",
    "--no-empty-directory",
)

# Tags of index entries that have no file in the work tree.
_ABSENT_TAGS = (b"R", b"S")


def list_files(
    root: str | os.PathLike[str], *, exact_root: bool = False, problems: list[SkippedFile] | None = None
) -> list[str]:
    """Tracked files plus untracked files that are not ignored, sorted.

    Paths are relative to the top of the work tree, '/'-separated, decoded like
    os.fsdecode (undecodable bytes become surrogate escapes, so every path can still be
    opened).  Left out: tracked files deleted from the work tree, files outside a sparse
    checkout, submodules, and untracked nested repositories.  With exact_root, `root`
    must be the top of its work tree (see open_repo).

    Ignore files that cannot be obeyed are appended to `problems` (bad lines, links
    git does not follow); under a folder whose .gitignore cannot be read no untracked
    file is listed, and the folder is appended with the reason "unreadable".
    """
    found: list[SkippedFile] = []
    with open_repo(root, exact_root=exact_root) as repo:
        raw = repo.run(*_LS_FILES)
        base = _weaker_rules(repo, found)
        top = repo.root
    tracked, absent, untracked, folders = _parse_ls_files(raw)
    files = {os.fsdecode(p) for p in tracked - absent}
    try:
        tree = SourceRoot(top)
    except SourceError:
        tree = None  # the work tree vanished meanwhile: its untracked files are not known
    if tree is not None:
        with tree:
            rules = IgnoreRules(tree, found, follow_links=False, base=base)
            for name in sorted(untracked):
                if _kept(rules, os.fsdecode(name).split("/"), False, found):
                    files.add(os.fsdecode(name))
            for folder in sorted(folders):
                files.update(_untracked_under(tree, rules, os.fsdecode(folder).split("/"), found))
    if problems is not None:
        problems += _once(found)
    return sorted(files)


def _kept(rules: IgnoreRules, parts: list[str], is_dir: bool, found: list[SkippedFile]) -> bool:
    try:
        return not rules.excluded(parts, is_dir)
    except IgnoreUnreadable as exc:
        found.append(exc.skipped())
        return False


def _untracked_under(tree: SourceRoot, rules: IgnoreRules, parts: list[str], found: list[SkippedFile]) -> Iterator[str]:
    """The files of a wholly untracked folder that no ignore rule leaves out, as git's
    --others would list them (links are files to git; nested repositories are left out)."""
    if len(parts) > MAX_UNTRACKED_DEPTH or not _kept(rules, parts, True, found) or _is_repository(tree, parts):
        return
    try:
        fd = tree.open_dir(parts)
    except OSError as exc:
        found.append(SkippedFile(shown(parts), "unreadable", exc.strerror or str(exc)))
        return
    try:
        with os.scandir(fd) as listing:
            entries = sorted((e.name, e.is_dir(follow_symlinks=False)) for e in listing)
    except OSError as exc:
        found.append(SkippedFile(shown(parts), "unreadable", exc.strerror or str(exc)))
        return
    finally:
        os.close(fd)
    for name, is_dir in entries:
        if is_git_name(name):
            continue
        child = [*parts, name]
        if is_dir:
            yield from _untracked_under(tree, rules, child, found)
        elif _kept(rules, child, False, found):
            yield "/".join(child)


def _is_repository(tree: SourceRoot, parts: list[str]) -> bool:
    return tree.has_entry(parts, ".git")


def _weaker_rules(repo: GitRepo, found: list[SkippedFile]) -> list[PatternList]:
    """The user's global excludes, then the repository's info/exclude (stronger)."""
    out = []
    global_file = _global_excludes_file(repo)
    if global_file:
        rules = read_rules_file(global_file, found, "(global git excludes)")
        if rules is not None:
            out.append(rules)
    exclude = read_rules_file(
        os.path.join(repo.common_dir or repo.git_dir, "info", "exclude"), found, ".git/info/exclude"
    )
    if exclude is not None:
        out.append(exclude)
    return out


def _global_excludes_file(repo: GitRepo) -> str | None:
    """core.excludesFile of the user's own global config (never a repository's: it
    could name any file of the user's), else git's default place for it."""
    named = repo.try_run("config", "--global", "--path", "--get", "core.excludesFile")
    if named and named.strip():
        return os.fsdecode(named.strip())
    xdg = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    default = os.path.join(xdg, "git", "ignore")
    try:
        return default if stat.S_ISREG(os.stat(default).st_mode) else None
    except OSError:
        return None


def _once(items: list[SkippedFile]) -> list[SkippedFile]:
    return list(dict.fromkeys(items))


def _parse_ls_files(raw: bytes) -> tuple[set[bytes], set[bytes], set[bytes], set[bytes]]:
    """(tracked, absent from the work tree, untracked files, wholly untracked folders)."""
    present: set[bytes] = set()
    absent: set[bytes] = set()
    untracked: set[bytes] = set()
    folders: set[bytes] = set()
    for record in raw.split(b"\0"):
        if not record:
            continue
        if record.startswith(b"? "):
            path = record[2:]
            if path.endswith(b"/"):
                folders.add(path.rstrip(b"/"))
            else:
                untracked.add(path)
            continue
        info, _, path = record.partition(b"\t")
        tag, mode = info.split(b" ", 2)[:2]
        if mode.decode() == GITLINK_MODE:
            continue
        # Unmerged files appear once per stage; the sets deduplicate them.
        (absent if tag in _ABSENT_TAGS else present).add(path)
    return present, absent, untracked, folders
