"""Every file read resolves, all components, inside its source's root (issue #13, item 1
and its siblings): a symlinked parent folder in a git repository or a folder source,
deeper links, and a source root that itself comes to lead elsewhere through a link.
"""

from __future__ import annotations

import os
from datetime import datetime, timezone
from pathlib import Path

from gitutil import commit, make_repo
from kenning.ingest.indexer import Indexer
from kenning.ingest.sources import add_source
from kenning.storage import open_store
from kenning_testing import all_chunks
from reliability.helpers import cli, count, write_files

WHEN = datetime(2025, 6, 1, tzinfo=timezone.utc)
SECRET = "topsecretpassword"


def _outside(tmp_path: Path) -> Path:
    return write_files(tmp_path / "outside", {"passwd.md": f"# passwd\n\n{SECRET}\n", "deep/c.md": f"{SECRET} deep\n"})


def _texts(db: Path) -> str:
    store = open_store(db)
    try:
        return " ".join(c.text for c in all_chunks(store))
    finally:
        store.close()


def _swap_for_link(path: Path, target: Path) -> None:
    for child in sorted(path.rglob("*"), reverse=True):
        child.unlink() if not child.is_dir() else child.rmdir()
    path.rmdir()
    path.symlink_to(target, target_is_directory=True)


def test_git_repo_with_a_symlinked_parent_folder_reads_nothing_outside(tmp_path):
    outside = _outside(tmp_path)
    repo = make_repo(tmp_path)
    commit(repo, {"sub/passwd.md": "placeholder\n", "a/b/c.md": "placeholder\n", "ok.md": "fine\n"}, WHEN)
    _swap_for_link(repo / "sub", outside)
    _swap_for_link(repo / "a" / "b", outside / "deep")  # a deeper component
    db = tmp_path / "home" / "k.db"
    assert cli(db, "sources", "add", str(repo), "--git")[0] == 0
    rc, out, err = cli(db, "index", "--no-embed")
    assert rc == 0, err
    assert SECRET not in _texts(db)
    rc, out, _ = cli(db, "search", "--mode", "lexical", SECRET)
    assert "passwd" not in out and "No results" in out
    rc, out, _ = cli(db, "status")
    assert "sub/passwd.md: outside-root" in out and "a/b/c.md: outside-root" in out
    count("security: symlink escapes refused", 2)


def test_git_symlink_inside_the_repository_is_still_followed(tmp_path):
    repo = make_repo(tmp_path)
    commit(repo, {"real/n.md": "inner linked note\n"}, WHEN)
    (repo / "alias").symlink_to(repo / "real", target_is_directory=True)
    commit(repo, {}, WHEN)
    db = tmp_path / "home" / "k.db"
    cli(db, "sources", "add", str(repo), "--git")
    rc, out, err = cli(db, "index", "--no-embed")
    assert rc == 0 and "1 added" in out, out + err


def test_folder_source_with_a_symlinked_parent_reads_nothing_outside(tmp_path):
    outside = _outside(tmp_path)
    notes = write_files(tmp_path / "notes", {"a/keep.md": "kept\n", "sub/x.md": "x\n"})
    store = open_store(tmp_path / "k.db")
    add_source(store, notes)
    _swap_for_link(notes / "sub", outside)
    _swap_for_link(notes / "a", outside / "deep")
    Indexer(store, None).run(embed=False)
    texts = " ".join(c.text for c in all_chunks(store))
    assert SECRET not in texts
    store.close()


def test_a_source_root_that_becomes_a_link_elsewhere_is_not_followed(tmp_path):
    outside = _outside(tmp_path)
    notes = write_files(tmp_path / "notes", {"n.md": "my own note\n"})
    db = tmp_path / "home" / "k.db"
    cli(db, "sources", "add", str(notes))
    assert cli(db, "index", "--no-embed")[0] == 0
    _swap_for_link(notes, outside)
    rc, out, err = cli(db, "index", "--no-embed")
    assert rc == 1 and "symbolic link" in out
    assert SECRET not in _texts(db)
    assert "my own note" in _texts(db)  # kept, not wiped
    count("security: symlink escapes refused")


def test_a_source_whose_parent_folder_becomes_a_link_is_not_followed(tmp_path):
    outside = write_files(tmp_path / "elsewhere", {"notes/n.md": f"{SECRET}\n"})
    notes = write_files(tmp_path / "parent" / "notes", {"n.md": "my own note\n"})
    db = tmp_path / "home" / "k.db"
    cli(db, "sources", "add", str(notes))
    cli(db, "index", "--no-embed")
    _swap_for_link(tmp_path / "parent", outside)
    rc, out, _ = cli(db, "index", "--no-embed")
    assert rc == 1
    assert SECRET not in _texts(db) and "my own note" in _texts(db)


def test_git_source_root_that_becomes_a_link_is_not_followed(tmp_path):
    repo = make_repo(tmp_path)
    commit(repo, {"n.md": "own repo note\n"}, WHEN)
    other = make_repo(tmp_path, "other")
    commit(other, {"n.md": f"{SECRET}\n"}, WHEN)
    db = tmp_path / "home" / "k.db"
    cli(db, "sources", "add", str(repo), "--git")
    cli(db, "index", "--no-embed")
    os.rename(repo, tmp_path / "moved")
    repo.symlink_to(other, target_is_directory=True)
    rc, out, _ = cli(db, "index", "--no-embed")
    assert rc == 1
    assert SECRET not in _texts(db) and "own repo note" in _texts(db)
