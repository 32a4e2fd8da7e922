"""A source whose folder's path is not valid UTF-8 (a folder b"caf\\xe9" from an old
Latin-1 disk) is added, indexed, searched, watched and removed like any other (issue #24
case 23).  Its root is kept as core.fsnames.storable_name(root) and given back byte for
byte; it is shown as `\\xNN` (never a raw byte) on the terminal, in JSON, the log and MCP.
"""

from __future__ import annotations

import json
import os
import shutil
import threading
import time
from pathlib import Path

import pytest

from kenning.core.fsnames import not_text
from kenning.storage import open_store
from reliability.helpers import cli, count, stored_paths, write_files

INTERNAL = "Something went wrong inside Kenning"
SHOWN = "caf\\xe9"  # how the folder b"caf\xe9" is shown and named: the text backslash-x-e-9


def odd_path(tmp_path, name: bytes = b"caf\xe9") -> Path:
    """A real folder whose name holds a byte that is not UTF-8, as Python names it."""
    raw = os.fsencode(tmp_path) + b"/" + name
    os.mkdir(raw)
    return Path(os.fsdecode(raw))


@pytest.fixture
def odd(tmp_path):
    folder = write_files(odd_path(tmp_path), {"a.md": "# Alpha\n\nquokka on an island\n"})
    os.mkdir(os.fsencode(folder) + b"/sub\xff")  # a subfolder and a file not UTF-8 either
    with open(os.fsencode(folder) + b"/sub\xff/n\xe9.md", "wb") as f:
        f.write(b"# Beta\n\nwombat in a burrow\n")
    db = tmp_path / "home" / "k.db"
    return db, folder


def _roots(db) -> list[str]:
    store = open_store(db)
    try:
        return [s.root for s in store.sources.list()]
    finally:
        store.close()


def _clean(text: str) -> None:
    """Terminal text never holds a raw byte (a surrogate escape) nor a traceback."""
    assert not not_text(text) and INTERNAL not in text and "Traceback" not in text, text


def test_a_folder_not_valid_utf8_is_added_indexed_searched_and_removed(odd):
    db, folder = odd
    rc, out, err = cli(db, "sources", "add", str(folder))
    _clean(out + err)
    assert rc == 0 and f"source '{SHOWN}'" in out and f"/{SHOWN}" in out, out + err
    assert _roots(db) == [str(folder)] and os.path.isdir(_roots(db)[0])  # the exact path, bytes and all
    rc, out, err = cli(db, "index", "--no-embed")
    _clean(out + err)
    assert rc == 0 and "2 added" in out and "0 skipped" in out, out + err
    assert stored_paths(db) == ["a.md", "sub\\xff/n\\xe9.md"]
    rc, out, err = cli(db, "search", "quokka", "--mode", "lexical")
    _clean(out + err)
    assert rc == 0 and f"{SHOWN}:a.md:" in out, out
    rc, out, err = cli(db, "search", "wombat", "--mode", "lexical")
    assert rc == 0 and f"{SHOWN}:sub\\xff/n\\xe9.md:" in out, out
    for argv in (["status"], ["sources", "list"]):
        rc, out, err = cli(db, *argv)
        _clean(out + err)
        assert rc == 0 and f"{SHOWN}  [folder]  {os.path.dirname(str(folder))}/{SHOWN}" in out, out
    count("streams: undecodable roots shown escaped")


def test_json_answers_name_such_a_root_as_text(odd):
    db, folder = odd
    cli(db, "sources", "add", str(folder))
    cli(db, "index", "--no-embed")
    shown_root = f"{os.path.dirname(str(folder))}/{SHOWN}"
    rc, out, err = cli(db, "status", "--json")
    _clean(out + err)
    record = json.loads(out)
    assert rc == 0 and [(s["name"], s["root"]) for s in record["sources"]] == [(SHOWN, shown_root)]
    rc, out, err = cli(db, "search", "wombat", "--mode", "lexical", "--json")
    _clean(out + err)
    hit = json.loads(out.splitlines()[1])
    assert (hit["source"], hit["path"]) == (SHOWN, "sub\\xff/n\\xe9.md")
    assert hit["abs_path"] == f"{shown_root}/sub\\xff/n\\xe9.md"
    count("streams: undecodable roots shown escaped")


@pytest.mark.parametrize("typed", ["as shown", "as the bytes"])
def test_such_a_source_is_named_as_shown_or_by_its_bytes(odd, typed):
    """`kenning index 'caf\\xe9'` (what status shows) and `kenning index $'caf\\xe9'` (the
    folder's own name, the byte itself) both name it."""
    db, folder = odd
    cli(db, "sources", "add", str(folder))
    name = SHOWN if typed == "as shown" else os.fsdecode(b"caf\xe9")
    rc, out, err = cli(db, "index", name, "--no-embed")
    _clean(out + err)
    assert rc == 0 and "2 added" in out, out + err
    for argv, said in ((["sources", "disable", name], "disabled"), (["sources", "enable", name], "enabled")):
        rc, out, err = cli(db, *argv)
        assert rc == 0 and said in out, out + err
    rc, out, err = cli(db, "sources", "remove", name)
    _clean(out + err)
    assert rc == 0 and f"Removed '{SHOWN}'" in out, out + err
    assert _roots(db) == [] and stored_paths(db) == []
    count("streams: undecodable roots shown escaped")


def test_a_folder_named_by_the_escape_itself_is_another_source(tmp_path):
    """The folder literally named `caf\\xe9` (a backslash in it) and the folder b"caf\\xe9"
    are two sources with two roots: the stored text of one can never be the other's."""
    odd = write_files(odd_path(tmp_path), {"a.md": "# A\n\nbyte folder kiwi\n"})
    literal = write_files(tmp_path / "caf\\xe9", {"a.md": "# A\n\nliteral folder kiwi\n"})
    db = tmp_path / "home" / "k.db"
    assert cli(db, "sources", "add", str(odd), "--name", "byte")[0] == 0
    assert cli(db, "sources", "add", str(literal), "--name", "literal")[0] == 0
    assert sorted(_roots(db)) == sorted([str(odd), str(literal)])
    assert cli(db, "index", "--no-embed")[0] == 0
    for name, word in (("byte", "byte"), ("literal", "literal")):
        rc, out, _ = cli(db, "search", f"kiwi source:{name}", "--mode", "lexical")
        assert rc == 0 and f"{word} folder kiwi" in out and out.count(f"{name}:a.md") == 1, out
    count("streams: undecodable roots shown escaped")


def test_the_log_writes_such_a_root_escaped(odd, monkeypatch, tmp_path):
    db, folder = odd
    monkeypatch.setenv("KENNING_HOME", str(tmp_path / "kh"))
    cli(db, "sources", "add", str(folder))
    shutil.rmtree(folder)  # the index run cannot read it: said on the terminal and in the log
    rc, out, err = cli(db, "index", "--no-embed")
    _clean(out + err)
    logs = list((tmp_path / "kh").rglob("kenning.log"))
    text = "".join(p.read_text(encoding="utf-8") for p in logs)
    assert SHOWN in out + err and "\\udce9" not in text and "\udce9" not in text
    count("streams: undecodable roots shown escaped")


# -- never losing what was indexed from it ---------------------------------------------


@pytest.mark.parametrize("damage", ["missing", "replaced by a link", "renamed to UTF-8"])
def test_a_full_run_keeps_its_documents_when_the_folder_cannot_be_read(odd, damage):
    db, folder = odd
    cli(db, "sources", "add", str(folder))
    cli(db, "index", "--no-embed")
    if damage == "missing":
        shutil.rmtree(folder)
    else:
        moved = folder.with_name("cafe")
        folder.rename(moved)  # what `convmv` does
        if damage == "replaced by a link":
            folder.symlink_to(moved, target_is_directory=True)
    rc, out, err = cli(db, "index", "--no-embed")
    _clean(out + err)
    assert "0 removed" in out or "removed" not in out, out
    assert stored_paths(db) == ["a.md", "sub\\xff/n\\xe9.md"]
    count("data-loss: undecodable roots kept when unreadable")


# -- the watcher (kenning index --watch, the app's live index) --------------------------


def _hits(store, word: str) -> list[tuple[str, str]]:
    from kenning.search.engine import SearchEngine
    from kenning.search.fusion import DEFAULT_FUSION

    result = SearchEngine(store, None).search(word, None)
    return sorted({(h.source, h.path) for h in result.hits}) if result.layer == DEFAULT_FUSION else []


def _wait(predicate, timeout: float = 15.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return bool(predicate())


def test_the_watcher_follows_such_a_folder(odd):
    from kenning.ingest.watch import Watcher

    db, folder = odd
    cli(db, "sources", "add", str(folder))
    cli(db, "index", "--no-embed")
    store, watch_store = open_store(db), open_store(db)
    updates, notices = [], []
    stop = threading.Event()
    watcher = Watcher(watch_store, None, on_update=updates.append, on_notice=notices.append, poll_seconds=0.2)
    thread = threading.Thread(target=watcher.run, args=(stop,), daemon=True)
    thread.start()
    try:
        assert watcher.ready.wait(20)
        raw = os.fsencode(folder)
        with open(raw + b"/new\xe9.md", "wb") as f:
            f.write(b"# New\n\ncapybara by the river\n")
        assert _wait(lambda: _hits(store, "capybara") == [(SHOWN, "new\\xe9.md")]), (updates, notices)
        with open(raw + b"/a.md", "wb") as f:
            f.write(b"# Alpha\n\nplatypus now\n")
        assert _wait(lambda: _hits(store, "platypus") == [(SHOWN, "a.md")]), (updates, notices)
        os.remove(raw + b"/sub\xff/n\xe9.md")
        assert _wait(lambda: "sub\\xff/n\\xe9.md" not in stored_paths(db)), (updates, notices)
        assert all(not r.errors for u in updates for r in u.reports), updates
    finally:
        stop.set()
        thread.join(10)
        watch_store.close()
        store.close()
    assert stored_paths(db) == ["a.md", "new\\xe9.md"]
    count("watch data-loss: undecodable roots watched")


def test_the_cli_watch_indexes_such_a_folder(odd, tmp_path):
    """`kenning index --watch` as a user runs it: a new file in the folder is searchable."""
    import signal
    import subprocess
    import sys

    db, folder = odd
    cli(db, "sources", "add", str(folder))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path), "KENNING_HOME": str(tmp_path / "kh")}
    env["PYTHONUNBUFFERED"] = "1"
    argv = [
        sys.executable,
        "-m",
        "kenning.cli.main",
        "--store",
        str(db),
        "--model",
        "fake",
        "index",
        "--watch",
        "--no-embed",
    ]
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    lines: list[bytes] = []
    reader = threading.Thread(target=lambda: lines.extend(iter(proc.stdout.readline, b"")), daemon=True)
    reader.start()
    try:
        assert _wait(lambda: any(b"Watching" in line for line in lines), 60), lines
        with open(os.fsencode(folder) + b"/w.md", "wb") as f:
            f.write(b"# W\n\nnarwhal in the fjord\n")
        assert _wait(lambda: "w.md" in stored_paths(db), 30), lines
    finally:
        proc.send_signal(signal.SIGTERM)  # ends it as Ctrl+C does (a background test run ignores SIGINT)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
        reader.join(5)
    shown = b"".join(lines)
    assert b"\xe9" not in shown and SHOWN.encode() in shown, shown  # never a raw byte on the terminal
    count("watch data-loss: undecodable roots watched")


# -- MCP ----------------------------------------------------------------------------------


def test_mcp_lists_adds_and_searches_such_a_folder(odd, tmp_path):
    from kenning.cli.output import hit_dict
    from kenning.mcpserver.service import KenningService
    from kenning.workspace import Workspace

    _, folder = odd
    ws = Workspace(tmp_path / "store" / "k.db", model="fake")
    service = KenningService(ws, hit_dict, allow_writes=True, watch=False)
    shown_root = f"{os.path.dirname(str(folder))}/{SHOWN}"
    try:
        added = service.add_source(shown_root)  # as an assistant reads it in an answer
        assert (added["added"], added["root"]) == (SHOWN, shown_root)
        assert [s.root for s in ws.list_sources()] == [str(folder)]
        service.index(embed=False)
        listed = service.sources()["sources"]
        assert [(s["name"], s["root"], s["documents"]) for s in listed] == [(SHOWN, shown_root, 2)]
        found = service.search("wombat", mode="lexical")
        assert [(h["source"], h["path"], h["abs_path"]) for h in found["hits"]] == [
            (SHOWN, "sub\\xff/n\\xe9.md", f"{shown_root}/sub\\xff/n\\xe9.md")
        ]
        for answer in (added, service.status(), service.sources(), found):
            json.dumps(answer, ensure_ascii=False).encode("utf-8")  # JSON is UTF-8: no surrogate left
        for read in (
            service.read("sub\\xff/n\\xe9.md", source=SHOWN),  # the hit's path, as shown
            service.read(found["hits"][0]["abs_path"]),  # its abs_path, as shown
        ):
            assert "wombat in a burrow" in json.dumps(read, ensure_ascii=False)
    finally:
        service.close()
        ws.close()
    count("MCP writes: undecodable roots added")


# -- a file whose name is not UTF-8, in an ordinary source ---------------------------------


def test_a_file_not_valid_utf8_in_a_plain_folder_is_named_as_text_everywhere(tmp_path):
    """Its stored path was `n\\xe9.md` already; its abs_path in --json and MCP answers was
    the raw byte (not UTF-8, so not JSON), and MCP `read` refused the path a hit gave."""
    from kenning.cli.output import hit_dict
    from kenning.mcpserver.service import KenningService
    from kenning.workspace import Workspace

    notes = write_files(tmp_path / "notes", {"a.md": "# A\n\nplain\n"})
    with open(os.fsencode(notes) + b"/n\xe9.md", "wb") as f:
        f.write(b"# N\n\nmarmot in the alps\n")
    db = tmp_path / "home" / "k.db"
    cli(db, "sources", "add", str(notes), "--name", "notes")
    cli(db, "index", "--no-embed")
    rc, out, err = cli(db, "search", "marmot", "--mode", "lexical", "--json")
    _clean(out + err)
    hit = json.loads(out.splitlines()[1])
    assert (hit["path"], hit["abs_path"]) == ("n\\xe9.md", f"{notes}/n\\xe9.md")
    ws = Workspace(db, model="fake")
    service = KenningService(ws, hit_dict, watch=False)
    try:
        found = service.search("marmot", mode="lexical")["hits"]
        assert [h["abs_path"] for h in found] == [f"{notes}/n\\xe9.md"]
        for read in (service.read("n\\xe9.md", source="notes"), service.read(found[0]["abs_path"])):
            assert "marmot in the alps" in json.dumps(read, ensure_ascii=False)
    finally:
        service.close()
        ws.close()
    count("streams: undecodable roots shown escaped")


def test_what_is_shown_of_any_path_is_text_that_names_its_bytes():
    """The terminal's rule (core.controls.visible) and the app's and JSON's
    (core.fsnames.shown) never let a surrogate escape through; shown() is reversible."""
    from hypothesis import given
    from hypothesis import strategies as st

    from kenning.core.controls import visible
    from kenning.core.fsnames import filesystem_name, shown

    paths = st.binary(min_size=1, max_size=16).map(lambda b: "/" + os.fsdecode(b.replace(b"\0", b"_")))

    @given(paths)
    def check(path):
        for text in (visible(path), visible(path, one_line=True), shown(path)):
            assert not not_text(text)
        assert filesystem_name(shown(path)) == path or not not_text(path)
        assert shown(path) == path or not_text(path)
        if not_text(path):
            assert "\\x" in visible(path)

    check()


def test_a_dialog_name_is_matched_only_when_one_folder_fits(tmp_path):
    """core.fsnames.picked_path (the app's folder dialog drops undecodable bytes): the
    one folder that fits is taken, at any depth; two that fit are never guessed between."""
    from kenning.core.fsnames import picked_path

    base = os.fsencode(tmp_path)
    os.makedirs(base + b"/caf\xe9/d\xe9p\xff")
    assert os.fsencode(picked_path(f"{tmp_path}/caf/dp")) == base + b"/caf\xe9/d\xe9p\xff"
    assert picked_path(f"{tmp_path}/plain") == f"{tmp_path}/plain"  # absent: said not to exist later
    os.mkdir(base + b"/caf\xe8")
    assert picked_path(f"{tmp_path}/caf") == f"{tmp_path}/caf"
    os.mkdir(base + b"/caf")
    assert picked_path(f"{tmp_path}/caf") == f"{tmp_path}/caf"  # it exists: taken as it is


@pytest.mark.parametrize(("folder", "shown_name"), [(b"vault", "vault"), (b"v\xe9ult", "v%E9ult")])
def test_an_obsidian_vault_whose_names_are_not_utf8_gets_its_links(tmp_path, folder, shown_name):
    """The obsidian:// link percent-encodes the name's own bytes (quote() of the text
    failed on the undecodable byte: every `search --json` in such a vault was an error)."""
    vault = odd_path(tmp_path, folder)
    (vault / ".obsidian").mkdir()
    with open(os.fsencode(vault) + b"/n\xe9.md", "wb") as f:
        f.write(b"# N\n\nchinchilla notes\n")
    db = tmp_path / "home" / "k.db"
    cli(db, "sources", "add", str(vault))
    cli(db, "index", "--no-embed")
    rc, out, err = cli(db, "search", "chinchilla", "--mode", "lexical", "--json", "--explain")
    _clean(out + err)
    hit = json.loads(out.splitlines()[1])
    url = f"obsidian://open?vault={shown_name}&file=n%E9.md"
    assert rc == 0 and hit["obsidian_url"] == url, hit
    rc, out, err = cli(db, "search", "chinchilla", "--mode", "lexical", "--explain")
    assert rc == 0 and url in out, out + err
    count("streams: undecodable roots shown escaped")


def test_the_watcher_follows_a_root_that_is_another_folder_now(odd, tmp_path):
    """A disk mounted again (or a folder made anew at the root's path) is another folder:
    the watch on the old one heard nothing of it.  The watcher watches and reads it afresh."""
    from kenning.ingest.watch import Watcher

    db, folder = odd
    cli(db, "sources", "add", str(folder))
    cli(db, "index", "--no-embed")
    store, watch_store = open_store(db), open_store(db)
    stop = threading.Event()
    watcher = Watcher(watch_store, None, poll_seconds=0.2)
    thread = threading.Thread(target=watcher.run, args=(stop,), daemon=True)
    thread.start()
    try:
        assert watcher.ready.wait(20)
        raw = os.fsencode(folder)
        fresh = os.fsencode(tmp_path) + b"/fresh"
        os.mkdir(fresh)
        with open(fresh + b"/mounted.md", "wb") as f:
            f.write(b"# Mounted\n\nossifrage on the disk\n")
        os.rename(raw, os.fsencode(tmp_path) + b"/old")
        os.rename(fresh, raw)  # the same path, another folder
        assert _wait(lambda: _hits(store, "ossifrage") == [(SHOWN, "mounted.md")], 30)
        assert _wait(lambda: stored_paths(db) == ["mounted.md"], 30)  # the old folder's files are not here
        with open(raw + b"/later.md", "wb") as f:  # and the new folder is watched
            f.write(b"# Later\n\nlammergeier later\n")
        assert _wait(lambda: _hits(store, "lammergeier") == [(SHOWN, "later.md")], 30)
    finally:
        stop.set()
        thread.join(10)
        watch_store.close()
        store.close()
    count("watch data-loss: undecodable roots watched")
