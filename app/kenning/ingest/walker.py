"""Listing a source's candidate files, honouring git, .gitignore and the user's globs.

The walk yields files as it finds them (never the whole tree in memory at once) and
reports what it passes over, so a strange tree never stops an index run.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pathspec

from kenning.core.confine import checked_root, is_inside, resolve_inside
from kenning.core.errors import SourceError
from kenning.core.fsnames import is_part_path, storable_name
from kenning.core.types import SkippedFile, Source
from kenning.ingest.filetypes import MBOX, classify, has_no_extension
from kenning.ingest.globs import MAX_IGNORE_FILE_BYTES, compile_patterns
from kenning.ingest.reading import starts_like_mbox

RESERVED_NAME_DETAIL = "a name ending in #<number> is how Kenning names a mailbox's messages; rename it to index it"

# Folders that hold tools' output or other people's code, never the user's notes.
DEFAULT_EXCLUDED_DIRS = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        "node_modules",
        "__pycache__",
        ".venv",
        "venv",
        ".tox",
        ".nox",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".hypothesis",
        "build",
        "dist",
        "target",
        ".next",
        ".nuxt",
        ".gradle",
        ".cache",
        ".eggs",
        "site-packages",
        ".idea",
        ".vs",
        ".terraform",
        "bower_components",
        ".obsidian",  # an Obsidian vault's settings and plugins
        ".trash",  # notes deleted in Obsidian
    }
)
MAX_DEPTH = 64
# The skipped-file entry under which refused include/exclude globs are reported.
GLOBS_ENTRY = "(globs)"


@dataclass(frozen=True)
class FoundFile:
    rel_path: str  # POSIX, relative to the source root
    abs_path: str
    kind: str


class SourceFilter:
    """The user's include/exclude globs plus the default excluded folders.

    Globs are checked on input; one an older store kept that cannot be obeyed (it does
    not parse, or matching it could take minutes) is left out and listed in `problems`.
    """

    def __init__(self, source: Source) -> None:
        self.include, include_problems = compile_patterns(source.include)
        self.exclude, exclude_problems = compile_patterns(source.exclude)
        self.problems = [f"include glob {p}" for p in include_problems]
        self.problems += [f"exclude glob {p}" for p in exclude_problems]

    @staticmethod
    def excluded_dir_name(name: str) -> bool:
        return name in DEFAULT_EXCLUDED_DIRS or name.endswith(".egg-info")

    def excluded_dir(self, name: str, abs_dir: str) -> bool:
        # A virtualenv under any name is recognised by its marker file.
        return self.excluded_dir_name(name) or os.path.exists(os.path.join(abs_dir, "pyvenv.cfg"))

    def accepts(self, rel_path: str) -> bool:
        if self.exclude is not None and self.exclude.match_file(rel_path):
            return False
        return self.include is None or self.include.match_file(rel_path)


def walk_source(source: Source, skipped: list[SkippedFile]) -> Iterator[FoundFile]:
    """Yield indexable files of a source; append what is passed over to skipped.

    Raises SourceError before yielding anything when the root itself cannot be walked
    (missing, unreadable, now a link elsewhere): then nothing is known about its files.
    Every file yielded has abs_path resolved and inside the root.
    """
    real_root = checked_root(source.root)
    source_filter = SourceFilter(source)
    skipped += [SkippedFile(GLOBS_ENTRY, "bad-pattern", problem) for problem in source_filter.problems]
    if source.kind == "git":
        yield from _walk_git(source, real_root, source_filter, skipped)
    else:
        yield from _walk_folder(real_root, source_filter, skipped)


def _accept(
    rel: str, abs_path: str, source_filter: SourceFilter, skipped: list[SkippedFile] | None = None
) -> FoundFile | None:
    if not source_filter.accepts(rel):
        return None
    kind = classify(rel)
    if kind is None and has_no_extension(rel) and starts_like_mbox(abs_path):
        kind = MBOX  # a mailbox named without .mbox (Thunderbird's Inbox, Sent)
    if kind is None:
        return None
    if is_part_path(rel):
        # "x.mbox#3" names the third message of x.mbox: a file called that would share its name.
        if skipped is not None:
            skipped.append(SkippedFile(rel, "reserved-name", RESERVED_NAME_DETAIL))
        return None
    return FoundFile(rel, abs_path, kind)


def _walk_git(
    source: Source, real_root: str, source_filter: SourceFilter, skipped: list[SkippedFile]
) -> Iterator[FoundFile]:
    from kenning.gitinfo import list_files

    problems: list[str] = []
    listed = list_files(source.root, exact_root=True, problems=problems)
    skipped += [SkippedFile(".gitignore", "bad-pattern", problem) for problem in problems]
    for fs_rel in listed:
        # git's names are file-system names (undecodable bytes as surrogates); the
        # store keeps them the way the folder walker does.
        rel = storable_name(fs_rel)
        parts = fs_rel.split("/")
        # git already leaves out what .gitignore ignores: only the names are checked here.
        if any(source_filter.excluded_dir_name(p) for p in parts[:-1]):
            continue
        real = resolve_inside(os.path.join(real_root, *parts), real_root)
        if real is None:
            # A symlinked file, or a symlinked folder anywhere on its path.
            skipped.append(SkippedFile(rel, "outside-root", "a symlink on its path leads out of the repository"))
            continue
        found = _accept(rel, real, source_filter, skipped)
        if found:
            yield found


class _IgnoreStack:
    """The .gitignore files in force for one folder: the deepest decision wins."""

    def __init__(self, real_root: str | None = None, skipped: list[SkippedFile] | None = None) -> None:
        self._specs: list[tuple[str, pathspec.PathSpec[Any]]] = []
        self._real_root = real_root
        self._skipped = skipped if skipped is not None else []

    def push_dir(self, rel_dir: str, abs_dir: str) -> int:
        rel = f"{rel_dir}/.gitignore" if rel_dir else ".gitignore"
        lines = self._read(os.path.join(abs_dir, ".gitignore"), rel)
        if lines is None:
            return 0
        spec, problems = compile_patterns(lines)
        self._skipped += [SkippedFile(rel, "bad-pattern", problem) for problem in problems]
        if spec is None:
            return 0
        self._specs.append((rel_dir, spec))
        return 1

    def _read(self, path: str, rel: str) -> list[str] | None:
        """The ignore file's lines; None when absent, leading out of the root, or too big."""
        if not os.path.lexists(path):
            return None
        real_root = self._real_root or os.path.realpath(os.path.dirname(path))
        real = resolve_inside(path, real_root)
        if real is None:
            self._skipped.append(SkippedFile(rel, "outside-root", "symlink points outside the source; not obeyed"))
            return None
        try:
            with open(real, "rb") as f:
                raw = f.read(MAX_IGNORE_FILE_BYTES + 1)
        except OSError:
            return None
        if len(raw) > MAX_IGNORE_FILE_BYTES:
            self._skipped.append(
                SkippedFile(rel, "bad-pattern", f"larger than {MAX_IGNORE_FILE_BYTES} bytes: not obeyed")
            )
            return None
        return raw.decode("utf-8", "replace").splitlines()

    def pop(self, count: int) -> None:
        del self._specs[len(self._specs) - count :]

    def ignored(self, rel_path: str, is_dir: bool) -> bool:
        verdict = False
        for base, spec in self._specs:
            sub = rel_path[len(base) + 1 :] if base else rel_path
            result = spec.check_file(sub + "/" if is_dir else sub)
            if result.include is not None:
                verdict = result.include
        return verdict


def _walk_folder(real_root: str, source_filter: SourceFilter, skipped: list[SkippedFile]) -> Iterator[FoundFile]:
    ignores = _IgnoreStack(real_root, skipped)
    yield from _walk_dir(real_root, "", real_root, source_filter, ignores, skipped, 0)


def _walk_dir(
    abs_dir: str,
    rel_dir: str,
    real_root: str,
    source_filter: SourceFilter,
    ignores: _IgnoreStack,
    skipped: list[SkippedFile],
    depth: int,
) -> Iterator[FoundFile]:
    if depth > MAX_DEPTH:
        skipped.append(SkippedFile(rel_dir, "too-deep", f"more than {MAX_DEPTH} nested folders"))
        return
    try:
        entries = sorted(os.scandir(abs_dir), key=lambda e: e.name)
    except FileNotFoundError:
        skipped.append(SkippedFile(rel_dir or ".", "vanished", "folder removed during the walk"))
        return
    except OSError as exc:
        skipped.append(SkippedFile(rel_dir or ".", "unreadable", exc.strerror or str(exc)))
        return
    pushed = ignores.push_dir(rel_dir, abs_dir)
    try:
        for entry in entries:
            yield from _visit(entry, rel_dir, real_root, source_filter, ignores, skipped, depth)
    finally:
        ignores.pop(pushed)


def _visit(
    entry: os.DirEntry[str],
    rel_dir: str,
    real_root: str,
    source_filter: SourceFilter,
    ignores: _IgnoreStack,
    skipped: list[SkippedFile],
    depth: int,
) -> Iterator[FoundFile]:
    if entry.name.startswith("."):
        # Hidden files and folders hold tool state (.obsidian, .vscode, .gitignore).
        return
    name = storable_name(entry.name)
    rel = f"{rel_dir}/{name}" if rel_dir else name
    try:
        is_link = entry.is_symlink()
        is_dir = entry.is_dir(follow_symlinks=False)
    except OSError as exc:
        skipped.append(SkippedFile(rel, "unreadable", str(exc)))
        return
    if is_link:
        yield from _visit_link(entry, rel, real_root, source_filter, ignores, skipped)
        return
    if is_dir:
        if source_filter.excluded_dir(entry.name, entry.path) or ignores.ignored(rel, True):
            return
        yield from _walk_dir(entry.path, rel, real_root, source_filter, ignores, skipped, depth + 1)
        return
    if ignores.ignored(rel, False):
        return
    found = _accept(rel, entry.path, source_filter, skipped)
    if found is None:
        return
    problem = _not_regular(entry)
    if problem:
        # A FIFO, socket or device named like a note (never opened), or a file gone.
        skipped.append(SkippedFile(rel, *problem))
        return
    yield found


def _visit_link(
    entry: os.DirEntry[str],
    rel: str,
    real_root: str,
    source_filter: SourceFilter,
    ignores: _IgnoreStack,
    skipped: list[SkippedFile],
) -> Iterator[FoundFile]:
    """A link is indexed only when it points at a file inside the root; links never lead out."""
    target = os.path.realpath(entry.path)
    if not is_inside(target, real_root):
        if classify(rel) is not None or os.path.isdir(entry.path):
            skipped.append(SkippedFile(rel, "outside-root", "symlink points outside the source"))
        return
    if os.path.isdir(target):
        # Its contents are indexed at their real place; following it could loop.
        return
    if not os.path.exists(target):
        skipped.append(SkippedFile(rel, "vanished", "broken symlink"))
        return
    if ignores.ignored(rel, False):
        return
    found = _accept(rel, target, source_filter, skipped)
    if found:
        yield found


def _not_regular(entry: os.DirEntry[str]) -> tuple[str, str] | None:
    """(reason, detail) when entry is not a regular file, else None."""
    try:
        mode = entry.stat(follow_symlinks=False).st_mode
    except FileNotFoundError:
        return "vanished", "removed during the walk"
    except OSError as exc:
        return "unreadable", exc.strerror or str(exc)
    return None if stat.S_ISREG(mode) else ("unreadable", "not a regular file")


def accepted_file(source: Source, rel_path: str, git_files: set[str] | None = None) -> FoundFile | None:
    """The file at rel_path if a full walk of the source would index it, else None.

    For the watcher, which hears about single paths: the same rules as the walk
    (hidden names, excluded folders, .gitignore files on the way down, the user's
    globs, symlinks confined to the root), without walking.  For a git source,
    `git_files` is the work tree's file list (git decides what is ignored).
    """
    parts = rel_path.split("/")
    if not rel_path or any(p in ("", ".", "..") for p in parts):
        return None
    source_filter = SourceFilter(source)
    abs_path = os.path.join(source.root, *parts)
    if source.kind == "git":
        if git_files is None or rel_path not in git_files:
            return None
        if any(source_filter.excluded_dir_name(p) for p in parts[:-1]):
            return None
    elif not _folder_path_allowed(source.root, parts, source_filter):
        return None
    try:
        real_root = checked_root(source.root)
    except SourceError:
        return None  # the next full run reports the root
    real = resolve_inside(abs_path, real_root)  # every component, as the walk does
    if real is None:
        return None
    try:
        if not stat.S_ISREG(os.stat(real).st_mode):
            return None
    except OSError:
        return None
    return _accept(rel_path, real, source_filter)


def _folder_path_allowed(root: str, parts: list[str], source_filter: SourceFilter) -> bool:
    if any(p.startswith(".") for p in parts):
        return False
    ignores = _IgnoreStack(os.path.realpath(root))
    abs_dir, rel_dir = root, ""
    ignores.push_dir("", root)
    for name in parts[:-1]:
        abs_dir = os.path.join(abs_dir, name)
        rel_dir = f"{rel_dir}/{name}" if rel_dir else name
        if os.path.islink(abs_dir) or source_filter.excluded_dir(name, abs_dir) or ignores.ignored(rel_dir, True):
            return False  # a linked folder is indexed at its real place, as in the walk
        ignores.push_dir(rel_dir, abs_dir)
    return not ignores.ignored("/".join(parts), False)
