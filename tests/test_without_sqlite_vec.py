"""sqlite-vec is gone (issue #22): it was loaded on every connection and did no work.

Nothing loads it, nothing says it, and a store made before issue #15 (its vectors in a
vec0 table) is converted and cleaned without it."""

from __future__ import annotations

import subprocess
import sys

import apsw
import pytest

from kenning.storage import migrations, open_store
from kenning_testing import CountingEmbedder, index_folder, load_sqlite_vec, write_files


def test_a_connection_loads_no_extension_and_meaning_search_scans_every_vector(tmp_path):
    notes = write_files(tmp_path / "notes", {f"n{i}.md": f"# Note {i}\n\nkestrel number {i}\n" for i in range(40)})
    store = open_store(tmp_path / "k.db")
    embedder = CountingEmbedder()
    index_folder(store, notes, embedder)
    with pytest.raises(apsw.SQLError, match="no such function"):
        store.execute("SELECT vec_version()")
    found = store.vectors.nearest(embedder.fingerprint, embedder.embed_query("kestrel"), _all(), 60)
    assert len(found.ids) == store.chunks.count()  # every vector a candidate: no capped scan
    store.close()


def _all():
    from kenning.core.filters import ChunkFilter

    return ChunkFilter(test_files="included")


def test_kenning_is_not_built_to_need_it(tmp_path):
    """Not a dependency, not in the bundle, no word of it in what users read from Kenning."""
    from pathlib import Path

    import tomllib

    root = Path(__file__).parent.parent
    project = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert not [d for d in project["dependencies"] if d.lower().startswith("sqlite-vec")]
    said = [p for p in (root / "app").rglob("*.py") if "sqlite-vec" in p.read_text(encoding="utf-8").lower()]
    # Only the places that say why it is not used, and the migration that removes its table.
    assert {p.name for p in said} <= {"connection.py", "vector_scan.py", "vectors.py", "migrations.py"}, said
    readme = (root / "README.md").read_text(encoding="utf-8").lower()
    assert "sqlite-vec" not in readme and "vector index: unavailable" not in readme  # nothing to reinstall
    code = "import kenning.cli.main, kenning.storage, sys; print('sqlite_vec' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_a_vec0_table_left_by_m006_is_removed_without_sqlite_vec(tmp_path, monkeypatch):
    """m006 ran without sqlite-vec (it could not drop the table then): m011 drops it now."""
    db = tmp_path / "old.db"
    older = migrations.MIGRATIONS[: migrations.MIGRATIONS.index(migrations.m011_without_sqlite_vec)]
    # Today's indexer (below) writes documents' openings too: their column, independent of m011.
    monkeypatch.setattr(migrations, "MIGRATIONS", [*older, migrations.m015_document_openings])
    store = open_store(db)
    index_folder(store, write_files(tmp_path / "notes", {"a.md": "# A\n\nalpha\n"}), CountingEmbedder())
    load_sqlite_vec(store.conn)
    store.execute("CREATE VIRTUAL TABLE chunk_vectors USING vec0(chunk_id INTEGER PRIMARY KEY, embedding float[4])")
    store.execute("INSERT INTO chunk_vectors (chunk_id, embedding) VALUES (1, ?)", (b"\0" * 16,))
    store.close()
    monkeypatch.undo()
    store = open_store(db)  # applies m011, without the module
    names = {r[0] for r in store.execute("SELECT name FROM sqlite_master")}
    assert not {n for n in names if n.startswith("chunk_vectors")} and "vector_tombstones" not in names
    assert store.scalar("PRAGMA integrity_check") == "ok"
    chunks = store.chunks.count()
    store.documents.delete([d.id for d in store.documents.at("a.md")])  # the delete trigger needs no tombstones
    assert store.chunks.count() == chunks - 1
    store.close()
