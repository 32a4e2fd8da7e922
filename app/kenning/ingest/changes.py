"""Indexing a set of changed paths of one source, without walking the rest.

The file watcher (ingest.watch) hears about single paths; re-walking a 100k-file
tree for each saved note would take seconds.  Each path is judged by the same rules
as the walk (walker.accepted_file) and read, chunked and written like any file of a
full run (textphase).  What loses its documents follows the one rule of
ingest.presence: a file really gone, or one the rules now leave out; a file that
cannot be read now keeps them and is listed.  A folder path stands for everything
under it (a folder moved in, renamed or deleted).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Iterator
from dataclasses import replace
from typing import Any

from kenning.core.confine import SourceRoot, split_rel
from kenning.core.errors import SourceError
from kenning.core.fsnames import file_of, storable_name
from kenning.core.ignorefiles import IGNORE_FILE, IgnoreUnreadable
from kenning.core.types import IndexReport, SkippedFile, Source
from kenning.ingest.extracted import known_key, remembered_failures
from kenning.ingest.presence import GONE, UNKNOWN, empty_root_keeps, keeps_documents, kept_folders, presence, under
from kenning.ingest.reading import skip_for
from kenning.ingest.textphase import TextOptions, _index_one
from kenning.ingest.walker import DEFAULT_EXCLUDED_DIRS, NOT_REGULAR, FoundFile, NotRegularFile, accepted_file
from kenning.storage.api import Store

MAX_FOLDER_FILES = 20_000  # a folder moved in bigger than this waits for the next full run


def relative_path(source: Source, abs_path: str) -> str | None:
    """abs_path relative to the source's root, '/'-separated; None when outside it."""
    rel = os.path.relpath(abs_path, source.root)
    if rel == "." or rel.startswith(".." + os.sep) or rel == ".." or os.path.isabs(rel):
        return None
    return "/".join(storable_name(p) for p in rel.split(os.sep))


def worth_a_look(rel_path: str) -> bool:
    """Cheap first filter for the event stream: tool folders and hidden files never
    matter, except a .gitignore (a changed one changes what its folder's files are)."""
    names = rel_path.split("/")
    if names[-1] == IGNORE_FILE:
        names = names[:-1]
    return not any(p.startswith(".") or p in DEFAULT_EXCLUDED_DIRS for p in names)


def index_paths(store: Store, source: Source, rel_paths: Iterable[str], options: TextOptions) -> IndexReport:
    """Bring the index up to date for these paths of `source` (files or folders)."""
    report = IndexReport(source=source.name)
    try:
        root = SourceRoot(source.root)
    except SourceError as exc:  # the root itself cannot be read: nothing is known, all is kept
        report.errors.append(str(exc))
        return report
    with root:
        problems: list[SkippedFile] = []
        try:
            git_files = _git_files(source, problems)
        except SourceError as exc:  # the repository cannot be listed now (a re-clone, a lost .git)
            report.errors.append(str(exc))
            return report
        _index_in(store, root, source, _as_folders(set(rel_paths)), git_files, kept_folders(problems), options, report)
    return report


def _as_folders(paths: set[str]) -> set[str]:
    """A changed .gitignore changes the verdict on everything in its folder."""
    out = set()
    for rel in paths:
        names = rel.split("/")
        out.add("/".join(names[:-1]) if names[-1] == IGNORE_FILE else rel)
    return out


def _index_in(
    store: Store,
    root: SourceRoot,
    source: Source,
    paths: set[str],
    git_files: set[str] | None,
    kept: tuple[str, ...],
    options: TextOptions,
    report: IndexReport,
) -> None:
    known = store.documents.known(source.id)
    skipped: list[SkippedFile] = []
    # A file whose extraction timed out is not extracted again until it changes, here too.
    options = replace(options, failures=remembered_failures(s for _, s in store.documents.skipped(source.id)))
    files, gone = _expand(root, paths, known, skipped)
    with store.atomic():
        if not _still_enabled(store, source):
            return  # removed or switched off since its changes were heard: nothing is written
        for rel in sorted(files):
            verdict = _judge(root, source, rel, git_files, kept)
            if isinstance(verdict, SkippedFile):
                skipped.append(verdict)
                continue
            if verdict is None:
                gone.update(_documents_of(rel, known))
                continue
            report.files_seen += 1
            before = len(skipped)
            _index_one(store, source, verdict, known.get(known_key(rel, verdict.kind)), options, report, skipped)
            if len(skipped) > before and not keeps_documents(skipped[-1].reason):
                # gone, grown too large or turned binary: the old text no longer describes it
                gone.update(_documents_of(rel, known))
        removed = [known[r].id for r in gone if r in known]
        kept_all = empty_root_keeps(root, [r for r in gone if r in known]) if removed else None
        if kept_all:  # many files "gone" at once from a root now empty: not believed
            report.errors.append(kept_all)
            removed = []
        if removed:
            store.documents.delete(removed)
        # What it skipped of the paths it checked is listed as a full run lists it (an
        # unreadable folder, a binary file, an extraction that timed out).
        store.documents.update_skipped(source.id, files | gone, skipped)
    report.removed = len(removed)
    report.skipped = skipped


def _still_enabled(store: Store, source: Source) -> bool:
    """Read inside the write transaction, so no removal can slip in before the writes."""
    return any(s.id == source.id and s.enabled for s in store.sources.list())


def _judge(
    root: SourceRoot, source: Source, rel: str, git_files: set[str] | None, kept: tuple[str, ...]
) -> FoundFile | SkippedFile | None:
    """The FoundFile to index, None when the file is gone or the rules leave it out,
    or a SkippedFile when it cannot be read now (its documents are kept)."""
    found = presence(root, rel)
    if found.state == GONE:
        return None
    if found.state == UNKNOWN:
        return found.skipped(rel)
    if git_files is not None and under(rel, kept):
        return SkippedFile(rel, "unreadable", "a .gitignore on its way cannot be read; its indexed documents are kept")
    try:
        return accepted_file(root, source, rel, git_files)
    except IgnoreUnreadable as exc:
        return SkippedFile(rel, "unreadable", exc.detail)
    except NotRegularFile:  # there, but no file to read: listed as the full walk lists it
        return SkippedFile(rel, "unreadable", NOT_REGULAR)
    except OSError as exc:
        reason, detail = skip_for(exc)
        return None if reason == "vanished" else SkippedFile(rel, reason, detail)


def _documents_of(rel: str, known: dict[str, Any]) -> list[str]:
    """The stored documents of a file: itself, or a mailbox's messages ("x.mbox#3")."""
    return [k for k in known if k == rel or file_of(k) == rel]


def _expand(
    root: SourceRoot, paths: set[str], known: dict[str, Any], skipped: list[SkippedFile]
) -> tuple[set[str], set[str]]:
    """(files to check, documents gone): folders become the files under them."""
    files: set[str] = set()
    gone: set[str] = set()
    for rel in paths:
        below = [k for k in known if rel == "" or k.startswith(rel + "/")]
        try:
            parts = split_rel(rel)
            info = root.lstat(parts)
        except OSError:
            found = presence(root, rel)
            if found.state == GONE:
                gone.update(k for k in known if k == rel or file_of(k) == rel or k in below)
            else:  # judged one by one: each keeps its documents with the reason
                files.add(rel) if rel else None
                files.update(file_of(k) for k in below)
            continue
        if stat.S_ISDIR(info.st_mode):
            files.update(_files_under(root, parts, rel, skipped))
            files.update(file_of(k) for k in below)  # re-checked: gone ones are removed
        else:
            files.add(rel)
    return files - gone, gone


def _files_under(root: SourceRoot, parts: list[str], rel: str, skipped: list[SkippedFile]) -> list[str]:
    out: list[str] = []
    for folder_parts, names in _walk(root, parts, skipped):
        folder = "/".join(storable_name(p) for p in folder_parts)
        out.extend(f"{folder}/{storable_name(n)}" if folder else storable_name(n) for n in names if worth_a_look(n))
        if len(out) > MAX_FOLDER_FILES:
            break
    return out


def _walk(root: SourceRoot, parts: list[str], skipped: list[SkippedFile]) -> Iterator[tuple[list[str], list[str]]]:
    """(folder, file names) below parts, opened from the root; links are not followed."""
    try:
        fd = root.open_dir(parts)
    except OSError as exc:
        skipped.append(SkippedFile("/".join(parts) or ".", *skip_for(exc)))
        return
    try:
        with os.scandir(fd) as listing:
            entries = [(e.name, e.is_dir(follow_symlinks=False)) for e in listing]
    except OSError as exc:
        skipped.append(SkippedFile("/".join(parts) or ".", "unreadable", exc.strerror or str(exc)))
        return
    finally:
        os.close(fd)
    yield parts, [n for n, is_dir in entries if not is_dir]
    for name, is_dir in entries:
        if is_dir and worth_a_look(name):
            yield from _walk(root, [*parts, name], skipped)


def _git_files(source: Source, problems: list[SkippedFile]) -> set[str] | None:
    if source.kind != "git":
        return None
    from kenning.gitinfo import list_files

    return set(list_files(source.root, exact_root=True, problems=problems))
