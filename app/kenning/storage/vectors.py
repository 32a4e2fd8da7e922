"""Vectors: the embedding cache, each chunk's sign code, and loading them for search.

Each vector is stored once, as float16 (768 bytes at 384 dimensions), in ``embeddings``, keyed by
(fingerprint, sha256 of the text the model read): unchanged text is never embedded
twice, whatever file it moves to.  ``vector_codes`` holds one row per chunk whose
vector is current: the vector's sign bits (48 bytes at 384 dimensions), which the
semantic scan keeps in memory (search/vector.py) before it rescores the best
candidates from ``embeddings``.  ``chunks.vector_fp`` says which chunks have a
current vector, so "pending" is a cheap indexed query and a killed embedder resumes
exactly where it stopped.  (Stores made before issue #15 also kept a float32 copy
in a sqlite-vec table; migration m006 turned it into codes, and m011 removes what is
left of that table, see migrations.py.)

Why float16: the vectors are unit length, so each coordinate keeps 3 significant
digits and a cosine moves by ~1e-4, far below what separates two neighbours in the
rescoring; it halves the store's largest table (m007).  The functions here take and
give float32, so nothing outside this module knows the stored form.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence

from kenning import TYPE_CHECKING
from kenning.storage.api import PendingChunk, PendingOpening
from kenning.storage.batching import in_batches
from kenning.storage.connection import Store
from kenning.storage.damaged import skipped_row
from kenning.storage.settings import get_setting, set_setting

if TYPE_CHECKING:  # imported where vectors are read: `kenning status` and lexical search never load numpy
    from typing import Any

    import numpy as np


FINGERPRINT_KEY = "vector_fingerprint"
DIM_KEY = "vector_dim"
GENERATION_KEY = "vector_generation"  # bumped on every vector write, so readers can reload


STORED_DTYPE = "float16"


def pack(vector_blob: bytes) -> bytes:
    """A float32 vector (bytes) in its stored form."""
    import numpy as np

    return np.frombuffer(vector_blob, dtype=np.float32).astype(STORED_DTYPE).tobytes()


def unpack(stored: bytes) -> np.ndarray:
    """A stored vector as float32."""
    import numpy as np

    return np.frombuffer(stored, dtype=STORED_DTYPE).astype(np.float32)


def sign_bits(vectors: np.ndarray) -> np.ndarray:
    """The code stored for a vector (and computed for a query): one bit per dimension,
    set where the coordinate is positive, packed 8 to a byte (numpy's packbits order)."""
    import numpy as np

    return np.packbits(np.asarray(vectors) > 0, axis=-1)


def prepare(store: Store, fingerprint: str, dim: int) -> None:
    """Make the vector tables match the embedder; a new model marks every vector stale."""
    with store.atomic():
        if get_setting(store, FINGERPRINT_KEY) != fingerprint:
            store.execute("DELETE FROM vector_codes")
            store.execute("UPDATE chunks SET vector_fp = NULL WHERE vector_fp IS NOT NULL")
            set_setting(store, FINGERPRINT_KEY, fingerprint)
            set_setting(store, DIM_KEY, str(dim))
            _bump_generation(store)


def count_pending(store: Store) -> int:
    return store.scalar("SELECT count(*) FROM chunks WHERE vector_fp IS NULL") or 0


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
    """sha -> float32 vector (bytes) of the given texts the cache holds."""
    found: dict[str, bytes] = {}
    for part, marks in in_batches(shas):
        for sha, blob in store.execute(
            f"SELECT input_sha, vector FROM embeddings WHERE fingerprint = ? AND input_sha IN ({marks})",
            (fingerprint, *part),
        ):
            found[sha] = unpack(blob).tobytes()
    return found


def write_vectors(store: Store, fingerprint: str, items: list[tuple[int, str, bytes]]) -> None:
    """Store (chunk id, text sha, float32 blob) in one transaction.

    A chunk deleted meanwhile (re-indexed by another run) is simply not updated.
    """
    with store.atomic():
        store.executemany(
            "INSERT OR IGNORE INTO embeddings (fingerprint, input_sha, vector) VALUES (?, ?, ?)",
            [(fingerprint, sha, pack(blob)) for _, sha, blob in items],
        )
        live = _existing_chunk_ids(store, [cid for cid, _, _ in items])
        # Under the write lock, so generations follow the order writes commit in: a
        # reader that has every code up to generation g reads what came after by g.
        written = _bump_generation(store)
        rows = [(cid, _code_of(blob), written) for cid, _, blob in items if cid in live]
        store.executemany("INSERT OR REPLACE INTO vector_codes (chunk_id, code, generation) VALUES (?, ?, ?)", rows)
        store.executemany("UPDATE chunks SET vector_fp = ? WHERE id = ?", [(fingerprint, c) for c, _, _ in rows])


def _code_of(blob: bytes) -> bytes:
    import numpy as np

    return sign_bits(np.frombuffer(blob, dtype=np.float32)).tobytes()


def _bump_generation(store: Store) -> int:
    """The next vector generation (called inside the writing transaction)."""
    store.execute(
        "INSERT INTO settings (key, value) VALUES (?, '1') ON CONFLICT(key)"
        " DO UPDATE SET value = CAST(value AS INTEGER) + 1",
        (GENERATION_KEY,),
    )
    return int(store.scalar("SELECT value FROM settings WHERE key = ?", (GENERATION_KEY,)))


def _existing_chunk_ids(store: Store, ids: list[int]) -> set[int]:
    live: set[int] = set()
    for part, marks in in_batches(ids):
        live.update(r[0] for r in store.execute(f"SELECT id FROM chunks WHERE id IN ({marks})", part))
    return live


def vectors_for_chunks(store: Store, fingerprint: str, ids: list[int]) -> dict[int, np.ndarray]:
    """Current vectors of the given chunks (the cosine every hit reports, related chunks)."""
    found, matrix = matrix_for_chunks(store, fingerprint, ids)
    return dict(zip(found, matrix))


def matrix_for_chunks(store: Store, fingerprint: str, ids: list[int]) -> tuple[list[int], np.ndarray]:
    """(chunk ids, their current vectors as float32 rows) of the given chunks, in the order
    read: what the vector scan rescores, without a dictionary and an array per vector.

    CROSS JOIN fixes the join order (SQLite's documented hint): chunks by id first, then
    one cache row each.  Left to choose, the planner scanned every cached vector of the
    fingerprint instead: a minute per query at 100k chunks."""
    return _checked_rows(
        store,
        fingerprint,
        ids,
        "SELECT c.id, e.vector FROM chunks c CROSS JOIN embeddings e"
        "  ON e.fingerprint = c.vector_fp AND e.input_sha = c.input_sha"
        " WHERE c.vector_fp = ? AND c.id IN ({marks})",
    )


def _checked_by_chunk(store: Store, fingerprint: str, ids: list[int], select: str) -> dict[int, np.ndarray]:
    """chunk id -> vector from `select` (see _checked_rows), the damaged vectors left out."""
    found, matrix = _checked_rows(store, fingerprint, ids, select)
    return dict(zip(found, matrix))


def _checked_rows(store: Store, fingerprint: str, ids: list[int], select: str) -> tuple[list[int], np.ndarray]:
    """(chunk ids, float32 rows) from `select` (chunk id, vector blob rows; its one
    parameter the fingerprint, then `{marks}` for a batch of ids), the damaged vectors
    left out.  The blobs are decoded together: one by one, the arrays and checks cost
    2 ms of a hybrid search's 400-odd vectors at 100k chunks."""
    import numpy as np

    width = int(get_setting(store, DIM_KEY) or 0) * 2  # float16 bytes
    found: list[int] = []
    blobs: list[bytes] = []
    for part, marks in in_batches(ids):
        for cid, blob in store.execute(select.format(marks=marks), (fingerprint, *part)):
            width = width or (len(blob) if isinstance(blob, bytes) else 0)  # no dimension recorded: the first says
            if _well_formed(blob, width):
                found.append(cid)
                blobs.append(blob)
    if not blobs:
        return [], np.zeros((0, width // 2), dtype=np.float32)
    matrix = np.frombuffer(b"".join(blobs), dtype=STORED_DTYPE).reshape(len(blobs), -1).astype(np.float32)
    finite = np.isfinite(matrix).all(axis=1)
    if finite.all():
        return found, matrix
    skipped_row("chunk vector", "NaN or infinite coordinates")
    return [found[int(row)] for row in np.flatnonzero(finite)], matrix[finite]


def _well_formed(blob: object, width: int) -> bool:
    """Whether a stored vector is a blob of the dimension's bytes (else it is skipped as damaged)."""
    if isinstance(blob, bytes) and len(blob) == width:
        return True
    skipped_row("chunk vector", f"{len(blob) if isinstance(blob, bytes) else type(blob).__name__} bytes, not {width}")
    return False


def load_all(store: Store, fingerprint: str) -> tuple[np.ndarray, np.ndarray]:
    """(chunk ids int64, matrix float32 n×dim) of every current vector (benchmarks, small stores)."""
    rows = store.execute(
        "SELECT c.id, e.vector FROM chunks c CROSS JOIN embeddings e"
        "  ON e.fingerprint = c.vector_fp AND e.input_sha = c.input_sha WHERE c.vector_fp = ? ORDER BY c.id",
        (fingerprint,),
    )
    return _to_arrays(rows, int(get_setting(store, DIM_KEY) or 0))


def code_pages(
    store: Store, fingerprint: str, page_size: int = 50_000, *, since: int = 0
) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """The sign code of every current chunk written after vector generation `since`
    (0: every one), as (chunk ids int64 ascending, uint8 rows) pages.

    A code row exists exactly for the chunks whose vector is current under the store's
    fingerprint: write_vectors writes it with chunks.vector_fp in one transaction,
    prepare deletes them all when the model changes, and a chunk is never rewritten (new
    text is a new chunk; its old row and code go together).  So for that fingerprint the
    codes are read alone, without joining a million chunk rows (0.97 → 0.58 s at 1M, what
    a command-line hybrid search waits for); another fingerprint has no current code."""
    if get_setting(store, FINGERPRINT_KEY) != fingerprint:
        return
    width = (int(get_setting(store, DIM_KEY) or 0) + 7) // 8  # one bit per dimension
    if since:  # the few rows written since a copy was made: through their index, then by id
        rows = store.execute(
            "SELECT chunk_id, code FROM vector_codes INDEXED BY vector_codes_by_generation WHERE generation > ?",
            (since,),
        )
        if rows:
            rows.sort()
            yield _code_page(rows, width)
        return
    # A page is one row: its ids as text and its codes concatenated into one blob by SQLite
    # (group_concat reads a blob's bytes as they are; the cast gives them back), instead
    # of a Python tuple and bytes object per chunk: at 100k chunks 53-95 -> 27-34 ms CPU
    # of a command-line hybrid search, which reads them while the model loads.  Both
    # aggregates take the page's rows in one order; a damaged code (not a blob of `width`
    # bytes) is in neither, only in the count.
    good = "typeof(code) = 'blob' AND length(code) = ?1"
    after = 0
    while True:
        count, last, ids, codes = store.execute(
            f"SELECT count(*), max(chunk_id), group_concat(CASE WHEN {good} THEN chunk_id END),"
            f" CAST(group_concat(CASE WHEN {good} THEN code END, '') AS BLOB)"
            " FROM (SELECT chunk_id, code FROM vector_codes WHERE chunk_id > ?2 ORDER BY chunk_id LIMIT ?3)",
            (width, after, page_size),
        )[0]
        if not count:
            return
        page = _grouped_page(count, ids, codes, width)
        if page is None:  # not what the aggregation gives: this page row by row
            page = _code_page(
                store.execute(
                    "SELECT chunk_id, code FROM vector_codes WHERE chunk_id > ? ORDER BY chunk_id LIMIT ?",
                    (after, page_size),
                ),
                width,
            )
        after = last
        yield page


def _code_page(rows: list[tuple[int, bytes]], width: int) -> tuple[np.ndarray, np.ndarray]:
    """(ids, code rows) of a page; a damaged code (not `width` bytes) is left out, so its
    chunk is found by keywords only until it is embedded again."""
    import numpy as np

    good = [r for r in rows if isinstance(r[1], bytes) and len(r[1]) == width]
    if len(good) < len(rows):
        skipped_row("vector code", f"{len(rows) - len(good)} of {len(rows)} not {width} bytes long")
        rows = good
    ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
    if not rows:
        return ids, np.zeros((0, width), dtype=np.uint8)
    return ids, np.frombuffer(b"".join(r[1] for r in rows), dtype=np.uint8).reshape(len(rows), -1)


def _grouped_page(count: int, ids: Any, codes: Any, width: int) -> tuple[np.ndarray, np.ndarray] | None:
    """_code_page of a page SQLite aggregated: `count` rows, the good ones' ids as text
    (comma-separated) and their codes as one blob, in one order (put in id order here);
    None if they do not fit together."""
    import numpy as np

    if not isinstance(ids, (str, type(None))) or not isinstance(codes, (bytes, type(None))):
        return None
    chunk_ids = np.fromstring(ids, dtype=np.int64, sep=",") if ids else np.zeros(0, dtype=np.int64)
    rows = np.frombuffer(codes or b"", dtype=np.uint8)
    if len(rows) != len(chunk_ids) * width or len(chunk_ids) > count:
        return None
    if len(chunk_ids) < count:
        skipped_row("vector code", f"{count - len(chunk_ids)} of {count} not {width} bytes long")
    rows = rows.reshape(len(chunk_ids), width)
    if len(chunk_ids) > 1 and not bool(np.all(chunk_ids[1:] > chunk_ids[:-1])):
        order = np.argsort(chunk_ids, kind="stable")
        chunk_ids, rows = chunk_ids[order], rows[order]
    return chunk_ids, rows


def generation(store: Store) -> str:
    """Changes on every vector write: readers holding vectors in memory reload on a change."""
    return get_setting(store, GENERATION_KEY) or "0"


def _to_arrays(rows: list[tuple[int, bytes]], dim: int) -> tuple[np.ndarray, np.ndarray]:
    import numpy as np

    ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
    if not rows:
        return ids, np.zeros((0, dim), dtype=np.float32)
    matrix = np.frombuffer(b"".join(r[1] for r in rows), dtype=STORED_DTYPE).reshape(len(rows), -1)
    return ids, matrix.astype(np.float32)


def has_vectors(store: Store, fingerprint: str) -> bool:
    """Asked before every search.  Through vector_codes (one row per current vector) the
    first row answers; `chunks WHERE vector_fp = ?` has no index and scanned every chunk
    while none had a vector yet (6-11 ms a search while a 10k-file folder indexed)."""
    return bool(
        store.scalar(
            "SELECT 1 FROM vector_codes k JOIN chunks c ON c.id = k.chunk_id WHERE c.vector_fp = ? LIMIT 1",
            (fingerprint,),
        )
    )


def count_vectors(store: Store, fingerprint: str) -> int:
    return store.scalar("SELECT count(*) FROM chunks WHERE vector_fp = ?", (fingerprint,)) or 0


def collect_unused_embeddings(store: Store) -> int:
    """Drop cached vectors whose text no longer appears in any chunk or document opening."""
    with store.atomic():
        store.execute(
            "DELETE FROM embeddings WHERE input_sha NOT IN (SELECT input_sha FROM chunks)"
            " AND input_sha NOT IN (SELECT opening_sha FROM documents WHERE opening_sha <> '')"
        )
        return store.conn.changes()


# Documents' openings (migration m015): documents.opening_sha is NULL until looked at,
# '' when the document has none, else the key of its vector in the cache.


def pending_openings(store: Store, fingerprint: str, after_id: int, limit: int, parts: int) -> list[PendingOpening]:
    docs = store.execute(
        "SELECT d.id, d.kind, d.rel_path, (SELECT count(*) FROM chunks c WHERE c.document_id = d.id) FROM documents d"
        " WHERE d.id > ? AND (d.opening_sha IS NULL OR (d.opening_sha <> '' AND NOT EXISTS"
        "  (SELECT 1 FROM embeddings e WHERE e.fingerprint = ? AND e.input_sha = d.opening_sha)))"
        " ORDER BY d.id LIMIT ?",
        (after_id, fingerprint, limit),
    )
    first_chunks = (
        row
        for part, marks in in_batches([d[0] for d in docs])
        for row in store.execute(
            f"SELECT document_id, title, text, doc_words FROM chunks WHERE document_id IN ({marks}) AND ord < ?"
            " ORDER BY document_id, ord",
            (*part, parts),
        )
    )
    return pending_openings_from_rows(docs, first_chunks)


def pending_openings_from_rows(
    docs: Iterable[Sequence[Any]], first_chunks: Iterable[Sequence[Any]]
) -> list[PendingOpening]:
    """Both backends' pending_openings: (id, kind, rel_path, chunk count) rows of documents and
    (document_id, title, text, doc_words) rows of their first chunks, in order."""
    chunks: dict[int, list[tuple[str, str, str]]] = {}
    for doc_id, title, text, doc_words in first_chunks:
        chunks.setdefault(int(doc_id), []).append((str(title), str(text), str(doc_words or "")))
    return [
        PendingOpening(
            document_id=int(doc_id),
            document_kind=str(kind),
            rel_path=str(rel_path),
            chunk_count=int(count),
            parts=tuple((t, x) for t, x, _ in chunks.get(int(doc_id), [])),
            doc_words=next((w for _, _, w in chunks.get(int(doc_id), [])), ""),
        )
        for doc_id, kind, rel_path, count in docs
    ]


def write_openings(store: Store, fingerprint: str, items: list[tuple[int, str, bytes | None]]) -> None:
    with store.atomic():
        store.executemany(
            "INSERT OR IGNORE INTO embeddings (fingerprint, input_sha, vector) VALUES (?, ?, ?)",
            [(fingerprint, sha, pack(blob)) for _, sha, blob in items if sha and blob is not None],
        )
        store.executemany("UPDATE documents SET opening_sha = ? WHERE id = ?", [(sha, d) for d, sha, _ in items])


def openings_of(store: Store, fingerprint: str, ids: list[int]) -> dict[int, np.ndarray]:
    """chunk id -> its document's opening vector (float32), where current."""
    return _checked_by_chunk(
        store,
        fingerprint,
        ids,
        "SELECT c.id, e.vector FROM chunks c JOIN documents d ON d.id = c.document_id"
        " CROSS JOIN embeddings e ON e.fingerprint = ? AND e.input_sha = d.opening_sha"
        " WHERE c.id IN ({marks})",
    )
