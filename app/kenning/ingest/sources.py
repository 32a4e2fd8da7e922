"""Adding and removing sources, with the checks a user needs to hear about."""

from __future__ import annotations

import os
from pathlib import Path

from kenning.core.errors import SourceError
from kenning.core.types import Source, SourceKind
from kenning.storage.api import Store


def add_source(
    store: Store,
    path: str | os.PathLike[str],
    *,
    git: bool = False,
    name: str | None = None,
    include: tuple[str, ...] = (),
    exclude: tuple[str, ...] = (),
) -> Source:
    root = source_root(path, git=git)
    kind: SourceKind = "git" if git else "folder"
    return store.sources.add(
        kind=kind,
        root=str(root),
        name=name or _default_name(store, root),
        include=include,
        exclude=exclude,
    )


def source_root(path: str | os.PathLike[str], *, git: bool = False) -> Path:
    """The folder a source at path would have: resolved; for a repository, its work tree's top."""
    root = Path(path).expanduser()
    if not root.exists():
        raise SourceError(f"{root} does not exist.")
    if not root.is_dir():
        raise SourceError(f"{root} is not a folder.")
    root = root.resolve()
    if git:
        from kenning.gitinfo import inspect_repo

        root = Path(inspect_repo(str(root)).root).resolve()
    return root


def _default_name(store: Store, root: Path) -> str:
    """The folder's name, made unique with a number if needed."""
    taken = {s.name for s in store.sources.list()}
    base = root.name or "root"
    name, n = base, 2
    while name in taken:
        name, n = f"{base}-{n}", n + 1
    return name


def find_source(store: Store, name: str) -> Source | None:
    return next((s for s in store.sources.list() if s.name == name), None)


def remove_source(store: Store, name: str) -> Source:
    source = store.sources.get(name)
    store.sources.remove(source.id)
    return source
