"""The file watcher (#14 bug 3): changes searchable within 2 s, only the changed paths indexed."""

from __future__ import annotations

import errno
import os
import threading
import time
from types import SimpleNamespace

import pytest
from watchdog.observers import Observer

from kenning.ingest import textphase
from kenning.ingest.changes import index_paths
from kenning.ingest.textphase import TextOptions
from kenning.ingest.watch import Watcher
from kenning.search.engine import SearchEngine
from kenning.search.fusion import DEFAULT_FUSION
from kenning.storage import open_store
from kenning.storage import sources as sources_repo
from kenning_testing import CountingEmbedder, index_folder, write_files

FILES = {
    "alpha.md": "# Alpha\n\nThe quokka lives on an island.\n",
    "sub/beta.md": "# Beta\n\nA note about wombats.\n",
    ".gitignore": "ignored/\n*.tmp.md\n",
}


def paths_for(store, word):
    """Files holding the word itself (the fuzzy layer's near misses do not count)."""
    result = SearchEngine(store, None).search(word, None)
    return sorted({h.path for h in result.hits}) if result.layer == DEFAULT_FUSION else []


@pytest.fixture
def folder(tmp_path):
    return write_files(tmp_path / "notes", FILES)


@pytest.fixture
def watched(tmp_path, folder):
    """A watcher running in its own thread with its own store, as in the app."""
    db = tmp_path / "k.db"
    store = open_store(db)
    index_folder(store, folder)
    updates, notices = [], []
    stop = threading.Event()
    watch_store = open_store(db)
    watcher = Watcher(watch_store, None, on_update=updates.append, on_notice=notices.append, poll_seconds=0.2)
    thread = threading.Thread(target=watcher.run, args=(stop,), daemon=True)
    thread.start()
    assert watcher.ready.wait(10)  # the watches are in place
    yield store, folder, watcher, updates, notices
    stop.set()
    thread.join(5)
    watch_store.close()
    store.close()


def wait_for(predicate, timeout=2.0):
    """True once predicate holds; the watcher's promise is 2 s from save to searchable."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return predicate()


def test_saved_created_renamed_deleted_files_are_searchable_within_two_seconds(watched):
    store, folder, _, updates, _ = watched
    (folder / "alpha.md").write_text("# Alpha\n\nThe quokka now lives with a numbat.\n", encoding="utf-8")
    assert wait_for(lambda: paths_for(store, "numbat") == ["alpha.md"])
    (folder / "sub" / "gamma.md").write_text("# Gamma\n\nPlatypus notes.\n", encoding="utf-8")
    assert wait_for(lambda: paths_for(store, "platypus") == ["sub/gamma.md"])
    os.rename(folder / "sub" / "gamma.md", folder / "renamed.md")
    assert wait_for(lambda: paths_for(store, "platypus") == ["renamed.md"])
    (folder / "sub" / "beta.md").unlink()
    assert wait_for(lambda: paths_for(store, "wombats") == [])
    assert updates and all(not r.errors for u in updates for r in u.reports)


def test_folder_moved_in_and_deleted(watched, tmp_path):
    store, folder, *_ = watched
    outside = write_files(tmp_path / "elsewhere", {"deep/kiwi.md": "# Kiwi\n\nKiwi birds.\n"})
    os.rename(outside, folder / "moved")
    assert wait_for(lambda: paths_for(store, "kiwi") == ["moved/deep/kiwi.md"])
    import shutil

    shutil.rmtree(folder / "moved")
    assert wait_for(lambda: paths_for(store, "kiwi") == [])


def test_the_walk_rules_still_apply(watched, tmp_path):
    store, folder, *_ = watched
    write_files(
        folder,
        {
            "ignored/secret.md": "# Secret\n\nzebra\n",
            "draft.tmp.md": "zebra draft\n",
            ".hidden.md": "zebra hidden\n",
            "node_modules/pkg/readme.md": "zebra package\n",
        },
    )
    (tmp_path / "out.md").write_text("zebra outside\n", encoding="utf-8")
    os.symlink(tmp_path / "out.md", folder / "link.md")
    (folder / "visible.md").write_text("zebra visible\n", encoding="utf-8")
    assert wait_for(lambda: paths_for(store, "zebra") == ["visible.md"])
    # Changes are indexed in the order they came: once a file written after all of these
    # is searchable, every one of them has been seen, and none may have been indexed.
    (folder / "zz-last.md").write_text("marsupial\n", encoding="utf-8")
    assert wait_for(lambda: paths_for(store, "marsupial") == ["zz-last.md"])
    assert paths_for(store, "zebra") == ["visible.md"]


def test_changes_never_walk_the_whole_source(tmp_path, folder, monkeypatch):
    store = open_store(tmp_path / "k.db")
    source, _ = index_folder(store, folder)

    def no_walk(*_a, **_k):
        raise AssertionError("a full walk for one changed file")

    monkeypatch.setattr(textphase, "walk_source", no_walk)
    (folder / "alpha.md").write_text("# Alpha\n\nechidna\n", encoding="utf-8")
    report = index_paths(store, source, {"alpha.md"}, TextOptions())
    assert (report.changed, report.files_seen) == (1, 1)
    assert paths_for(store, "echidna") == ["alpha.md"]
    store.close()


def test_a_burst_of_writes_is_indexed_once(tmp_path, folder):
    db = tmp_path / "k.db"
    store = open_store(db)
    index_folder(store, folder)
    updates = []
    watcher = Watcher(store, None, on_update=updates.append)
    watcher.sync_sources()
    try:
        for i in range(5):  # an editor writing a temp file, then the file, several times
            (folder / "alpha.md").write_text(f"# Alpha\n\nversion {i} dingo\n", encoding="utf-8")
            time.sleep(0.02)
        deadline = time.monotonic() + 3
        while not updates and time.monotonic() < deadline:
            watcher.step()
    finally:
        watcher.close()
    assert len(updates) == 1 and updates[0].files == 1
    assert paths_for(store, "dingo") == ["alpha.md"]
    store.close()


class _NoWatchesLeft:
    """An inotify observer on a machine whose max_user_watches is used up."""

    def __init__(self) -> None:
        self._real = Observer()

    def schedule(self, *a, **k):
        raise OSError(errno.ENOSPC, "inotify watch limit reached")

    def __getattr__(self, name):
        return getattr(self._real, name)


def test_watch_limit_falls_back_to_scanning_and_says_so(tmp_path, folder):
    db = tmp_path / "k.db"
    store = open_store(db)
    index_folder(store, folder)
    notices = []
    watcher = Watcher(store, None, on_notice=notices.append, observer_factory=_NoWatchesLeft, poll_seconds=0.2)
    watcher.sync_sources()
    try:
        assert watcher.polling and "watch limit" in notices[0] and "every 0.2 s" in notices[0]
        (folder / "new.md").write_text("# New\n\nwallaby\n", encoding="utf-8")
        deadline = time.monotonic() + 3
        while not paths_for(store, "wallaby") and time.monotonic() < deadline:
            watcher.step()
    finally:
        watcher.close()
    assert paths_for(store, "wallaby") == ["new.md"]
    store.close()


def test_vectors_follow_the_text(tmp_path, folder):
    db = tmp_path / "k.db"
    store = open_store(db)
    embedder = CountingEmbedder()
    index_folder(store, folder, embedder)
    embedder.embedded.clear()
    watcher = Watcher(store, lambda: embedder)
    watcher.sync_sources()
    try:
        (folder / "alpha.md").write_text("# Alpha\n\nbandicoot\n", encoding="utf-8")
        deadline = time.monotonic() + 3
        while not embedder.embedded and time.monotonic() < deadline:
            watcher.step()
    finally:
        watcher.close()
    assert any("bandicoot" in text for text in embedder.embedded)
    store.close()


def test_disabled_sources_are_not_watched(tmp_path, folder):
    store = open_store(tmp_path / "k.db")
    source, _ = index_folder(store, folder)
    watcher = Watcher(store, None)
    watcher.sync_sources()
    assert source.id in watcher._observers
    sources_repo.set_enabled(store, source.id, False)
    watcher.sync_sources()
    assert source.id not in watcher._observers
    watcher.close()
    store.close()


@pytest.mark.parametrize("stop_signal", ["SIGINT", "SIGTERM"])
def test_kenning_index_watch_from_a_terminal(tmp_path, folder, stop_signal):
    """`kenning index --watch`: a full index, then changes as they happen, until Ctrl+C
    (or `kill`: SIGTERM ends it the same way, said on stderr)."""
    import signal
    import subprocess
    import sys

    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path), "KENNING_MODEL": "fake", "PYTHONUNBUFFERED": "1"}
    db = str(tmp_path / "cli.db")
    base = [sys.executable, "-m", "kenning.cli.main", "--store", db]
    subprocess.run([*base, "sources", "add", str(folder)], env=env, check=True, capture_output=True)
    # stderr goes to a file: a pipe nobody reads can fill and block the process it belongs to
    errors = open(tmp_path / "stderr.txt", "w+")  # noqa: SIM115 - closed in the finally below
    # Ctrl+C must reach it as at a terminal: a test run started as a background job (`cmd &` in a script, as CI
    # may) has SIGINT ignored, a child inherits that, and Python then installs no KeyboardInterrupt at all.
    proc = subprocess.Popen(
        [*base, "index", "--watch"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=errors,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        lines = []
        for line in proc.stdout:
            lines.append(line)
            if line.startswith("Watching"):  # said once the watches are in place
                break
        (folder / "cli-note.md").write_text("# From the terminal\n\nkookaburra\n", encoding="utf-8")
        for line in proc.stdout:
            lines.append(line)
            if "1 new" in line:
                break
        assert any("1 new" in line for line in lines), lines
    finally:
        proc.send_signal(getattr(signal, stop_signal))
        try:
            proc.wait(60)  # exits at once when idle
        except subprocess.TimeoutExpired:
            proc.kill()
            errors.seek(0)
            raise AssertionError(f"index --watch ignored {stop_signal}; its stderr:\n{errors.read()[-4000:]}") from None
        errors.seek(0)
        said = errors.read()
        errors.close()
    assert proc.returncode == 0 and "stopped watching" in said, said[-2000:]
    store = open_store(tmp_path / "cli.db")
    assert paths_for(store, "kookaburra") == ["cli-note.md"]
    store.close()


def test_a_changed_or_deleted_mailbox_updates_its_messages(tmp_path, notes):
    from docfiles import email_bytes, mbox_bytes

    store = open_store(tmp_path / "k.db")
    write_files(notes, {"mail/team.mbox": mbox_bytes([email_bytes("A", "a@x", "wombatword")] * 2)})
    source, _ = index_folder(store, notes)
    assert paths_for(store, "wombatword") == ["mail/team.mbox#1", "mail/team.mbox#2"]
    report = index_paths(store, source, {"mail"}, TextOptions())  # a folder event: its mailbox is unchanged
    assert report.unchanged == 1 and len(paths_for(store, "wombatword")) == 2
    (notes / "mail" / "team.mbox").unlink()
    index_paths(store, source, {"mail/team.mbox"}, TextOptions())
    assert paths_for(store, "wombatword") == []
    store.close()


def test_the_watch_limit_notice_names_the_limit_that_was_reached():
    from kenning.ingest.watch import watch_limit_notice

    source = SimpleNamespace(name="repo")
    assert "max_user_watches" in watch_limit_notice(source, 5.0, errno.ENOSPC)  # too many watched folders
    assert "max_user_instances" in watch_limit_notice(source, 5.0, errno.EMFILE)  # too many watchers
