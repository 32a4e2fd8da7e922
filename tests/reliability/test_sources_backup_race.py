"""The sources backup rewritten by several connections at once (the app's threads open
the store while a source is added: each open may rewrite the backup, sync_backup)."""

from __future__ import annotations

import json
import threading
from pathlib import Path

from kenning.ingest.sources import add_source
from kenning.storage import open_store
from kenning.storage.sources import backup_path, sync_backup


def test_connections_rewriting_the_backup_together_never_fail(tmp_path):
    db = tmp_path / "kenning.db"
    notes = tmp_path / "notes"
    notes.mkdir()
    setup = open_store(db)
    add_source(setup, notes)
    setup.close()
    errors: list[BaseException] = []
    start = threading.Barrier(4)

    def rewrite() -> None:
        store = open_store(db)
        try:
            start.wait(10)
            for _ in range(200):
                backup_path(store).unlink(missing_ok=True)  # so each sync must write it again
                sync_backup(store)
        except BaseException as exc:  # the assertion below names it
            errors.append(exc)
        finally:
            store.close()

    threads = [threading.Thread(target=rewrite) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert errors == []
    store = open_store(db)
    try:
        sync_backup(store)
        saved = json.loads(backup_path(store).read_text(encoding="utf-8"))
    finally:
        store.close()
    assert [s["root"] for s in saved] == [str(notes)]
    assert not [p.name for p in Path(tmp_path).iterdir() if p.name.endswith(".tmp")]
