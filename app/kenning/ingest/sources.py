"""Adding and removing sources, with the checks a user needs to hear about."""

from __future__ import annotations

import os
from pathlib import Path

from kenning import TYPE_CHECKING
from kenning.core.errors import SourceError
from kenning.core.fsnames import not_text, shown, storable_name
from kenning.core.privacy import PRIVATE_OVERRIDE, private_folder_problem
from kenning.core.types import Source
from kenning.storage.api import Store
from kenning.storage.paths import kenning_home

if TYPE_CHECKING:
    from kenning.core.types import SourceKind


def add_source(
    store: Store,
    path: str | os.PathLike[str],
    *,
    git: bool = False,
    name: str | None = None,
    include: tuple[str, ...] = (),
    exclude: tuple[str, ...] = (),
    allow_private: bool = False,
) -> Source:
    """Add a folder (or the repository holding it, with git).  Credential and system
    folders are refused (core.privacy) unless allow_private, which only the command
    line offers, behind an explicit flag."""
    if name is not None and not_text(name):
        raise SourceError(f"The source name {storable_name(name)} is not valid UTF-8 text: choose another name.")
    root = source_root(path, git=git, allow_private=allow_private)
    kind: SourceKind = "git" if git else "folder"
    return store.sources.add(
        kind=kind,
        root=str(root),
        name=name or _default_name(store, root),
        include=include,
        exclude=exclude,
    )


def source_root(path: str | os.PathLike[str], *, git: bool = False, allow_private: bool = False) -> Path:
    """The folder a source at path would have: resolved; for a repository, its work tree's
    top.  SourceError for a folder that must never be a source (unless allow_private)."""
    root = Path(path).expanduser()
    if not root.exists():
        raise SourceError(f"{root} does not exist.")
    if not root.is_dir():
        raise SourceError(f"{root} is not a folder.")
    root = root.resolve()  # a path that is not UTF-8 is fine: the store keeps it as a name (storage.api)
    _refuse_private(root, allow_private)  # before git runs in it
    if git:
        from kenning.gitinfo import inspect_repo

        root = Path(inspect_repo(str(root)).root).resolve()
        _refuse_private(root, allow_private)  # the whole work tree is the source
    return root


def _refuse_private(root: Path, allow_private: bool) -> None:
    problem = private_folder_problem(root, kenning_home())
    if problem and not allow_private:
        raise SourceError(
            f"{root} is not a folder Kenning indexes: {problem}. Add a folder of notes or a repository instead "
            f"(on the command line, `kenning sources add {PRIVATE_OVERRIDE}` overrides this)."
        )


def _default_name(store: Store, root: Path) -> str:
    """The folder's name, made unique with a number if needed."""
    taken = {s.name for s in store.sources.list()}
    base = shown(root.name) or "root"  # a name is text: a byte that is not UTF-8 reads \xNN
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
