"""Sources as a front end sees them: add, link, remove, switch on and off, globs.

Validation happens here, once, for the CLI and the app: a folder must exist, a
repository must be one git can read, globs must parse.  The functions take a store
so that a worker thread can run them on its own connection.
"""

from __future__ import annotations

import os
import shlex
from pathlib import Path

from kenning import TYPE_CHECKING
from kenning.core.errors import SourceError
from kenning.core.fsnames import not_text, storable_name
from kenning.core.records import Record
from kenning.core.types import Source
from kenning.ingest import sources as ingest_sources
from kenning.storage import read_sources_backup
from kenning.storage.api import SourceStats, Store

if TYPE_CHECKING:  # git and the glob matcher load where used: `kenning status` and search never need them
    from typing import Any

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
    "SourceOverlap",
    "SourceOverlapError",
    "source_overlap",
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


class SourceOverview(Record, frozen=True):
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
    if not_text(ref):  # a name is text: a folder named b"caf\xe9" gave the source its name "caf\\xe9"
        named = next((s for s in store.sources.list() if s.name == storable_name(ref)), None)
        if named is None:
            raise SourceError(f"No source is named {storable_name(ref)}: a source name is always valid UTF-8 text.")
        return named
    return store.sources.get(ref)


def clean_globs(patterns: Globs) -> tuple[str, ...]:
    """Globs as stored: split on commas and spaces when given as text, checked to parse."""
    if isinstance(patterns, str):
        patterns = patterns.replace(",", " ").split()
    cleaned = tuple(p.strip() for p in patterns if p and p.strip())
    from kenning.ingest.globs import pattern_problem  # the matcher loads only when globs are set

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
    allow_private: bool = False,
) -> Source:
    return _add(store, path, git=False, name=name, include=include, exclude=exclude, allow_private=allow_private)


def link_repo(
    store: Store,
    path: str | os.PathLike[str],
    *,
    name: str | None = None,
    include: Globs = (),
    exclude: Globs = (),
    allow_private: bool = False,
) -> Source:
    """Link the git repository holding path (its whole work tree: see RepoInfo)."""
    return _add(store, path, git=True, name=name, include=include, exclude=exclude, allow_private=allow_private)


def _add(
    store: Store,
    path: str | os.PathLike[str],
    *,
    git: bool,
    name: str | None,
    include: Globs,
    exclude: Globs,
    allow_private: bool,
) -> Source:
    """Names, globs, private folders and overlaps are checked here, for every front end,
    before anything is stored (only the command line passes allow_private, on the user's
    flag)."""
    include, exclude = clean_globs(include), clean_globs(exclude)
    found = source_overlap(store, path, git=git, exclude=exclude, allow_private=allow_private)
    if found is not None:
        raise SourceOverlapError(found)
    return ingest_sources.add_source(
        store, path, git=git, name=_clean_name(name), include=include, exclude=exclude, allow_private=allow_private
    )


# -- overlapping sources (#25 item 7) -------------------------------------------------
# A folder inside a source, or one holding a source, would index the same files twice:
# every note listed twice, tag counts doubled, a note's first related note itself.  It
# is refused unless the outer one leaves the inner folder out (its globs, a default
# excluded folder such as node_modules, or for a repository: nothing tracked there).


class SourceOverlap(Record, frozen=True):
    """A new source's folder overlapping a source already added."""

    existing: Source
    relation: str  # "same" | "inside": the new folder is in `existing` | "contains": it holds `existing`
    rel: str  # the inner folder relative to the outer one, POSIX ("projects/deep")
    root: str  # the new source's folder, resolved
    git: bool  # the new source is a repository


class SourceOverlapError(SourceError):
    """The folder's files are a source's already (or it holds a source): the words say what to do."""

    def __init__(self, overlap: SourceOverlap) -> None:
        super().__init__(overlap_message(overlap))
        self.overlap = overlap

    @property
    def existing(self) -> Source:
        return self.overlap.existing

    @property
    def relation(self) -> str:
        return self.overlap.relation


def source_overlap(
    store: Store, path: str | os.PathLike[str], *, git: bool = False, exclude: Globs = (), allow_private: bool = False
) -> SourceOverlap | None:
    """The source whose files a new source at path would index again, if any (SourceError
    for a folder that can never be one: core.privacy)."""
    root = ingest_sources.source_root(path, git=git, allow_private=allow_private)
    new = Source(0, "git" if git else "folder", str(root), "", exclude=clean_globs(exclude))
    for existing in store.sources.list():
        outer = Path(existing.root)
        if outer == root:
            return SourceOverlap(existing, "same", "", str(root), git)
        if outer in root.parents:
            rel = root.relative_to(outer).as_posix()
            if _indexes(existing, rel):
                return SourceOverlap(existing, "inside", rel, str(root), git)
        elif root in outer.parents:
            rel = outer.relative_to(root).as_posix()
            if _indexes(new, rel):
                return SourceOverlap(existing, "contains", rel, str(root), git)
    return None


def _indexes(source: Source, rel: str) -> bool:
    """Whether source indexes files under its folder rel (as the walker decides)."""
    from kenning.ingest.walker import SourceFilter  # the glob matcher: only when adding

    if any(SourceFilter.excluded_dir_name(part) for part in rel.split("/")):
        return False
    excluded = SourceFilter(source).exclude
    names = rel.split("/")
    if excluded is not None and (excluded.matches_file(names, is_dir=True) or excluded.matches_file([*names, "x"])):
        return False
    if source.kind == "git":
        from kenning.gitinfo import list_files

        return any(p.startswith(f"{rel}/") for p in list_files(source.root))
    return True


def overlap_message(o: SourceOverlap) -> str:
    name, rel = o.existing.name, o.rel
    if o.relation == "same":
        return f"{o.root} is already the source “{name}”."
    if o.relation == "inside":
        text = (
            f"{o.root} is inside the source “{name}” ({o.existing.root}): its files are indexed already, "
            f"as part of it. To search only them, add `source:{name} path:{rel}/` to a query."
        )
        if o.git and o.existing.kind == "folder":
            flags = [f"--include {shlex.quote(g)}" for g in o.existing.include]
            flags += [f"--exclude {shlex.quote(g)}" for g in (*o.existing.exclude, f"{rel}/")]
            text += (
                f" To link it as a repository of its own, leave it out of “{name}” first: "
                f"`kenning sources globs {shlex.quote(name)} {' '.join(flags)}`."
            )
        return text
    return (
        f"{o.root} holds the source “{name}” ({o.existing.root}): adding it would index those files twice. "
        f"Add it without them (`--exclude {shlex.quote(rel + '/')}`), or remove “{name}” first."
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
