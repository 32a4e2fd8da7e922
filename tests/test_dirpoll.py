"""The watch-limit fallback (#14 bug 3): poll only the directories that changed."""

from __future__ import annotations

import os

import pytest
from watchdog.events import FileSystemEventHandler

from kenning.ingest import dirpoll
from kenning.ingest.changes import worth_a_look
from kenning.ingest.dirpoll import DirectoryPoller
from kenning_testing import write_files


class Heard(FileSystemEventHandler):
    def __init__(self) -> None:
        self.events: list[tuple[str, str]] = []

    def on_any_event(self, event) -> None:
        self.events.append((event.event_type, event.src_path))


@pytest.fixture(autouse=True)
def settled(monkeypatch):
    """Directories made by the test are seconds old at most: count them as settled."""
    monkeypatch.setattr(dirpoll, "SETTLE_SECONDS", 0.0)


def _tree(tmp_path, dirs: int = 20, per_dir: int = 5):
    files = {f"d{i:02}/n{j}.md": f"note {i} {j}\n" for i in range(dirs) for j in range(per_dir)}
    files["d00/deep/er/x.md"] = "deep\n"
    files[".git/objects/ab/cdef"] = "object\n"
    files["node_modules/pkg/index.js"] = "js\n"
    return write_files(tmp_path / "tree", files)


def _poller(root, **kw):
    heard = Heard()
    poller = DirectoryPoller(60, dir_filter=worth_a_look, **kw)
    poller.schedule(heard, str(root))
    return poller, heard


def _relative(root, events):
    return sorted((kind, os.path.relpath(path, root).replace(os.sep, "/")) for kind, path in events)


def _bump(path, seconds: int = 10) -> None:
    """Move a path's mtime on (as a later write would), whatever the clock's resolution."""
    st = os.stat(path)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + seconds * 10**9))


def test_created_deleted_renamed_and_edited_files_are_reported(tmp_path):
    root = _tree(tmp_path)
    poller, heard = _poller(root)
    assert poller.poll() == []
    (root / "d01" / "new.md").write_text("new\n")
    (root / "d02" / "n0.md").unlink()
    (root / "d03" / "n1.md").rename(root / "d03" / "renamed.md")
    edited = root / "d04" / "n2.md"
    edited.write_text("edited in place, longer than before\n")  # d04's own mtime is unchanged
    (root / "d05" / "sub").mkdir()
    (root / "d05" / "sub" / "a.md").write_text("a\n")
    for changed in ("d01", "d02", "d03", "d05"):
        _bump(root / changed)
    poller.poll()
    assert _relative(root, heard.events) == [
        ("created", "d01/new.md"),
        ("created", "d03/renamed.md"),
        ("created", "d05/sub"),
        ("deleted", "d02/n0.md"),
        ("deleted", "d03/n1.md"),
        ("modified", "d04/n2.md"),
    ]
    heard.events.clear()
    assert poller.poll() == []  # each change is reported once


def test_a_vanished_folder_is_reported_once_with_nothing_under_it_polled_again(tmp_path):
    root = _tree(tmp_path)
    poller, heard = _poller(root)
    before = poller.directories
    for path in sorted((root / "d00").rglob("*"), reverse=True):
        path.rmdir() if path.is_dir() else path.unlink()
    (root / "d00").rmdir()
    poller.poll()
    assert _relative(root, heard.events) == [("deleted", "d00")]
    assert poller.directories == before - 3  # d00, d00/deep, d00/deep/er


def test_only_directories_whose_mtime_changed_are_listed_again(tmp_path):
    root = _tree(tmp_path, dirs=40)
    poller, _ = _poller(root)
    listed = poller.listed
    assert poller.poll() == []
    assert poller.listed == listed  # nothing changed: no directory listed, only stat'ed
    (root / "d07" / "new.md").write_text("new\n")
    _bump(root / "d07")
    poller.poll()
    assert poller.listed == listed + 1


def test_ignored_folders_are_never_entered(tmp_path):
    root = _tree(tmp_path)
    poller, heard = _poller(root)
    (root / ".git" / "objects" / "ab" / "new").write_text("x\n")
    (root / "node_modules" / "pkg" / "more.js").write_text("x\n")
    _bump(root / ".git" / "objects" / "ab")
    _bump(root / "node_modules" / "pkg")
    poller.poll()
    assert heard.events == []
    assert not any(".git" in p or "node_modules" in p for p in poller._dirs)


def test_in_a_large_tree_each_file_is_checked_within_a_round(tmp_path, monkeypatch):
    monkeypatch.setattr(dirpoll, "EVERY_POLL_FILES", 10)  # the tree counts as large
    root = _tree(tmp_path, dirs=30)
    poller, heard = _poller(root)
    edited = root / "d29" / "n4.md"
    edited.write_text("edited in place, longer than before\n")
    stats = poller.stats
    seen_after = None
    for period in range(1, dirpoll.FILE_ROUND_POLLS + 1):
        poller.poll()
        if heard.events and seen_after is None:
            seen_after = period
    assert seen_after is not None and seen_after <= dirpoll.FILE_ROUND_POLLS
    assert _relative(root, heard.events) == [("modified", "d29/n4.md")]
    # Fewer stats than checking every file every period (directories + a share of files).
    files = 30 * 5 + 1
    assert poller.stats - stats < dirpoll.FILE_ROUND_POLLS * (files + poller.directories)


def test_a_directory_modified_within_the_settle_time_is_listed_again(tmp_path, monkeypatch):
    monkeypatch.setattr(dirpoll, "SETTLE_SECONDS", 3600.0)  # coarse clock: every fresh mtime is unsettled
    root = _tree(tmp_path, dirs=3)
    poller, heard = _poller(root)
    # Same mtime tick as the listing: the directory's stamp will not change.
    st = os.stat(root / "d01")
    (root / "d01" / "late.md").write_text("late\n")
    os.utime(root / "d01", ns=(st.st_atime_ns, st.st_mtime_ns))
    poller.poll()
    assert ("created", "d01/late.md") in _relative(root, heard.events)


def test_a_watcher_out_of_watches_uses_the_directory_poller(tmp_path):
    import errno

    from kenning.ingest.watch import Watcher
    from kenning.storage import open_store
    from kenning_testing import index_folder

    class NoWatchesLeft:
        def schedule(self, *a, **k):
            raise OSError(errno.ENOSPC, "inotify watch limit reached")

        def stop(self):
            pass

        def is_alive(self):
            return False

    store = open_store(tmp_path / "k.db")
    index_folder(store, _tree(tmp_path, dirs=2))
    watcher = Watcher(store, None, observer_factory=NoWatchesLeft, poll_seconds=0.2)
    watcher.sync_sources()
    try:
        ((_, observer),) = watcher._observers.values()
        assert isinstance(observer, DirectoryPoller) and watcher.polling
    finally:
        watcher.close()
        store.close()
