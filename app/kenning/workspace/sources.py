"""Sources as a front end sees them: add, link, remove, switch on and off, globs.

Validation happens here, once, for the CLI and the app: a folder must exist, a
repository must be one git can read, globs must parse.  The functions take a store
so that a worker thread can run them on its own connection.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kenning.core.errors import SourceError
from kenning.core.types import Source
from kenning.ingest import sources as ingest_sources
from kenning.storage import read_sources_backup
from kenning.storage.api import SourceStats, Store

if TYPE_CHECKING:  # git and pathspec load where used: `kenning status` and search never need them
    from kenning.gitinfo import RepoInfo


def __getattr__(name: str) -> Any:
    if name == "RepoInfo":
        from kenning.gitinfo import RepoInfo

        return RepoInfo
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


Globs = tuple[str, ...] | list[str] | str  # text is split on commas and spaces

__all__ = [
    "RepoInfo",
    "SourceStats",
    "Globs",
    "SourceOverview",
    "add_folder",
    "clean_globs",
    "describe_repo",
    "link_repo",
    "overview",
    "remove",
    "resolve",
    "saved_sources",
    "set_enabled",
    "set_globs",
]


@dataclass(frozen=True)
class SourceOverview:
    """The sources and their counts, read together (one pass over the tables)."""

    sources: list[Source]
    stats: dict[int, SourceStats]

    @property
    def documents(self) -> int:
        return sum(s.documents for s in self.stats.values())

    @property
    def chunks(self) -> int:
        return sum(s.chunks for s in self.stats.values())

    @property
    def pending_vectors(self) -> int:
        return sum(s.pending_vectors for s in self.stats.values())


def overview(store: Store) -> SourceOverview:
    return SourceOverview(store.sources.list(), store.stats.per_source())


def resolve(store: Store, ref: str | int | Source) -> Source:
    """The source a name, an id or a (possibly stale) Source refers to now."""
    if isinstance(ref, Source):
        ref = ref.id
    if isinstance(ref, int):
        for source in store.sources.list():
            if source.id == ref:
                return source
        raise SourceError("That source was removed meanwhile.")
    return store.sources.get(ref)


def clean_globs(patterns: Globs) -> tuple[str, ...]:
    """Globs as stored: split on commas and spaces when given as text, checked to parse."""
    if isinstance(patterns, str):
        patterns = patterns.replace(",", " ").split()
    cleaned = tuple(p.strip() for p in patterns if p and p.strip())
    from kenning.ingest.globs import pattern_problem  # pathspec loads only when globs are set

    for pattern in cleaned:
        problem = pattern_problem(pattern)
        if problem:
            raise SourceError(f"{pattern!r} is not a glob Kenning can use: {problem}.")
    return cleaned


def add_folder(
    store: Store,
    path: str | os.PathLike[str],
    *,
    name: str | None = None,
    include: Globs = (),
    exclude: Globs = (),
) -> Source:
    return _add(store, path, git=False, name=name, include=include, exclude=exclude)


def link_repo(
    store: Store,
    path: str | os.PathLike[str],
    *,
    name: str | None = None,
    include: Globs = (),
    exclude: Globs = (),
) -> Source:
    """Link the git repository holding path (its whole work tree: see RepoInfo)."""
    return _add(store, path, git=True, name=name, include=include, exclude=exclude)


def _add(
    store: Store, path: str | os.PathLike[str], *, git: bool, name: str | None, include: Globs, exclude: Globs
) -> Source:
    """Names and globs are checked here, for every front end, before anything is stored."""
    return ingest_sources.add_source(
        store, path, git=git, name=_clean_name(name), include=clean_globs(include), exclude=clean_globs(exclude)
    )


def describe_repo(path: str | os.PathLike[str]) -> RepoInfo:
    """What git says about the repository at path (SourceError when it is none). Slow-ish:
    runs `git status`; the app calls it on a worker."""
    from kenning.gitinfo import inspect_repo

    return inspect_repo(path)


def remove(store: Store, ref: str | int | Source) -> Source:
    """Remove a source and everything indexed from it (a cascading delete: call it off the UI thread)."""
    source = resolve(store, ref)
    store.sources.remove(source.id)
    return source


def set_enabled(store: Store, ref: str | int | Source, enabled: bool) -> Source:
    source = resolve(store, ref)
    store.sources.set_enabled(source.id, enabled)
    return resolve(store, source.id)


def set_globs(store: Store, ref: str | int | Source, include: Globs, exclude: Globs) -> Source:
    source = resolve(store, ref)
    store.sources.set_globs(source.id, clean_globs(include), clean_globs(exclude))
    return resolve(store, source.id)


def saved_sources(store_path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """The sources listed in the store's backup file (what `kenning rebuild` re-adds)."""
    from pathlib import Path

    return read_sources_backup(Path(store_path))


def _clean_name(name: str | None) -> str | None:
    if name is None:
        return None
    name = name.strip()
    if not name or '"' in name:
        # Filters quote names with spaces (source:"my notes"): a quote could not be written.
        raise SourceError(f"{name!r} cannot be a source name: give a name without double quotes.")
    return name
