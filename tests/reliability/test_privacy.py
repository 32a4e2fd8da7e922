"""Privacy: the default model never touches the network; the store and its companions
are user-only; nothing outside the chosen source roots is read.

These use the REAL default model (bundled, offline), so they take a few seconds.
"""

from __future__ import annotations

import json
import os
import socket
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from kenning.embedding import resolve_embedder
from kenning.ingest.indexer import Indexer
from kenning.ingest.sources import add_source
from kenning.search.engine import SearchEngine, SearchOptions
from kenning.storage import open_store
from reliability.helpers import count, note, write_files


@pytest.fixture(scope="module")
def default_embedder(tmp_path_factory):
    """One load of the real model for the in-process tests (it takes seconds)."""
    return resolve_embedder("default", tmp_path_factory.mktemp("models"))


def _corpus(root: Path) -> Path:
    return write_files(root, {f"n{i}.md": note(i) for i in range(6)})


@pytest.fixture
def no_network(monkeypatch):
    attempts: list[str] = []

    def refuse(name):
        def blocked(*args, **kwargs):
            attempts.append(f"{name}{args[1:2] or args[:1]}")
            raise OSError(f"network blocked by the test: {name}")

        return blocked

    for name in ("connect", "connect_ex", "sendto", "sendmsg"):
        monkeypatch.setattr(socket.socket, name, refuse(f"socket.{name}"))
    for name in ("create_connection", "getaddrinfo", "gethostbyname", "gethostbyname_ex"):
        monkeypatch.setattr(socket, name, refuse(name))
    return attempts


def test_index_and_search_with_default_model_open_no_connection(no_network, tmp_path):
    notes = _corpus(tmp_path / "notes")
    store = open_store(tmp_path / "home" / "k.db")
    add_source(store, notes)
    # Resolved and loaded with the network already blocked.
    embedder = resolve_embedder("default", tmp_path / "home" / "models")
    run = Indexer(store, lambda: embedder).run()
    assert not run.reports[0].errors
    assert store.vectors.count_pending() == 0
    result = SearchEngine(store, embedder).search("details about note", SearchOptions(mode="hybrid"))
    assert result.hits and "vector" in result.hits[0].breakdown.lists
    store.close()
    assert no_network == [], no_network


AUDIT_CHILD = textwrap.dedent(
    r"""
    import json, os, sys
    events = {"socket": [], "paths": []}
    def hook(event, args):
        if event.startswith("socket."):
            events["socket"].append([event, repr(args[1:] if event == "socket.bind" else args)[:200]])
        elif event in ("open", "os.scandir", "os.listdir", "os.walk", "shutil.copyfile", "os.symlink"):
            path = args[0]
            if isinstance(path, int):
                return
            events["paths"].append(os.path.abspath(os.fsdecode(path)))
    sys.addaudithook(hook)

    from kenning.embedding import resolve_embedder
    from kenning.ingest.indexer import Indexer
    from kenning.ingest.sources import add_source
    from kenning.search.engine import SearchEngine, SearchOptions
    from kenning.storage import open_store

    notes, home, out = sys.argv[1:4]
    store = open_store(os.path.join(home, "k.db"))
    add_source(store, notes)
    embedder = resolve_embedder("default", os.path.join(home, "models"))
    run = Indexer(store, lambda: embedder).run()
    events["errors"] = [e for r in run.reports for e in r.errors]
    events["chunks"] = store.chunks.count()
    hits = SearchEngine(store, embedder).search("details note").hits
    store.close()
    events["hits"] = len(hits)
    with open(out, "w") as f:
        json.dump(events, f)
    """
)


def test_audit_hooks_see_no_socket_and_no_read_outside_the_roots(tmp_path):
    """Audit hooks (which no library can bypass from Python) record every socket
    operation and every file opened or listed by a real index + search run."""
    area = tmp_path / "user"
    notes = _corpus(area / "notes")
    secret = write_files(area / "secret", {"s.md": "# secret\n", "deeper/t.md": "secret\n"})
    os.symlink(secret / "s.md", notes / "link.md")
    os.symlink(secret, notes / "linkdir")
    os.symlink("../secret/deeper/t.md", notes / "rel.md")
    home = area / "kenning-home"
    out = tmp_path / "events.json"
    script = tmp_path / "child.py"
    script.write_text(AUDIT_CHILD)
    proc = subprocess.run(
        [sys.executable, str(script), str(notes), str(home), str(out)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    events = json.loads(out.read_text())
    assert events["errors"] == [] and events["hits"] > 0, {k: events[k] for k in ("errors", "chunks", "hits")}
    # Importing urllib3 (pulled in by fastembed) probes IPv6 by binding a socket to
    # ::1 port 0: local, no traffic.  Anything that reaches out is a failure.
    reaching = [
        e
        for e in events["socket"]
        if e[0] not in ("socket.__new__", "socket.bind")
        or (e[0] == "socket.bind" and "'::1', 0" not in e[1] and "'127.0.0.1', 0" not in e[1])
    ]
    assert reaching == [], reaching[:10]
    # Everything the run touched in the user's area is in the source root or Kenning's home.
    allowed = (str(notes) + os.sep, str(home) + os.sep, str(home))
    strays = sorted(
        {p for p in events["paths"] if p.startswith(str(area)) and not p.startswith(allowed) and p != str(notes)}
    )
    assert strays == [], strays
    assert any(p.startswith(str(notes)) for p in events["paths"])


def _mode(path: Path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def test_store_and_companions_are_user_only_even_with_umask_0(tmp_path, monkeypatch, default_embedder):
    home = tmp_path / "fresh-home"
    monkeypatch.setenv("KENNING_HOME", str(home))
    old = os.umask(0)
    try:
        # The model cache first, as an app that loads the model before the store would.
        from kenning.embedding.models import bundled_files, prepare_bundled_model_dir
        from kenning.storage.paths import default_store_path, model_cache_dir

        prepare_bundled_model_dir(bundled_files(), model_cache_dir())
        embedder = default_embedder
        db = default_store_path()
        store = open_store(db)
        add_source(store, _corpus(tmp_path / "notes"))
        Indexer(store, lambda: embedder).run()
        # While a connection is open the WAL and its index exist: check them too.
        store.settings.set("probe", "1")
        companions = [Path(str(db) + s) for s in ("-wal", "-shm", ".lock", ".sources.json")]
        found = {p.name: _mode(p) for p in companions if p.exists()}
        store.close()
    finally:
        os.umask(old)
    assert _mode(home) == 0o700, oct(_mode(home))
    assert _mode(db) == 0o600
    assert set(found) >= {"kenning.db.lock", "kenning.db.sources.json"}
    assert all(mode == 0o600 for mode in found.values()), {k: oct(v) for k, v in found.items()}


def test_prepared_model_folders_are_user_only_with_umask_0(tmp_path, monkeypatch):
    """#24 item 17: KENNING_HOME/models/bundled/<version> was created 0777 under umask 000."""
    from kenning.embedding.models import bundled_files, prepare_bundled_model_dir
    from kenning.storage.paths import model_cache_dir

    home = tmp_path / "fresh-home"
    monkeypatch.setenv("KENNING_HOME", str(home))
    old = os.umask(0)
    try:
        target = prepare_bundled_model_dir(bundled_files(), model_cache_dir())
    finally:
        os.umask(old)
    folders = [home, *(p for p in home.rglob("*") if p.is_dir() and not p.is_symlink())]
    assert target in folders and len(folders) >= 4  # home, models, bundled, the version
    assert {str(p.relative_to(home)): oct(_mode(p)) for p in folders if _mode(p) != 0o700} == {}
    files = [p for p in home.rglob("*") if p.is_file() and not p.is_symlink()]
    assert files and {p.name: oct(_mode(p)) for p in files if _mode(p) != 0o600} == {}
    count("security: private modes checked", len(folders) + len(files))
