"""The watcher (`kenning index --watch`, the app's live index) keeps what a full run
keeps (issue #24, items 1-7, and their siblings).

One rule for "cannot read", in every path (ingest.presence): only a file really gone
(its folder read, the entry absent) loses its documents.  Each case is checked through
the watcher and, where the full run could differ, through `kenning index` too.

The watcher is driven as the app drives it (Watcher.flush after changes were heard);
an observer that hears nothing stands in for inotify, so each test says exactly which
paths changed.
"""

from __future__ import annotations

import errno
import os
import shutil
import threading
import time
from datetime import datetime, timezone
from pathlib import Path

import pytest

from gitutil import commit, make_repo
from kenning.ingest.watch import Watcher
from kenning.storage import open_store
from reliability.helpers import cli, count, deny_folder, stored_paths, stored_text, write_files

WHEN = datetime(2025, 6, 1, tzinfo=timezone.utc)


class DeafObserver:
    """An observer that is scheduled and started but hears nothing (tests add the paths)."""

    daemon = True

    def schedule(self, *args, **kwargs):
        pass

    def start(self):
        pass

    def stop(self):
        pass

    def is_alive(self):
        return False

    def join(self, timeout=None):
        pass


def _docs(db: Path) -> list[str]:
    return stored_paths(db)


def _texts(db: Path) -> str:
    return stored_text(db)


@pytest.fixture
def notes_db(tmp_path):
    notes = write_files(tmp_path / "notes", {f"d{i % 2}/n{i}.md": f"# N{i}\n\nnote {i}\n" for i in range(4)})
    db = tmp_path / "home" / "k.db"
    assert cli(db, "sources", "add", str(notes), "--name", "notes")[0] == 0
    assert cli(db, "index", "--no-embed")[0] == 0
    assert len(_docs(db)) == 4
    return db, notes


class Watch:
    """A watcher on its own connection, as the app's watch process has."""

    def __init__(self, db: Path) -> None:
        self.store = open_store(db)
        self.notices: list[str] = []
        self.updates = []
        self.watcher = Watcher(
            self.store,
            None,
            observer_factory=DeafObserver,
            on_notice=self.notices.append,
            on_update=self.updates.append,
        )
        self.watcher.sync_sources()

    def changed(self, source_name: str, *rels: str):
        sid = next(sid for sid, (s, _) in self.watcher._observers.items() if s.name == source_name)
        for rel in rels:
            self.watcher.pending.add(sid, rel)
        return self.watcher.flush()

    def close(self) -> None:
        self.watcher.close()
        self.store.close()


@pytest.fixture
def watch():
    made = []

    def start(db: Path) -> Watch:
        made.append(Watch(db))
        return made[-1]

    yield start
    for w in made:
        w.close()


# -- item 1: the source folder replaced by a symlink --------------------------------


def test_a_root_replaced_by_a_symlink_keeps_every_document_in_the_watcher(notes_db, watch):
    db, notes = notes_db
    w = watch(db)
    real = notes.with_name("notes.real")
    notes.rename(real)
    notes.symlink_to(real, target_is_directory=True)
    (real / "d0" / "n0.md").write_text("# N0\n\nedited after the swap\n")
    update = w.changed("notes", "d0/n0.md", "d1/n1.md")
    assert update is not None and update.reports[0].removed == 0
    assert "symbolic link" in " ".join(update.reports[0].errors)
    assert len(_docs(db)) == 4 and "edited after the swap" not in _texts(db)
    count("watch data-loss: root replaced by a link kept")


@pytest.mark.parametrize("damage", ["missing", "now-a-file", "unreadable"])
def test_a_root_that_cannot_be_read_keeps_every_document_in_the_watcher(notes_db, watch, monkeypatch, damage):
    db, notes = notes_db
    w = watch(db)
    if damage == "missing":
        shutil.rmtree(notes)
    elif damage == "now-a-file":
        shutil.rmtree(notes)
        notes.write_text("not a folder")
    else:
        deny_folder(monkeypatch, "notes")
    update = w.changed("notes", "d0/n0.md", "d1")
    monkeypatch.undo()
    assert update.reports[0].removed == 0 and update.reports[0].errors
    assert len(_docs(db)) == 4
    count("watch data-loss: unreadable roots kept")


# -- item 2: a nested git source loses its .git -------------------------------------


def test_a_nested_repository_that_loses_its_git_folder_keeps_its_documents(tmp_path, watch):
    outer = make_repo(tmp_path, "outer")
    commit(outer, {"top.md": "outer file\n"}, WHEN)
    inner = make_repo(outer, "inner")
    commit(inner, {"own.md": "inner note\n", "two.md": "second inner note\n"}, WHEN)
    db = tmp_path / "home" / "k.db"
    cli(db, "sources", "add", str(inner), "--git", "--name", "inner")
    cli(db, "index", "--no-embed")
    assert _docs(db) == ["own.md", "two.md"]
    w = watch(db)
    shutil.rmtree(inner / ".git")  # a re-clone in progress
    (inner / "own.md").write_text("inner note, edited\n")
    update = w.changed("inner", "own.md")
    assert update.reports[0].removed == 0
    assert "no longer the top of a git work tree" in " ".join(update.reports[0].errors)
    assert _docs(db) == ["own.md", "two.md"]
    count("watch data-loss: broken repositories kept")


# -- item 3: no file descriptors left ------------------------------------------------


@pytest.mark.parametrize("where", ["root", "folder"])
def test_running_out_of_file_descriptors_removes_nothing(notes_db, watch, monkeypatch, where):
    db, notes = notes_db
    w = watch(db)
    for i in range(4):
        (notes / f"d{i % 2}" / f"n{i}.md").write_text(f"# N{i}\n\nedited {i}\n")
    deny_folder(monkeypatch, "notes" if where == "root" else "d0", errno.EMFILE)
    update = w.changed("notes", *[f"d{i % 2}/n{i}.md" for i in range(4)])
    monkeypatch.undo()
    assert update.reports[0].removed == 0
    assert len(_docs(db)) == 4
    count("watch data-loss: EMFILE kept")


def test_running_out_of_file_descriptors_in_a_full_run_removes_nothing(notes_db, monkeypatch):
    db, _ = notes_db
    deny_folder(monkeypatch, "d0", errno.EMFILE)
    rc, out, _ = cli(db, "index", "--no-embed")
    monkeypatch.undo()
    assert "0 removed" in out and len(_docs(db)) == 4
    rc, out, _ = cli(db, "status")
    assert "d0: unreadable" in out


# -- item 4: a subfolder made unreadable while watched ------------------------------


@pytest.mark.parametrize("heard", ["the folder", "a file in it", "both"])
def test_an_unreadable_subfolder_keeps_its_documents_and_is_listed(notes_db, watch, monkeypatch, heard):
    db, notes = notes_db
    w = watch(db)
    if os.geteuid() != 0:
        (notes / "d1").chmod(0)
    deny_folder(monkeypatch, "d1")
    rels = {"the folder": ["d1"], "a file in it": ["d1/n1.md"], "both": ["d1", "d1/n3.md"]}[heard]
    try:
        update = w.changed("notes", *rels)
    finally:
        monkeypatch.undo()
        (notes / "d1").chmod(0o755)
    report = update.reports[0]
    assert report.removed == 0 and _docs(db) == ["d0/n0.md", "d0/n2.md", "d1/n1.md", "d1/n3.md"]
    assert {s.reason for s in report.skipped} == {"unreadable"}
    rc, out, _ = cli(db, "status")
    assert "unreadable" in out and "kept" in out  # listed with its reason
    count("watch data-loss: unreadable folders kept")


def test_a_deleted_file_and_folder_are_still_removed(notes_db, watch):
    db, notes = notes_db
    w = watch(db)
    (notes / "d0" / "n0.md").unlink()
    shutil.rmtree(notes / "d1")
    update = w.changed("notes", "d0/n0.md", "d1")
    assert update.reports[0].removed == 3 and _docs(db) == ["d0/n2.md"]


# -- item 5: a source removed or disabled while its changes wait --------------------


def test_a_source_removed_while_its_changes_wait_is_left_alone(notes_db, watch):
    db, notes = notes_db
    w = watch(db)
    for i in range(40):
        (notes / f"new{i}.md").write_text(f"new note {i}\n")
    sid = next(iter(w.watcher._observers))
    for i in range(40):
        w.watcher.pending.add(sid, f"new{i}.md")
    assert cli(db, "sources", "remove", "notes")[0] == 0
    update = w.watcher.flush()
    errors = [e for r in (update.reports if update else []) for e in r.errors]
    assert not errors, errors[:3]
    assert _docs(db) == []
    count("watch data-loss: removed sources left alone")


def test_a_source_disabled_before_a_file_is_created_gets_nothing(notes_db, watch):
    db, notes = notes_db
    w = watch(db)
    sid = next(iter(w.watcher._observers))
    assert cli(db, "sources", "disable", "notes")[0] == 0
    (notes / "late.md").write_text("created after disabling\n")
    w.watcher.pending.add(sid, "late.md")
    w.watcher.flush()
    assert "late.md" not in _docs(db)


# -- item 6: rebuild while a watch runs ---------------------------------------------


def test_rebuild_is_refused_while_a_watch_runs(notes_db):
    db, notes = notes_db
    store = open_store(db)
    watcher = Watcher(store, None, observer_factory=DeafObserver, debounce=0.05)
    stop = threading.Event()
    thread = threading.Thread(target=watcher.run, args=(stop,), daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 10
        while not watcher._observers and time.monotonic() < deadline:
            time.sleep(0.02)
        rc, out, err = cli(db, "rebuild")
        assert rc == 2 and "being watched" in err, out + err
        assert not [p for p in db.parent.iterdir() if ".damaged-" in p.name]
    finally:
        stop.set()
        thread.join(10)
        store.close()
    assert cli(db, "rebuild")[0] == 0  # once the watch stopped
    count("watch data-loss: rebuilds refused while watching")


def test_a_watcher_whose_store_is_replaced_stops_instead_of_writing_into_the_old_one(notes_db, watch):
    db, notes = notes_db
    w = watch(db)
    aside = db.with_name("k.db.moved")
    os.replace(db, aside)  # by hand, or by a rebuild on a system without shared locks
    for suffix in ("-wal", "-shm"):
        if Path(f"{db}{suffix}").exists():
            os.replace(f"{db}{suffix}", f"{aside}{suffix}")
    store = open_store(db)
    store.close()
    (notes / "d0" / "new.md").write_text("written after the store was replaced\n")
    assert w.changed("notes", "d0/new.md") is None
    assert w.watcher.replaced and "was replaced" in " ".join(w.notices)
    assert "d0/new.md" not in _docs(aside)


# -- item 7: exclusions added while watching ----------------------------------------


def test_a_gitignore_line_added_while_watching_removes_what_it_excludes(notes_db, watch):
    db, notes = notes_db
    w = watch(db)
    (notes / "d1" / ".gitignore").write_text("n3.md\n")
    w.changed("notes", "d1/.gitignore")
    assert _docs(db) == ["d0/n0.md", "d0/n2.md", "d1/n1.md"]
    (notes / ".gitignore").write_text("d0/\n")
    w.changed("notes", ".gitignore")
    assert _docs(db) == ["d1/n1.md"]
    count("watch data-loss: exclusions obeyed while watching", 2)


def test_a_glob_set_while_watching_removes_what_it_excludes(notes_db, watch):
    db, _ = notes_db
    w = watch(db)
    assert cli(db, "sources", "globs", "notes", "--exclude", "d0/**")[0] == 0
    w.watcher.sync_sources()  # every couple of seconds in a running watch
    w.watcher.flush()
    assert _docs(db) == ["d1/n1.md", "d1/n3.md"]
    assert cli(db, "sources", "globs", "notes")[0] == 0  # and back
    w.watcher.sync_sources()
    w.watcher.flush()
    assert len(_docs(db)) == 4


def test_a_gitignore_line_in_a_git_source_while_watching_removes_untracked_files(tmp_path, watch):
    repo = make_repo(tmp_path)
    commit(repo, {"kept.md": "tracked note\n"}, WHEN)
    (repo / "scratch.md").write_text("untracked scratch\n")
    db = tmp_path / "home" / "k.db"
    cli(db, "sources", "add", str(repo), "--git", "--name", "repo")
    cli(db, "index", "--no-embed")
    assert _docs(db) == ["kept.md", "scratch.md"]
    w = watch(db)
    (repo / ".gitignore").write_text("scratch.md\n")
    w.changed("repo", ".gitignore")
    watched = _docs(db)
    assert "scratch.md" not in watched
    cli(db, "index", "--no-embed")
    assert _docs(db) == watched  # what a full run decides


# -- sibling of the one rule: a note replaced by something that cannot be read ---------


def _replace_by_fifo(path: Path) -> None:
    path.unlink()
    os.mkfifo(path)


@pytest.mark.parametrize("how", ["kenning index", "the watcher"])
def test_a_note_replaced_by_a_named_pipe_keeps_its_documents(notes_db, watch, how):
    """The entry is there but cannot be read (a FIFO, a device where a note was): it is
    listed as unreadable and keeps its text, in a full run as in the watcher; it goes
    only once the entry is really gone."""
    db, notes = notes_db
    w = watch(db) if how == "the watcher" else None
    _replace_by_fifo(notes / "d0" / "n0.md")
    if w is None:
        rc, out, _ = cli(db, "index", "--no-embed")
        assert rc == 0 and "0 removed" in out, out
    else:
        assert w.changed("notes", "d0/n0.md").reports[0].removed == 0
    assert len(_docs(db)) == 4 and "note 0" in _texts(db)
    assert "d0/n0.md: unreadable — not a regular file" in cli(db, "status")[1]
    (notes / "d0" / "n0.md").unlink()
    if w is None:
        cli(db, "index", "--no-embed")
    else:
        w.changed("notes", "d0/n0.md")
    assert "d0/n0.md" not in _docs(db)
    count("watch data-loss: unreadable entries kept")


def test_a_mailbox_replaced_by_a_named_pipe_keeps_its_messages(tmp_path):
    from docfiles import email_bytes, mbox_bytes

    box = [email_bytes(f"Message {i}", f"u{i}@example.org", f"boxword{i}") for i in range(3)]
    notes = write_files(tmp_path / "mail", {"box.mbox": mbox_bytes(box), "a.md": "# A\n\nplain\n"})
    db = tmp_path / "home" / "k.db"
    cli(db, "sources", "add", str(notes), "--name", "mail")
    cli(db, "index", "--no-embed")
    before = _docs(db)
    assert len([p for p in before if p.startswith("box.mbox#")]) == 3
    _replace_by_fifo(notes / "box.mbox")
    rc, out, _ = cli(db, "index", "--no-embed")
    assert rc == 0 and "0 removed" in out and _docs(db) == before, out
    count("data-loss: unreadable entries kept")


@pytest.mark.parametrize("how", ["kenning index", "the watcher"])
def test_a_tracked_file_replaced_by_a_named_pipe_keeps_its_documents(tmp_path, watch, how):
    repo = make_repo(tmp_path)
    commit(repo, {"a.md": "tracked alpha\n", "b.md": "tracked beta\n"}, WHEN)
    db = tmp_path / "home" / "k.db"
    cli(db, "sources", "add", str(repo), "--git", "--name", "repo")
    cli(db, "index", "--no-embed")
    w = watch(db) if how == "the watcher" else None
    _replace_by_fifo(repo / "a.md")
    if w is None:
        rc, out, _ = cli(db, "index", "--no-embed")
        assert rc == 0 and "0 removed" in out, out
    else:
        assert w.changed("repo", "a.md").reports[0].removed == 0
    assert _docs(db) == ["a.md", "b.md"] and "tracked alpha" in _texts(db)
    assert "a.md: unreadable — not a regular file" in cli(db, "status")[1]
    count("watch data-loss: unreadable entries kept")


# -- sibling: a disk or share that is not mounted looks like an empty folder ------------


def _empty_out(folder: Path, away: Path) -> None:
    """What unmounting leaves at a mount point: the folder, with nothing in it."""
    away.mkdir()
    for entry in folder.iterdir():
        entry.rename(away / entry.name)


@pytest.mark.parametrize("how", ["kenning index", "the watcher"])
def test_a_root_that_is_suddenly_empty_keeps_its_documents(notes_db, watch, tmp_path, how):
    db, notes = notes_db
    w = watch(db) if how == "the watcher" else None
    _empty_out(notes, tmp_path / "away")
    if w is None:
        rc, out, err = cli(db, "index", "--no-embed")
        said = out + err
        assert rc != 0 and "0 removed" in out, said
    else:
        update = w.changed("notes", "d0", "d1")
        assert update.reports[0].removed == 0
        said = " ".join(update.reports[0].errors)
    assert "is empty now (a disk or a share that is not mounted?)" in said and "4 files" in said, said
    assert len(_docs(db)) == 4
    (notes / "back.md").write_text("# Back\n\nthe folder holds files again\n")  # what it holds now is believed
    if w is None:
        cli(db, "index", "--no-embed")
    else:
        w.changed("notes", "back.md", "d0", "d1")
    assert _docs(db) == ["back.md"]
    count("watch data-loss: empty roots kept")


def test_the_last_file_of_a_folder_still_goes_when_it_is_deleted(tmp_path, watch):
    notes = write_files(tmp_path / "notes", {"only.md": "# Only\n\nthe one note\n"})
    db = tmp_path / "home" / "k.db"
    cli(db, "sources", "add", str(notes), "--name", "notes")
    cli(db, "index", "--no-embed")
    (notes / "only.md").unlink()
    assert "1 removed" in cli(db, "index", "--no-embed")[1]
    assert _docs(db) == []


# -- sibling: an extraction that fails for want of resources, not because of the file ----


def _no_new_processes(monkeypatch) -> None:
    """The extraction worker cannot be started now (fork fails: EAGAIN, as when the
    user's process limit is reached); the shared worker is stopped first, so the next
    extraction must start one."""
    import subprocess

    from kenning.ingest import extract
    from kenning.ingest.extract import worker

    if extract._worker is not None:
        extract._worker.close()

    def no_fork(*args, **kwargs):
        raise OSError(errno.EAGAIN, os.strerror(errno.EAGAIN))

    monkeypatch.setattr(worker.subprocess, "Popen", no_fork)
    assert subprocess.Popen is no_fork


@pytest.mark.parametrize("how", ["kenning index", "the watcher"])
def test_a_document_whose_extraction_cannot_run_now_keeps_its_text(tmp_path, watch, monkeypatch, how):
    """A changed PDF whose extractor cannot be started (or crashed, or ran out of time)
    keeps what was indexed from it, listed with the reason: that says nothing about the file."""
    from docfiles import pdf_bytes

    notes = write_files(tmp_path / "notes", {"report.pdf": pdf_bytes([["pelican migration report"]]), "a.md": "# A\n"})
    db = tmp_path / "home" / "k.db"
    cli(db, "sources", "add", str(notes), "--name", "notes")
    cli(db, "index", "--no-embed")
    assert "pelican" in _texts(db)
    w = watch(db) if how == "the watcher" else None
    (notes / "report.pdf").write_bytes(pdf_bytes([["pelican migration report, revised"]]))
    _no_new_processes(monkeypatch)
    if w is None:
        rc, out, _ = cli(db, "index", "--no-embed")
        assert "0 removed" in out, out
    else:
        assert w.changed("notes", "report.pdf").reports[0].removed == 0
    monkeypatch.undo()
    assert "report.pdf" in _docs(db) and "pelican migration report" in _texts(db)
    assert "report.pdf: extract-failed" in cli(db, "status")[1]
    cli(db, "index", "--no-embed")  # the worker starts again: the new text replaces the old
    assert "revised" in _texts(db)
    count("watch data-loss: failed extractions kept")
