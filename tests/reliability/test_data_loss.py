"""What a user indexed is never thrown away because Kenning could not read something,
and one odd name, pattern or file never ends a run (issue #13, items 5-12, and their
siblings).
"""

from __future__ import annotations

import json
import os
import shutil
import threading
import time
from datetime import datetime, timezone
from pathlib import Path

import pytest

from gitutil import commit, git, make_repo
from kenning.core.fsnames import filesystem_name, storable_name
from kenning.storage import open_store
from kenning.storage.lock import indexing_lock
from kenning_testing import documents_by_path
from reliability.helpers import cli, count, deny_folder, write_files

WHEN = datetime(2025, 6, 1, tzinfo=timezone.utc)


def _docs(db: Path) -> list[str]:
    store = open_store(db)
    try:
        return sorted(documents_by_path(store))
    finally:
        store.close()


def _vectors(db: Path) -> int:
    store = open_store(db)
    try:
        return store.chunks.count() - store.vectors.count_pending()
    finally:
        store.close()


@pytest.fixture
def indexed(tmp_path):
    notes = write_files(tmp_path / "notes", {f"d{i % 2}/n{i}.md": f"# N{i}\n\nnote {i}\n" for i in range(4)})
    db = tmp_path / "home" / "k.db"
    assert cli(db, "sources", "add", str(notes))[0] == 0
    assert cli(db, "index")[0] == 0
    assert len(_docs(db)) == 4 and _vectors(db) == 4
    return db, notes


# -- item 5: a root or folder that cannot be read keeps its documents ----------------


def _deny(monkeypatch, suffix: str) -> None:
    deny_folder(monkeypatch, suffix.strip("/"))


@pytest.mark.parametrize("damage", ["missing", "renamed", "unreadable", "now-a-file", "io-error"])
def test_a_root_that_cannot_be_read_keeps_its_index(indexed, monkeypatch, damage):
    db, notes = indexed
    if damage == "missing":
        shutil.rmtree(notes)  # an unmounted drive looks like this
    elif damage == "renamed":
        notes.rename(notes.with_name("renamed"))
    elif damage == "unreadable":
        if os.geteuid() != 0:
            notes.chmod(0)
        _deny(monkeypatch, "/notes")
    elif damage == "now-a-file":
        shutil.rmtree(notes)
        notes.write_text("not a folder")
    else:
        real_scandir = os.scandir

        def failing(path="."):
            if os.fspath(path).rstrip("/").endswith("/notes"):
                raise OSError(5, "Input/output error", os.fspath(path))
            return real_scandir(path)

        monkeypatch.setattr(os, "scandir", failing)
    try:
        rc, out, err = cli(db, "index")
    finally:
        if notes.exists() and damage == "unreadable":
            notes.chmod(0o755)
    monkeypatch.undo()
    assert rc == 1, out + err
    assert "kept" in out
    assert len(_docs(db)) == 4 and _vectors(db) == 4
    count("data-loss: unreadable roots kept")


def test_an_unreadable_subfolder_keeps_its_documents_and_is_listed(indexed, monkeypatch):
    db, _ = indexed
    _deny(monkeypatch, "/d1")
    rc, out, err = cli(db, "index")
    monkeypatch.undo()
    assert "0 removed" in out, out
    assert len(_docs(db)) == 4
    rc, out, _ = cli(db, "status")
    assert "d1: unreadable" in out
    count("data-loss: unreadable folders kept")


def test_a_git_source_that_goes_missing_keeps_its_index(tmp_path):
    repo = make_repo(tmp_path)
    commit(repo, {"a.md": "alpha\n"}, WHEN)
    db = tmp_path / "home" / "k.db"
    cli(db, "sources", "add", str(repo), "--git")
    cli(db, "index")
    shutil.rmtree(repo)
    rc, out, _ = cli(db, "index")
    assert rc == 1 and _docs(db) == ["a.md"]


# -- item 6: non-UTF-8 names in git repositories -----------------------------------


def test_non_utf8_names_in_a_git_repo_are_indexed_and_the_run_goes_on(tmp_path):
    repo = make_repo(tmp_path)
    commit(repo, {"ok.md": "fine\n"}, WHEN)
    with open(os.path.join(os.fsencode(repo), b"caf\xe9.md"), "w") as f:
        f.write("latin-1 named note\n")
    with open(os.path.join(os.fsencode(repo), b"sub\xff"), "wb"):
        pass
    os.makedirs(os.path.join(os.fsencode(repo), b"dir\xfe"))
    with open(os.path.join(os.fsencode(repo), b"dir\xfe", b"n.md"), "w") as f:
        f.write("inside an odd folder\n")
    git(repo, "add", "-A")
    git(
        repo,
        "commit",
        "-q",
        "-m",
        "odd names",
        env={"GIT_AUTHOR_DATE": "@1700000000 +0000", "GIT_COMMITTER_DATE": "@1700000000 +0000"},
    )
    with open(os.path.join(os.fsencode(repo), b"untracked\xe9.md"), "w") as f:
        f.write("untracked odd name\n")
    later = write_files(tmp_path / "later", {"l.md": "later source\n"})
    db = tmp_path / "home" / "k.db"
    cli(db, "sources", "add", str(repo), "--git", "--name", "a-repo")
    cli(db, "sources", "add", str(later), "--name", "z-later")
    rc, out, err = cli(db, "index")
    assert rc == 0, out + err
    docs = _docs(db)
    assert {"caf\\xe9.md", "dir\\xfe/n.md", "untracked\\xe9.md", "ok.md", "l.md"} <= set(docs)
    store = open_store(db)
    try:
        git_paths = set(store.git.path_times(["caf\\xe9.md"]))
    finally:
        store.close()
    assert "caf\\xe9.md" in git_paths  # the git activity signal knows it too
    rc, out, _ = cli(db, "search", "--mode", "lexical", "latin")
    assert "caf\\xe9.md" in out
    count("data-loss: odd git names indexed", 3)


# -- item 7: distinct names stay distinct ------------------------------------------


def test_an_escaped_looking_name_and_a_raw_byte_name_are_two_documents(tmp_path):
    notes = tmp_path / "notes"
    notes.mkdir()
    pairs = [b"x\\xe9.md", b"x\xe9.md", b"y\\\\z.md", b"y\\z.md", b"z\\u.md", b"w\\\xe9.md"]
    for i, name in enumerate(pairs):
        with open(os.path.join(os.fsencode(notes), name), "w") as f:
            f.write(f"note number {i}\n")
    db = tmp_path / "home" / "k.db"
    cli(db, "sources", "add", str(notes))
    rc, out, _ = cli(db, "index", "--no-embed")
    assert f"{len(pairs)} added" in out
    docs = _docs(db)
    assert len(docs) == len(set(docs)) == len(pairs)
    for stored in docs:  # each stored name opens its own file
        assert os.path.exists(os.path.join(notes, filesystem_name(stored)))


def test_storable_names_are_unique_and_reversible():
    from hypothesis import given
    from hypothesis import strategies as st

    names = st.binary(min_size=1, max_size=12).map(lambda b: os.fsdecode(b.replace(b"/", b"_").replace(b"\0", b"_")))

    @given(names, names)
    def check(a, b):
        assert filesystem_name(storable_name(a)) == a
        if a != b:
            assert storable_name(a) != storable_name(b)

    check()


# -- item 8: a nested repository never becomes its parent --------------------------


def test_a_repository_whose_git_folder_is_deleted_is_broken_not_its_parent(tmp_path):
    outer = make_repo(tmp_path, "outer")
    commit(outer, {"top.md": "outer file\n", "inner/x.md": "placeholder\n"}, WHEN)
    inner = outer / "inner"
    shutil.rmtree(inner)
    inner = make_repo(outer, "inner")
    commit(inner, {"own.md": "inner note\n"}, WHEN)
    db = tmp_path / "home" / "k.db"
    cli(db, "sources", "add", str(inner), "--git", "--name", "inner")
    cli(db, "index")
    shutil.rmtree(inner / ".git")
    rc, out, _ = cli(db, "index")
    assert rc == 1 and "no longer the top of a git work tree" in out
    assert _docs(db) == ["own.md"]
    count("data-loss: broken repositories kept")


def test_a_core_worktree_setting_cannot_move_the_work_tree(tmp_path):
    repo = make_repo(tmp_path)
    commit(repo, {"own.md": "own\n"}, WHEN)
    elsewhere = write_files(tmp_path / "elsewhere", {"secret.md": "elsewhere\n"})
    db = tmp_path / "home" / "k.db"
    cli(db, "sources", "add", str(repo), "--git")
    cli(db, "index")
    git(repo, "config", "core.worktree", str(elsewhere))
    rc, out, _ = cli(db, "index")
    assert rc == 1 and _docs(db) == ["own.md"]


# -- items 9 and 10: hostile and invalid patterns ----------------------------------


@pytest.mark.parametrize(
    "pattern",
    ["x" * 2000, "[z-a]", "!", "\\", "[unterminated", "[[:nonsense:]]"],
)
def test_hostile_patterns_are_refused_on_input(tmp_path, pattern):
    notes = write_files(tmp_path / "notes", {"n.md": "n\n"})
    db = tmp_path / "home" / "k.db"
    assert cli(db, "sources", "add", str(notes), "--name", "n")[0] == 0
    for option in ("--include", "--exclude"):
        rc, out, err = cli(db, "sources", "globs", "n", option, pattern)
        assert rc == 2 and "not a glob Kenning can use" in err, err
        rc, _, err = cli(db, "sources", "add", str(tmp_path), option, pattern)
        assert rc == 2 and "Traceback" not in err
    from kenning.ingest.globs import pattern_problem

    assert pattern_problem(pattern)
    count("data-loss: hostile patterns refused")


def test_a_pathological_gitignore_is_obeyed_in_time_and_a_bad_line_reported(tmp_path):
    name = "a" * 200 + ".md"
    notes = write_files(
        tmp_path / "notes",
        {".gitignore": "*a*a*a*a*a*a*a*b\n*.tmp\n[z-a]\n", name: "long\n", "x.tmp": "t\n"},
    )
    db = tmp_path / "home" / "k.db"
    cli(db, "sources", "add", str(notes))
    started = time.monotonic()
    rc, out, _ = cli(db, "index", "--no-embed")
    assert time.monotonic() - started < 10
    assert rc == 0 and _docs(db) == [name]  # *.tmp is obeyed; the long name is not a match
    rc, out, _ = cli(db, "status")
    assert ".gitignore: bad-pattern" in out and "[z-a]" in out


def test_a_git_repository_with_a_pathological_gitignore_indexes_in_time(tmp_path):
    repo = make_repo(tmp_path)
    # In this order: git itself would take minutes to add the long name after the pattern.
    commit(repo, {"a" * 200 + ".md": "long\n"}, WHEN)
    commit(repo, {".gitignore": "*a*a*a*a*a*a*a*a*b\n"}, WHEN)
    (repo / ("a" * 201 + ".md")).write_text("untracked long\n")
    db = tmp_path / "home" / "k.db"
    cli(db, "sources", "add", str(repo), "--git")
    started = time.monotonic()
    assert cli(db, "index", "--no-embed")[0] == 0
    assert time.monotonic() - started < 10


def test_bad_globs_kept_by_an_older_store_are_reported_and_ignored(indexed):
    db, _ = indexed
    store = open_store(db)
    with store.atomic():
        for source in store.sources.list():  # storage keeps what it is given, unchecked
            store.sources.set_globs(source.id, include=("!",), exclude=("[z-a]", "d0/**"))
    store.close()
    rc, out, err = cli(db, "index", "--no-embed")
    assert rc == 0 and "Traceback" not in err, err
    assert _docs(db) == ["d1/n1.md", "d1/n3.md"]  # the good glob is obeyed
    rc, out, _ = cli(db, "status")
    assert "bad-pattern" in out and "[z-a]" in out


# -- item 11: the sources backup ----------------------------------------------------


@pytest.mark.parametrize(
    "content",
    [
        "null",
        "5",
        '["a"]',
        '"text"',
        "{}",
        '[{"kind": "folder"}]',
        '[{"kind": "x", "root": "/", "name": "n"}]',
        '[{"kind": "folder", "root": "/", "name": "n", "include": "*.md"}]',
        "not json {",
        "",
    ],
)
def test_a_bad_sources_backup_never_breaks_commands_and_rebuild_moves_nothing(indexed, content):
    db, _ = indexed
    backup = Path(f"{db}.sources.json")
    backup.write_text(content, encoding="utf-8")
    for argv in (["status"], ["sources", "list"], ["search", "--mode", "lexical", "note"]):
        rc, out, err = cli(db, *argv)
        assert rc == 0, err
    # The store was fine: its table rewrote the backup.
    assert [e["name"] for e in json.loads(backup.read_text(encoding="utf-8"))] == ["notes"]
    # Now the store is damaged and the backup too: rebuild must refuse before moving anything.
    with open(db, "r+b") as f:
        f.write(b"\0" * 100)
    backup.write_text(content, encoding="utf-8")
    before = sorted(p.name for p in db.parent.iterdir())
    for _ in range(2):  # a retry moves nothing either
        rc, out, err = cli(db, "rebuild")
        assert rc == 2 and "not valid" in err and "Nothing was moved" in err, err
    assert sorted(p.name for p in db.parent.iterdir()) == before
    assert backup.read_text(encoding="utf-8") == content
    count("data-loss: bad backups refused")


def test_rebuild_keeps_enabled_flags_and_counts_what_it_re_added(tmp_path):
    a = write_files(tmp_path / "a", {"a.md": "a\n"})
    b = write_files(tmp_path / "b", {"b.md": "b\n"})
    db = tmp_path / "home" / "k.db"
    cli(db, "sources", "add", str(a), "--name", "a", "--exclude", "*.tmp")
    cli(db, "sources", "add", str(b), "--name", "b")
    cli(db, "sources", "add", str(tmp_path / "a"), "--name", "dup")  # refused: same root
    cli(db, "sources", "disable", "b")
    shutil.rmtree(b)  # b can no longer be re-added
    rc, out, err = cli(db, "rebuild")
    assert "Re-added 1 source." in out and "could not re-add b" in out
    store = open_store(db)
    try:
        rows = [(s.name, s.enabled, s.exclude) for s in store.sources.list()]
    finally:
        store.close()
    assert rows == [("a", True, ("*.tmp",))]
    b.mkdir()
    (b / "b.md").write_text("b\n")
    aside = next(p for p in db.parent.iterdir() if ".damaged-" in p.name and p.name.endswith(".sources.json"))
    assert json.loads(aside.read_text())[1]["enabled"] is False


def test_rebuild_restores_a_disabled_source_disabled(tmp_path):
    a = write_files(tmp_path / "a", {"a.md": "a\n"})
    db = tmp_path / "home" / "k.db"
    cli(db, "sources", "add", str(a), "--name", "a")
    cli(db, "sources", "disable", "a")
    rc, out, _ = cli(db, "rebuild")
    assert rc == 0 and "Re-added 1 source." in out
    rc, out, _ = cli(db, "sources", "list")
    assert "a (disabled)" in out


# -- item 12: rebuild while indexing ------------------------------------------------


def test_rebuild_is_refused_while_an_indexer_holds_the_store(indexed):
    db, _ = indexed
    held, release = threading.Event(), threading.Event()

    def indexer():
        with indexing_lock(db):
            held.set()
            release.wait(30)

    t = threading.Thread(target=indexer)
    t.start()
    held.wait(10)
    try:
        rc, out, err = cli(db, "rebuild")
    finally:
        release.set()
        t.join()
    assert rc == 2 and "indexer" in err
    assert not [p for p in db.parent.iterdir() if ".damaged-" in p.name]
    assert len(_docs(db)) == 4
    count("data-loss: rebuilds refused while indexing")
