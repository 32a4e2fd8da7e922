"""A folder swapped for a symlink between a check and an open never leads a read out
of the source (issue #24, items 11 and 12, and their siblings).

Every file is opened from the source root's descriptor one component at a time, and
the extraction worker is handed the bytes the indexer hashed, not a path.  Each test
swaps a parent folder at the worst moment the old code had (after the walk looked,
before the read opened; after the hash, before the worker opened; after the check of
a front end's read, before its open), then a stress test swaps in a loop while
indexing, as the adversarial tester did.
"""

from __future__ import annotations

import os
import shutil
import threading
from datetime import datetime, timezone
from pathlib import Path

import pytest

from gitutil import commit, make_repo
from kenning.storage import open_store
from kenning_testing import documents_by_path
from reliability.helpers import cli, count, mcp_said, mcp_service, pick, stored_text, write_files

WHEN = datetime(2025, 6, 1, tzinfo=timezone.utc)
SECRET = "outsidesecretword"


def _texts(db: Path) -> str:
    return stored_text(db, titles=True)


def _outside(tmp_path: Path) -> Path:
    return write_files(
        tmp_path / "outside",
        {
            "a.md": f"# Stolen\n\n{SECRET} from outside\n",
            "page.html": f"<html><body><p>{SECRET} in a page</p></body></html>",
        },
    )


def _swap(folder: Path, target: Path) -> None:
    """Replace folder by a symlink to target, keeping the original beside it."""
    folder.rename(folder.with_name(folder.name + ".orig"))
    folder.symlink_to(target, target_is_directory=True)


def _unswap(folder: Path) -> None:
    if folder.is_symlink():
        folder.unlink()
        folder.with_name(folder.name + ".orig").rename(folder)


@pytest.mark.parametrize("kind", ["folder", "git"])
def test_a_parent_swapped_between_the_walk_and_the_read_is_not_followed(tmp_path, monkeypatch, kind):
    from kenning.ingest import textphase

    outside = _outside(tmp_path)
    db = tmp_path / "home" / "k.db"
    files = {"sub/a.md": "# Own\n\nthe note's own words\n", "top.md": "top note\n"}
    if kind == "git":
        root = make_repo(tmp_path)
        commit(root, files, WHEN)
        cli(db, "sources", "add", str(root), "--git")
    else:
        root = write_files(tmp_path / "notes", files)
        cli(db, "sources", "add", str(root))
    real = textphase._index_one

    def swapping(store, source, found, *args, **kwargs):
        if found.rel_path == "sub/a.md":
            _swap(root / "sub", outside)  # the walk has looked; the read has not opened yet
        return real(store, source, found, *args, **kwargs)

    monkeypatch.setattr(textphase, "_index_one", swapping)
    cli(db, "index", "--no-embed")
    monkeypatch.undo()
    assert SECRET not in _texts(db)
    count("TOCTOU: parent swapped before the read")


def test_a_parent_swapped_between_the_hash_and_the_extraction_is_not_followed(tmp_path, monkeypatch):
    from kenning.ingest import extracted

    outside = _outside(tmp_path)
    root = write_files(tmp_path / "notes", {"sub/page.html": "<html><body><p>own page words</p></body></html>"})
    db = tmp_path / "home" / "k.db"
    cli(db, "sources", "add", str(root))
    real = extracted.extract_file

    def swapping(*args, **kwargs):
        _swap(root / "sub", outside)  # hashed by the indexer; the worker has not opened it
        return real(*args, **kwargs)

    monkeypatch.setattr(extracted, "extract_file", swapping)
    cli(db, "index", "--no-embed")
    monkeypatch.undo()
    texts = _texts(db)
    assert SECRET not in texts and "own page words" in texts  # what was hashed is what was extracted
    count("TOCTOU: parent swapped before the extraction")


def _swap_before_opening(monkeypatch, folder: Path, target: Path, name: str) -> None:
    """Swap folder just before the file called name is first looked at or opened (by a
    path checked earlier, or by name below a folder already open)."""
    real_open, real_stat = os.open, os.stat
    done = []

    def hit(path) -> None:
        if not done and not isinstance(path, int) and os.path.basename(os.fspath(path)) == name:
            done.append(path)
            _swap(folder, target)

    def fake_open(path, *args, **kwargs):
        hit(path)
        return real_open(path, *args, **kwargs)

    def fake_stat(path, *args, **kwargs):
        hit(path)
        return real_stat(path, *args, **kwargs)

    monkeypatch.setattr(os, "open", fake_open)
    monkeypatch.setattr(os, "stat", fake_stat)


def test_the_preview_read_never_follows_a_parent_swapped_after_its_check(tmp_path, monkeypatch):
    from kenning.core.confine import read_source_file

    outside = _outside(tmp_path)
    root = write_files(tmp_path / "notes", {"sub/a.md": "own words\n"})
    _swap_before_opening(monkeypatch, root / "sub", outside, "a.md")
    try:
        data = read_source_file(str(root), "sub/a.md", 1 << 20)
    except OSError:
        data = b""
    monkeypatch.undo()
    assert SECRET.encode() not in data
    count("TOCTOU: front-end reads")


def test_mcp_read_never_follows_a_parent_swapped_after_its_check(tmp_path, monkeypatch):
    from kenning.workspace.documents import RefusedPath

    outside = _outside(tmp_path)
    root = write_files(tmp_path / "notes", {"sub/a.md": "own words\n"})
    db = tmp_path / "home" / "k.db"
    cli(db, "sources", "add", str(root))
    cli(db, "index", "--no-embed")
    service = mcp_service(db)
    try:
        _swap_before_opening(monkeypatch, root / "sub", outside, "a.md")
        try:
            answer = mcp_said(service.read("sub/a.md"))
        except RefusedPath:
            answer = ""
        monkeypatch.undo()
    finally:
        service.close()
    assert SECRET not in answer
    count("TOCTOU: front-end reads")


def test_mcp_read_refuses_a_root_replaced_by_a_symlink_after_indexing(tmp_path):
    """Item 12: `kenning index` refused such a root; the MCP read trusted realpath()."""
    from kenning.workspace.documents import RefusedPath

    outside = _outside(tmp_path)
    root = write_files(tmp_path / "notes", {"a.md": "# Own\n\nown words\n"})
    db = tmp_path / "home" / "k.db"
    cli(db, "sources", "add", str(root))
    cli(db, "index", "--no-embed")
    shutil.rmtree(root)
    root.symlink_to(outside, target_is_directory=True)
    service = mcp_service(db)
    try:
        for path in ("a.md", str(root / "a.md")):
            with pytest.raises(RefusedPath, match="symbolic link"):
                service.read(path)
    finally:
        service.close()
    count("security: MCP reads confined")


@pytest.mark.parametrize("kind", ["folder", "git"])
def test_swapping_a_parent_in_a_loop_while_indexing_never_leaks(tmp_path, kind):
    outside = _outside(tmp_path)
    files = {f"sub/n{i}.md": f"note {i} own words\n" for i in range(30)}
    files["sub/a.md"] = "# Own\n\nown words\n"
    files["sub/page.html"] = "<p>own page</p>"
    db = tmp_path / "home" / "k.db"
    if kind == "git":
        root = make_repo(tmp_path)
        commit(root, files, WHEN)
        cli(db, "sources", "add", str(root), "--git")
    else:
        root = write_files(tmp_path / "notes", files)
        cli(db, "sources", "add", str(root))
    stop = threading.Event()

    def swapper():
        while not stop.is_set():
            try:
                _swap(root / "sub", outside)
                _unswap(root / "sub")
            except OSError:
                pass

    thread = threading.Thread(target=swapper, daemon=True)
    thread.start()
    try:
        for _ in range(pick(6, 40)):
            cli(db, "index", "--no-embed")
            store = open_store(db)
            with store.atomic():  # every file is read again next run: its mtime no longer matches
                for doc_id in documents_by_path(store).values():
                    store.documents.touch(doc_id, -1.0)
            store.close()
    finally:
        stop.set()
        thread.join(10)
        _unswap(root / "sub")
    assert SECRET not in _texts(db)
    count("TOCTOU: swap loops survived", pick(6, 40))
