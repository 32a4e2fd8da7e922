"""Kenning's folders are 0700 and its files 0600 whatever the umask (issue #13, item 4,
and siblings: KENNING_HOME, models/, the store and its -wal/-shm, the sources backup,
the lock file, a new --store folder; files left wider by an older version are tightened).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from kenning.storage import open_store
from kenning.storage.lock import indexing_lock
from reliability.helpers import cli, count, write_files

pytestmark = pytest.mark.skipif(os.name != "posix", reason="POSIX modes")


def _mode(path: Path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


@pytest.fixture(params=[0o002, 0o000, 0o022])
def umask(request):
    old = os.umask(request.param)
    yield request.param
    os.umask(old)


def test_everything_kenning_creates_is_user_only(tmp_path, monkeypatch, umask):
    home = tmp_path / "fresh-home" / "kenning"
    monkeypatch.setenv("KENNING_HOME", str(home))
    notes = write_files(tmp_path / "notes", {"a.md": "# A\n\nalpha\n"})
    db = tmp_path / "elsewhere" / "new" / "k.db"  # --store somewhere Kenning creates
    assert cli(db, "sources", "add", str(notes))[0] == 0
    assert cli(db, "index")[0] == 0
    assert cli(db, "models")[0] == 0
    for folder in (home, home / "models", db.parent, db.parent.parent):
        assert _mode(folder) == 0o700, (folder, oct(_mode(folder)))
    store = open_store(db)
    try:
        with store.atomic():
            store.settings.set("k", "v")
        with indexing_lock(db):
            companions = [db, Path(f"{db}-wal"), Path(f"{db}-shm"), Path(f"{db}.sources.json"), Path(f"{db}.lock")]
            for f in companions:
                assert f.exists(), f
                assert _mode(f) == 0o600, (f, oct(_mode(f)))
    finally:
        store.close()
    count("security: private modes checked", 9)


def test_files_left_open_by_an_older_version_are_tightened(tmp_path, monkeypatch):
    home = tmp_path / "home"
    (home / "models").mkdir(parents=True)
    os.chmod(home, 0o777)
    os.chmod(home / "models", 0o775)
    monkeypatch.setenv("KENNING_HOME", str(home))
    db = home / "kenning.db"
    lock, backup_tmp = Path(f"{db}.lock"), Path(f"{db}.sources.tmp")
    for f in (lock, backup_tmp):
        f.write_text("")
        os.chmod(f, 0o666)
    notes = write_files(tmp_path / "notes", {"a.md": "alpha\n"})
    assert cli(db, "sources", "add", str(notes))[0] == 0
    assert cli(db, "index")[0] == 0
    assert _mode(home) == 0o700
    assert _mode(home / "models") == 0o700
    assert _mode(lock) == 0o600
    assert _mode(Path(f"{db}.sources.json")) == 0o600


def test_a_folder_the_user_chose_is_left_alone(tmp_path, umask):
    chosen = tmp_path / "Documents"
    chosen.mkdir()
    os.chmod(chosen, 0o755)
    db = chosen / "k.db"
    assert cli(db, "status")[0] == 0
    assert _mode(chosen) == 0o755
    assert _mode(db) == 0o600
