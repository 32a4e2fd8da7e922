"""Listing a source's candidate files, honouring git, .gitignore and the user's globs.

The walk yields files as it finds them (never the whole tree in memory at once) and
reports what it passes over, so a strange tree never stops an index run.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator, Sequence
from dataclasses import field

from kenning.core.confine import GIT_INTERNAL, OUTSIDE_ROOT, Refused, SourceRoot, is_git_name
from kenning.core.fsnames import filesystem_name, is_part_path, storable_name
from kenning.core.ignorefiles import IgnoreRules, IgnoreUnreadable
from kenning.core.records import Record
from kenning.core.types import SkippedFile, Source
from kenning.ingest.filetypes import MBOX, classify, has_no_extension
from kenning.ingest.globs import compile_patterns
from kenning.ingest.reading import skip_for, starts_like_mbox

NOT_REGULAR = "not a regular file"  # a named pipe, a socket or a device where a file is
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


class FoundFile(Record, frozen=True):
    rel_path: str  # POSIX, relative to the source root, as stored (core.fsnames)
    parts: tuple[str, ...]  # its file-system names below the root: how it is opened
    kind: str
    root: SourceRoot = field(compare=False, repr=False)

    @property
    def abs_path(self) -> str:
        """Where it lies, for showing: files are opened through `root`, never by this."""
        return self.root.abs_path(self.parts)


class SourceFilter:
    """The user's include/exclude globs plus the default excluded folders.

    Globs are checked on input; one an older store kept that cannot be obeyed (it does
    not parse, or is too long) is left out and listed in `problems`.
    """

    def __init__(self, source: Source) -> None:
        self.include, include_problems = compile_patterns(source.include)
        self.exclude, exclude_problems = compile_patterns(source.exclude)
        self.problems = [f"include glob {p}" for p in include_problems]
        self.problems += [f"exclude glob {p}" for p in exclude_problems]

    @staticmethod
    def excluded_dir_name(name: str) -> bool:
        return name in DEFAULT_EXCLUDED_DIRS or name.endswith(".egg-info") or is_git_name(name)

    def excluded_dir(self, name: str, dir_fd: int | None = None, abs_dir: str = "") -> bool:
        # A virtualenv under any name is recognised by its marker file.
        return self.excluded_dir_name(name) or _has_venv_marker(name, dir_fd, abs_dir)

    def accepts(self, rel_path: str) -> bool:
        names = rel_path.split("/")
        if self.exclude is not None and self.exclude.matches_file(names):
            return False
        return self.include is None or self.include.matches_file(names)


def _has_venv_marker(name: str, dir_fd: int | None, abs_dir: str) -> bool:
    try:
        if dir_fd is not None and os.stat in os.supports_dir_fd:
            os.stat(os.path.join(name, "pyvenv.cfg"), dir_fd=dir_fd, follow_symlinks=False)
        else:
            os.lstat(os.path.join(abs_dir, "pyvenv.cfg"))
    except OSError:
        return False
    return True


def walk_source(source: Source, skipped: list[SkippedFile]) -> Iterator[FoundFile]:
    """Yield indexable files of a source; append what is passed over to skipped.

    Raises SourceError before yielding anything when the root itself cannot be walked
    (missing, unreadable, now a link elsewhere): then nothing is known about its files.
    Every file yielded is opened through its `root`, inside the source's real root.
    """
    with SourceRoot(source.root) as root:
        source_filter = SourceFilter(source)
        skipped += [SkippedFile(GLOBS_ENTRY, "bad-pattern", problem) for problem in source_filter.problems]
        if source.kind == "git":
            yield from _walk_git(source, root, source_filter, skipped)
        else:
            yield from _walk_folder(root, source_filter, skipped)


def _accept(
    rel: str, parts: Sequence[str], root: SourceRoot, source_filter: SourceFilter, skipped: list[SkippedFile] | None
) -> FoundFile | None:
    if not source_filter.accepts(rel):
        return None
    kind = classify(rel)
    if kind is None and has_no_extension(rel) and starts_like_mbox(root, parts):
        kind = MBOX  # a mailbox named without .mbox (Thunderbird's Inbox, Sent)
    if kind is None:
        return None
    if is_part_path(rel):
        # "x.mbox#3" names the third message of x.mbox: a file called that would share its name.
        if skipped is not None:
            skipped.append(SkippedFile(rel, "reserved-name", RESERVED_NAME_DETAIL))
        return None
    return FoundFile(rel, tuple(parts), kind, root)


def _walk_git(
    source: Source, root: SourceRoot, source_filter: SourceFilter, skipped: list[SkippedFile]
) -> Iterator[FoundFile]:
    from kenning.gitinfo import list_files

    listed = list_files(source.root, exact_root=True, problems=skipped)
    for fs_rel in listed:
        found = _git_file(fs_rel, root, source_filter, skipped)
        if found:
            yield found


def _git_file(
    fs_rel: str, root: SourceRoot, source_filter: SourceFilter, skipped: list[SkippedFile] | None
) -> FoundFile | None:
    """One path git listed, if the rules index it.  git's names are file-system names
    (undecodable bytes as surrogates); the store keeps them as the folder walk does.
    git already left out what ignore files ignore: only names and links are checked here."""
    rel = storable_name(fs_rel)
    parts = fs_rel.split("/")
    if any(source_filter.excluded_dir_name(p) for p in parts[:-1]):
        return None
    try:
        _, info = root.resolve(parts)
    except OSError as exc:
        if skipped is not None:
            reason, detail = skip_for(exc)
            if reason == OUTSIDE_ROOT:
                detail = "a symlink on its path leads out of the repository"
            skipped.append(SkippedFile(rel, reason, detail))
        return None
    if stat.S_ISDIR(info.st_mode):
        return None  # a link to a folder: its files are listed at their own place
    if not stat.S_ISREG(info.st_mode):
        if skipped is None:  # the watcher (accepted_file): keeps what was indexed, lists why
            raise NotRegularFile(NOT_REGULAR)
        skipped.append(SkippedFile(rel, "unreadable", NOT_REGULAR))
        return None
    return _accept(rel, parts, root, source_filter, skipped)


def _walk_folder(root: SourceRoot, source_filter: SourceFilter, skipped: list[SkippedFile]) -> Iterator[FoundFile]:
    ignores = IgnoreRules(root, skipped)
    yield from _walk_dir(root, (), "", source_filter, ignores, skipped, 0)


def _walk_dir(
    root: SourceRoot,
    parts: tuple[str, ...],
    rel_dir: str,
    source_filter: SourceFilter,
    ignores: IgnoreRules,
    skipped: list[SkippedFile],
    depth: int,
) -> Iterator[FoundFile]:
    if depth > MAX_DEPTH:
        skipped.append(SkippedFile(rel_dir, "too-deep", f"more than {MAX_DEPTH} nested folders"))
        return
    try:
        fd = root.open_dir(parts)
    except OSError as exc:
        reason, detail = skip_for(exc)
        skipped.append(
            SkippedFile(rel_dir or ".", reason, detail if reason != "vanished" else "folder removed during the walk")
        )
        return
    try:
        try:
            with os.scandir(fd) as listing:
                entries = sorted(listing, key=lambda e: e.name)
        except OSError as exc:
            skipped.append(SkippedFile(rel_dir or ".", "unreadable", exc.strerror or str(exc)))
            return
        try:
            ignores.folder(parts)
        except IgnoreUnreadable as exc:
            skipped.append(exc.skipped())  # its files stay as indexed; nothing new is guessed
            return
        for entry in entries:
            yield from _visit(entry, fd, root, parts, rel_dir, source_filter, ignores, skipped, depth)
    finally:
        os.close(fd)


def _visit(
    entry: os.DirEntry[str],
    dir_fd: int,
    root: SourceRoot,
    parent: tuple[str, ...],
    rel_dir: str,
    source_filter: SourceFilter,
    ignores: IgnoreRules,
    skipped: list[SkippedFile],
    depth: int,
) -> Iterator[FoundFile]:
    if entry.name.startswith("."):
        # Hidden files and folders hold tool state (.obsidian, .vscode, .gitignore, .git).
        return
    name = storable_name(entry.name)
    rel = f"{rel_dir}/{name}" if rel_dir else name
    parts = (*parent, entry.name)
    try:
        is_link = entry.is_symlink()
        is_dir = entry.is_dir(follow_symlinks=False)
    except OSError as exc:
        skipped.append(SkippedFile(rel, "unreadable", str(exc)))
        return
    try:
        if is_link:
            yield from _visit_link(root, parts, rel, source_filter, ignores, skipped)
            return
        if is_dir:
            if source_filter.excluded_dir(entry.name, dir_fd) or ignores.ignored(parts, True):
                return
            yield from _walk_dir(root, parts, rel, source_filter, ignores, skipped, depth + 1)
            return
        if ignores.ignored(parts, False):
            return
    except IgnoreUnreadable as exc:  # met deeper than its own folder: reported there
        skipped.append(exc.skipped())
        return
    found = _accept(rel, parts, root, source_filter, skipped)
    if found is None:
        return
    problem = _not_regular(entry)
    if problem:
        # A FIFO, socket or device named like a note (never opened), or a file gone.
        skipped.append(SkippedFile(rel, *problem))
        return
    yield found


def _visit_link(
    root: SourceRoot,
    parts: tuple[str, ...],
    rel: str,
    source_filter: SourceFilter,
    ignores: IgnoreRules,
    skipped: list[SkippedFile],
) -> Iterator[FoundFile]:
    """A link is indexed only when it points at a file inside the root, outside .git;
    links never lead out."""
    try:
        _, info = root.resolve(parts)
    except Refused as exc:
        where = "outside the source" if exc.reason == OUTSIDE_ROOT else "into a .git folder"
        if classify(rel) is not None or exc.reason == GIT_INTERNAL or _points_at_folder(root, parts):
            skipped.append(SkippedFile(rel, exc.reason, f"symlink points {where}"))
        return
    except (FileNotFoundError, NotADirectoryError):
        skipped.append(SkippedFile(rel, "vanished", "broken symlink"))
        return
    except OSError as exc:
        skipped.append(SkippedFile(rel, *skip_for(exc)))
        return
    if stat.S_ISDIR(info.st_mode):
        # Its contents are indexed at their real place; following it could loop.
        return
    if ignores.ignored(parts, False):
        return
    found = _accept(rel, parts, root, source_filter, skipped)
    if found and not stat.S_ISREG(info.st_mode):
        skipped.append(SkippedFile(rel, "unreadable", NOT_REGULAR))
        return
    if found:
        yield found


def _points_at_folder(root: SourceRoot, parts: Sequence[str]) -> bool:
    """Whether a link leading out names a folder (looked at, never read)."""
    try:
        return os.path.isdir(os.path.join(root.real, *parts))
    except OSError:
        return False


def _not_regular(entry: os.DirEntry[str]) -> tuple[str, str] | None:
    """(reason, detail) when entry is not a regular file, else None."""
    try:
        mode = entry.stat(follow_symlinks=False).st_mode
    except FileNotFoundError:
        return "vanished", "removed during the walk"
    except OSError as exc:
        return "unreadable", exc.strerror or str(exc)
    return None if stat.S_ISREG(mode) else ("unreadable", NOT_REGULAR)


class NotRegularFile(OSError):
    """The path is there but is no regular file (a named pipe, a socket, a device): it
    cannot be read, and what was indexed from it is kept (ingest.presence)."""


def accepted_file(
    root: SourceRoot, source: Source, rel_path: str, git_files: set[str] | None = None
) -> FoundFile | None:
    """The file at rel_path if a full walk of the source would index it, else None.

    For the watcher, which hears about single paths: the same rules as the walk
    (hidden names, excluded folders, .gitignore files on the way down, the user's
    globs, symlinks confined to the root and out of .git), without walking.  For a git
    source, `git_files` is the work tree's file list (Kenning's ignore rules applied).
    OSError when the path cannot be judged now (see ingest.presence), NotRegularFile
    when it is there but cannot be read as a file, IgnoreUnreadable when a .gitignore on
    its way cannot be read.
    """
    names = rel_path.split("/")
    if not rel_path or any(p in ("", ".", "..") for p in names):
        return None
    source_filter = SourceFilter(source)
    fs_rel = filesystem_name(rel_path)
    if source.kind == "git":
        if git_files is None or fs_rel not in git_files:
            return None
        return _git_file(fs_rel, root, source_filter, None)
    parts = fs_rel.split("/")
    if not _folder_path_allowed(root, parts, source_filter):
        return None
    _, info = root.resolve(parts)  # every component, as the walk does
    if stat.S_ISDIR(info.st_mode):
        return None
    if not stat.S_ISREG(info.st_mode):
        raise NotRegularFile(NOT_REGULAR)
    return _accept(rel_path, parts, root, source_filter, None)


def _folder_path_allowed(root: SourceRoot, parts: list[str], source_filter: SourceFilter) -> bool:
    if any(p.startswith(".") for p in parts):
        return False
    ignores = IgnoreRules(root, [])
    for depth in range(1, len(parts)):
        folder = parts[:depth]
        info = root.lstat(folder)
        if stat.S_ISLNK(info.st_mode):
            return False  # a linked folder is indexed at its real place, as in the walk
        if source_filter.excluded_dir(folder[-1], None, root.abs_path(folder)) or ignores.ignored(folder, True):
            return False
    return not ignores.ignored(parts, False)
