"""Vectors: the embedding cache, the sqlite-vec table, and loading them for search.

Source of truth is the ``embeddings`` cache keyed by (fingerprint, text sha256);
``chunk_vectors`` (sqlite-vec vec0, cosine) holds one row per chunk whose vector is
current.  ``chunks.vector_fp`` says which chunks have one, so "pending" is a cheap
indexed query and a killed embedder resumes exactly where it stopped.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from kenning.core.filters import ChunkFilter
from kenning.storage.batching import in_batches
from kenning.storage.connection import Store
from kenning.storage.filtering import JOIN_DOCUMENTS, filter_condition
from kenning.storage.settings import get_setting, set_setting

if TYPE_CHECKING:  # imported where vectors are read: `kenning status` and lexical search never load numpy
    import numpy as np

FINGERPRINT_KEY = "vector_fingerprint"
DIM_KEY = "vector_dim"
GENERATION_KEY = "vector_generation"  # bumped on every vector write, so readers can reload


def _vec_table_exists(store: Store) -> bool:
    return bool(store.scalar("SELECT 1 FROM sqlite_master WHERE name = 'chunk_vectors'"))


def prepare(store: Store, fingerprint: str, dim: int) -> None:
    """Make the vector tables match the embedder; a new model marks every vector stale."""
    with store.atomic():
        if get_setting(store, FINGERPRINT_KEY) != fingerprint:
            if store.vec_available and _vec_table_exists(store):
                store.execute("DROP TABLE chunk_vectors")
            store.execute("UPDATE chunks SET vector_fp = NULL WHERE vector_fp IS NOT NULL")
            set_setting(store, FINGERPRINT_KEY, fingerprint)
            set_setting(store, DIM_KEY, str(dim))
            _bump_generation(store)
        if store.vec_available:
            store.execute(
                "CREATE VIRTUAL TABLE IF NOT EXISTS chunk_vectors USING vec0("
                f"chunk_id INTEGER PRIMARY KEY, embedding float[{int(dim)}] distance_metric=cosine)"
            )
            _purge_tombstones(store)
            _backfill_from_cache(store, fingerprint)


def _purge_tombstones(store: Store) -> None:
    store.execute("DELETE FROM chunk_vectors WHERE chunk_id IN (SELECT chunk_id FROM vector_tombstones)")
    store.execute("DELETE FROM vector_tombstones")


def _backfill_from_cache(store: Store, fingerprint: str) -> None:
    """Vectors embedded while sqlite-vec was unavailable reach the vec0 table now."""
    store.execute(
        "INSERT INTO chunk_vectors (chunk_id, embedding)"
        " SELECT c.id, e.vector FROM chunks c JOIN embeddings e"
        "   ON e.fingerprint = ? AND e.input_sha = c.input_sha"
        " WHERE c.vector_fp = ? AND c.id NOT IN (SELECT chunk_id FROM chunk_vectors)",
        (fingerprint, fingerprint),
    )


def count_pending(store: Store) -> int:
    return store.scalar("SELECT count(*) FROM chunks WHERE vector_fp IS NULL") or 0


@dataclass(frozen=True)
class PendingChunk:
    """A chunk lacking a current vector: what the model reads for it, and its cache key."""

    chunk_id: int
    title: str
    text: str
    document_kind: str
    rel_path: str
    input_sha: str
    source_id: int = 0  # for the embedding queue's runs (storage/queue.py)


def pending_chunks(store: Store, after_id: int, limit: int) -> list[PendingChunk]:
    """Chunks lacking a vector, by id, from after_id on."""
    return store.fetch(
        PendingChunk,
        "SELECT c.id AS chunk_id, c.title, c.text, d.kind AS document_kind, d.rel_path, c.input_sha FROM chunks c"
        " JOIN documents d ON d.id = c.document_id"
        " WHERE c.vector_fp IS NULL AND c.id > ? ORDER BY c.id LIMIT ?",
        (after_id, limit),
    )


def cached_vectors(store: Store, fingerprint: str, shas: list[str]) -> dict[str, bytes]:
    found: dict[str, bytes] = {}
    for part, marks in in_batches(shas):
        for sha, blob in store.execute(
            f"SELECT input_sha, vector FROM embeddings WHERE fingerprint = ? AND input_sha IN ({marks})",
            (fingerprint, *part),
        ):
            found[sha] = blob
    return found


def write_vectors(store: Store, fingerprint: str, items: list[tuple[int, str, bytes]]) -> None:
    """Store (chunk id, text sha, float32 blob) in one transaction.

    A chunk deleted meanwhile (re-indexed by another run) is simply not updated.
    """
    with store.atomic():
        store.executemany(
            "INSERT OR IGNORE INTO embeddings (fingerprint, input_sha, vector) VALUES (?, ?, ?)",
            [(fingerprint, sha, blob) for _, sha, blob in items],
        )
        live = _existing_chunk_ids(store, [cid for cid, _, _ in items])
        rows = [(cid, blob) for cid, _, blob in items if cid in live]
        if store.vec_available:
            store.executemany("DELETE FROM chunk_vectors WHERE chunk_id = ?", [(c,) for c, _ in rows])
            store.executemany("INSERT INTO chunk_vectors (chunk_id, embedding) VALUES (?, ?)", rows)
        store.executemany("UPDATE chunks SET vector_fp = ? WHERE id = ?", [(fingerprint, c) for c, _ in rows])
        _bump_generation(store)


def _bump_generation(store: Store) -> None:
    store.execute(
        "INSERT INTO settings (key, value) VALUES (?, '1') ON CONFLICT(key)"
        " DO UPDATE SET value = CAST(value AS INTEGER) + 1",
        (GENERATION_KEY,),
    )


def _existing_chunk_ids(store: Store, ids: list[int]) -> set[int]:
    live: set[int] = set()
    for part, marks in in_batches(ids):
        live.update(r[0] for r in store.execute(f"SELECT id FROM chunks WHERE id IN ({marks})", part))
    return live


def vectors_for_chunks(store: Store, fingerprint: str, ids: list[int]) -> dict[int, np.ndarray]:
    """Current vectors of the given chunks (for the cosine every hit reports)."""
    import numpy as np

    out: dict[int, np.ndarray] = {}
    for part, marks in in_batches(ids):
        rows = store.execute(
            "SELECT c.id, e.vector FROM chunks c JOIN embeddings e"
            "  ON e.fingerprint = c.vector_fp AND e.input_sha = c.input_sha"
            f" WHERE c.vector_fp = ? AND c.id IN ({marks})",
            (fingerprint, *part),
        )
        for cid, blob in rows:
            out[cid] = np.frombuffer(blob, dtype=np.float32)
    return out


def load_all(store: Store, fingerprint: str) -> tuple[np.ndarray, np.ndarray]:
    """(chunk ids int64, matrix float32 n×dim) of every current vector."""
    if store.vec_available and _vec_table_exists(store):
        rows = store.execute(
            "SELECT v.chunk_id, v.embedding FROM chunk_vectors v"
            " JOIN chunks c ON c.id = v.chunk_id WHERE c.vector_fp = ?",
            (fingerprint,),
        )
    else:
        rows = store.execute(
            "SELECT c.id, e.vector FROM chunks c JOIN embeddings e"
            "  ON e.fingerprint = c.vector_fp AND e.input_sha = c.input_sha WHERE c.vector_fp = ?",
            (fingerprint,),
        )
    return _to_arrays(rows, int(get_setting(store, DIM_KEY) or 0))


def vector_pages(store: Store, fingerprint: str, page_size: int = 20_000) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Every current vector as (chunk ids int64 ascending, float32 matrix) pages, so a
    reader can quantise them without ever holding all of them at full precision."""
    after = 0
    while True:
        if store.vec_available and _vec_table_exists(store):
            rows = store.execute(
                "SELECT c.id, v.embedding FROM chunks c JOIN chunk_vectors v ON v.chunk_id = c.id"
                " WHERE c.vector_fp = ? AND c.id > ? ORDER BY c.id LIMIT ?",
                (fingerprint, after, page_size),
            )
        else:
            rows = store.execute(
                "SELECT c.id, e.vector FROM chunks c JOIN embeddings e"
                "  ON e.fingerprint = c.vector_fp AND e.input_sha = c.input_sha"
                " WHERE c.vector_fp = ? AND c.id > ? ORDER BY c.id LIMIT ?",
                (fingerprint, after, page_size),
            )
        if not rows:
            return
        after = rows[-1][0]
        yield _to_arrays(rows, int(get_setting(store, DIM_KEY) or 0))


def newest_vectors(
    store: Store, fingerprint: str, chunk_filter: ChunkFilter, cap: int
) -> tuple[np.ndarray, np.ndarray]:
    """(ids, matrix) of the current vectors of at most `cap` allowed chunks, most recently
    dated documents first, read from the embedding cache (works without sqlite-vec)."""
    condition = filter_condition(chunk_filter)
    rows = store.execute(
        f"SELECT c.id, e.vector FROM chunks c {JOIN_DOCUMENTS}"
        " JOIN embeddings e ON e.fingerprint = c.vector_fp AND e.input_sha = c.input_sha"
        f" WHERE c.vector_fp = ? AND {condition.sql}"
        " ORDER BY coalesce(d.updated_at, d.mtime) DESC, c.id LIMIT ?",
        (fingerprint, *condition.params, cap),
    )
    return _to_arrays(rows, int(get_setting(store, DIM_KEY) or 0))


def generation(store: Store) -> str:
    """Changes on every vector write: readers holding vectors in memory reload on a change."""
    return get_setting(store, GENERATION_KEY) or "0"


def _to_arrays(rows: list[tuple[int, bytes]], dim: int) -> tuple[np.ndarray, np.ndarray]:
    import numpy as np

    ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
    if not rows:
        return ids, np.zeros((0, dim), dtype=np.float32)
    matrix = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32).reshape(len(rows), -1)
    return ids, matrix


def has_vectors(store: Store, fingerprint: str) -> bool:
    return bool(store.scalar("SELECT 1 FROM chunks WHERE vector_fp = ? LIMIT 1", (fingerprint,)))


def count_vectors(store: Store, fingerprint: str) -> int:
    return store.scalar("SELECT count(*) FROM chunks WHERE vector_fp = ?", (fingerprint,)) or 0


def collect_unused_embeddings(store: Store) -> int:
    """Drop cached vectors whose text no longer appears in any chunk."""
    with store.atomic():
        store.execute("DELETE FROM embeddings WHERE input_sha NOT IN (SELECT input_sha FROM chunks)")
        return store.conn.changes()
