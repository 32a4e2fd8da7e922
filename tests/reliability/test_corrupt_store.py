"""A damaged, truncated or too-new store: a clear message and a way out, no traceback.

Every command is run through `kenning.cli.main.main` in-process (an exception
escaping it is exactly the traceback a user would see), plus once through the real
`kenning` entry point in a subprocess.  Then `kenning rebuild` must move the damaged
file aside untouched, re-add the sources from `<store>.sources.json`, and a fresh
`kenning index` must give back the same documents and chunks as before the damage.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import os
import random
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from kenning.cli.main import main
from kenning.storage import open_store
from reliability.helpers import count, note, snapshot, write_files

COMMANDS = (
    ["status"],
    ["search", "w5", "note"],
    ["sources", "list"],
    ["index"],
    ["search", "--mode", "lexical", "details"],
)


def cli(db: Path, *argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main(["--store", str(db), "--model", "fake", *argv])
    return rc, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def healthy(tmp_path_factory):
    base = tmp_path_factory.mktemp("corrupt")
    notes = write_files(base / "notes", {f"n{i:03}.md": note(i, 150) for i in range(80)})
    db = base / "good" / "k.db"
    assert cli(db, "sources", "add", str(notes))[0] == 0
    assert cli(db, "index")[0] == 0
    store = open_store(db)
    before = snapshot(store)
    store.close()  # last connection: checkpoints, the WAL is gone
    assert not Path(str(db) + "-wal").exists()
    return {"db": db, "before": before, "base": base}


def _truncate_half(path: Path) -> None:
    os.truncate(path, path.stat().st_size // 2)


def _truncate_to_one_page(path: Path) -> None:
    os.truncate(path, 4096)


def _zero_header(path: Path) -> None:
    with open(path, "r+b") as f:
        f.write(b"\0" * 100)


def _garbage(path: Path) -> None:
    path.write_bytes(b"this is not a database at all\n" * 500)


def _scribble(seed: int):
    def damage(path: Path) -> None:
        size = path.stat().st_size
        rng = random.Random(seed)
        with open(path, "r+b") as f:
            for _ in range(30):
                f.seek(rng.randrange(4096, size - 512))
                f.write(rng.randbytes(512))

    damage.__name__ = f"scribble{seed}"
    return damage


def _newer_schema(path: Path) -> None:
    store = open_store(path)
    with store.atomic():
        store.execute("INSERT INTO migrations VALUES ('m999_from_the_future', 0)")
    store.close()


def _garbage_wal(path: Path) -> None:
    # A WAL that fails its checksums is ignored by SQLite: the store still opens.
    Path(str(path) + "-wal").write_bytes(os.urandom(64 * 1024))


DAMAGES = [
    _truncate_half,
    _truncate_to_one_page,
    _zero_header,
    _garbage,
    _newer_schema,
    _garbage_wal,
    *(_scribble(seed) for seed in range(4)),
]


def _assert_no_traceback_and_clear(rc: int, err: str, what: str) -> None:
    assert "Traceback" not in err, what
    assert "database is locked" not in err, what
    if rc != 0:
        assert err.startswith("kenning: "), (what, err)
        assert "kenning rebuild" in err or "Upgrade Kenning" in err, (what, err)


@pytest.mark.parametrize("damage", DAMAGES, ids=lambda d: d.__name__)
def test_damaged_store_gets_clear_message_then_rebuild_restores(healthy, tmp_path, damage):
    db = tmp_path / "k.db"
    shutil.copy2(healthy["db"], db)
    shutil.copy2(str(healthy["db"]) + ".sources.json", str(db) + ".sources.json")
    damage(db)
    failures = 0
    for argv in COMMANDS:
        rc, _, err = cli(db, *argv)  # must not raise
        _assert_no_traceback_and_clear(rc, err, f"{damage.__name__}: kenning {' '.join(argv)}")
        failures += rc != 0
        count("corrupt store: commands answered without a traceback")
    if damage in (_truncate_half, _truncate_to_one_page, _zero_header, _garbage, _newer_schema):
        assert failures == len(COMMANDS), "this damage must be noticed by every command"

    # Commands that could work (a bad WAL is ignored) may have written: compare
    # the file as rebuild finds it.
    damaged_sha = hashlib.sha256(db.read_bytes()).hexdigest()
    rc, out, err = cli(db, "rebuild")
    assert rc == 0, err
    aside = [p for p in tmp_path.iterdir() if ".damaged-" in p.name and not p.name.endswith(("-wal", "-shm", ".json"))]
    assert len(aside) == 1, list(tmp_path.iterdir())
    assert hashlib.sha256(aside[0].read_bytes()).hexdigest() == damaged_sha, "damaged file altered"
    assert "Re-added 1 source." in out
    rc, _, err = cli(db, "index")
    assert rc == 0, err
    store = open_store(db)
    after = snapshot(store)
    store.close()
    for key in ("documents", "chunks", "refs", "skipped", "pending"):
        assert after[key] == healthy["before"][key], key
    count("corrupt store: damaged stores rebuilt with nothing lost")


def test_store_path_that_cannot_be_a_store(tmp_path):
    (tmp_path / "adir.db").mkdir()
    (tmp_path / "afile").write_text("x")
    for db in (tmp_path / "adir.db", tmp_path / "afile" / "k.db"):
        for argv in COMMANDS[:3]:
            rc, _, err = cli(db, *argv)
            assert rc == 2 and err.startswith("kenning: ") and "Traceback" not in err, err


def test_real_entry_point_prints_no_traceback(healthy, tmp_path):
    db = tmp_path / "k.db"
    shutil.copy2(healthy["db"], db)
    _zero_header(db)
    proc = subprocess.run(
        [sys.executable, "-m", "kenning.cli.main", "--store", str(db), "status"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert "is damaged" in proc.stderr and "kenning rebuild" in proc.stderr
