"""Indexing a set of changed paths of one source, without walking the rest.

The file watcher (ingest.watch) hears about single paths; re-walking a 100k-file
tree for each saved note would take seconds.  Each path is judged by the same rules
as the walk (walker.accepted_file) and read, chunked and written like any file of a
full run (textphase).  A path that no longer exists, or that the rules now leave
out, loses its document; a folder path stands for everything under it (a folder
moved in, renamed or deleted).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Any

from kenning.core.fsnames import file_of, storable_name
from kenning.core.types import IndexReport, SkippedFile, Source
from kenning.ingest.extracted import known_key
from kenning.ingest.textphase import TextOptions, _index_one
from kenning.ingest.walker import DEFAULT_EXCLUDED_DIRS, accepted_file
from kenning.storage.api import Store

MAX_FOLDER_FILES = 20_000  # a folder moved in bigger than this waits for the next full run


def relative_path(source: Source, abs_path: str) -> str | None:
    """abs_path relative to the source's root, '/'-separated; None when outside it."""
    rel = os.path.relpath(abs_path, source.root)
    if rel == "." or rel.startswith(".." + os.sep) or rel == ".." or os.path.isabs(rel):
        return None
    return "/".join(storable_name(p) for p in rel.split(os.sep))


def worth_a_look(rel_path: str) -> bool:
    """Cheap first filter for the event stream: tool folders and hidden files never matter."""
    return not any(p.startswith(".") or p in DEFAULT_EXCLUDED_DIRS for p in rel_path.split("/"))


def index_paths(store: Store, source: Source, rel_paths: Iterable[str], options: TextOptions) -> IndexReport:
    """Bring the index up to date for these paths of `source` (files or folders)."""
    report = IndexReport(source=source.name)
    known = store.documents.known(source.id)
    git_files = _git_files(source)
    files, gone = _expand(source, set(rel_paths), known)
    skipped: list[SkippedFile] = []
    with store.atomic():
        for rel in sorted(files):
            found = accepted_file(source, rel, git_files)
            if found is None:
                gone.update(_documents_of(rel, known))
                continue
            report.files_seen += 1
            before = len(skipped)
            _index_one(store, source, found, known.get(known_key(rel, found.kind)), options, report, skipped)
            if len(skipped) > before and skipped[-1].reason != "unreadable":
                # grown too large or turned binary: the old text no longer describes it
                gone.update(_documents_of(rel, known))
        if gone:
            store.documents.delete([known[r].id for r in gone if r in known])
    report.removed = len([r for r in gone if r in known])
    report.skipped = skipped
    return report


def _documents_of(rel: str, known: dict[str, Any]) -> list[str]:
    """The stored documents of a file: itself, or a mailbox's messages ("x.mbox#3")."""
    return [k for k in known if k == rel or file_of(k) == rel]


def _expand(source: Source, paths: set[str], known: dict[str, Any]) -> tuple[set[str], set[str]]:
    """(files to check, documents gone): folders become the files under them."""
    files: set[str] = set()
    gone: set[str] = set()
    for rel in paths:
        abs_path = os.path.join(source.root, *rel.split("/"))
        if os.path.isdir(abs_path) and not os.path.islink(abs_path):
            files.update(_files_under(source, rel, abs_path))
            prefix = rel + "/"
            files.update(file_of(k) for k in known if k.startswith(prefix))  # re-checked: gone ones are removed
        elif os.path.lexists(abs_path):
            files.add(rel)
        else:
            gone.update(k for k in known if k == rel or file_of(k) == rel or k.startswith(rel + "/"))
    return files - gone, gone


def _files_under(source: Source, rel_dir: str, abs_dir: str) -> list[str]:
    out: list[str] = []
    for folder, dirs, names in os.walk(abs_dir):
        dirs[:] = [d for d in dirs if worth_a_look(d)]
        rel_folder = relative_path(source, folder)
        if rel_folder is None:
            continue
        out.extend(f"{rel_folder}/{storable_name(n)}" for n in names if worth_a_look(n))
        if len(out) > MAX_FOLDER_FILES:
            break
    return out


def _git_files(source: Source) -> set[str] | None:
    if source.kind != "git":
        return None
    from kenning.gitinfo import list_files

    return set(list_files(source.root))
