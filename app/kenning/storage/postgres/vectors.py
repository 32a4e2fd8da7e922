"""Vectors in the team store: pgvector columns, an HNSW index (cosine), the embedding cache.

Each chunk's current vector is `chunks.embedding`; `chunks.vector_fp` says under which
model (NULL: pending), as in the SQLite store.  The HNSW index is made for the
model's dimension when the model is set (prepare): `embedding::vector(dim)` with
`vector_cosine_ops`, so a query `ORDER BY embedding::vector(dim) <=> q` walks it.

Nearest vectors under a filter: the filter is in the same query, so a chunk it
excludes never takes a place.  pgvector 0.6 filters the rows the index walk returns
(at most `hnsw.ef_search` of them), so a selective filter can leave fewer than
`limit`; the search then widens ef_search, and past MAX_EF_SEARCH it ranks the
allowed rows exactly (no index), which is what a selective filter leaves few of.

The cache (`embeddings`) keeps each vector as float16, as the SQLite store does, keyed
by (fingerprint, sha256 of what the model read).
"""

from __future__ import annotations

import math
import random
import time
from typing import TYPE_CHECKING

from kenning.core.filters import ChunkFilter
from kenning.core.records import Record
from kenning.storage.postgres.connection import PgStore
from kenning.storage.postgres.documents import write_lock
from kenning.storage.postgres.filtering import JOIN_DOCUMENTS, filter_condition
from kenning.storage.postgres.records import get_setting, set_setting

if TYPE_CHECKING:
    import threading
    from collections.abc import Callable

    import numpy as np

    from kenning.storage.api import PendingOpening

FINGERPRINT_KEY = "vector_fingerprint"
DIM_KEY = "vector_dim"
GENERATION_KEY = "vector_generation"
# The shipped ef_search: the recall of the true top 100 (bench_pg_scale.py, hashed
# bag-of-words vectors, m=16, ef_construction=64) falls as the store grows: at 102,665
# chunks 0.857 at 100, 0.922 at 200, 0.965 at 400; at 344,841 chunks 0.768 at 100, 0.849
# at 200, 0.947 at 400, 0.959 at 600, 0.970 at 800, 0.972 at 1000 (28 / 52 / 42 / 68 ms
# p50 at 400 / 600 / 800 / 1000, load 17).  800 keeps it above 0.95 with room for a
# larger store; nearest() asks for 400 candidates, which the default filter (no test
# files) thins, so a walk of 800 also leaves the whole pool in one walk.
EF_SEARCH = 800
# Candidates handed on for rescoring above storage: as many as the SQLite scan's
# (storage.vector_scan.RESCORE_CANDIDATES / RESCORE_PER_RESULT), so meaning feedback
# re-ranks a pool as wide (CISI hybrid nDCG@10 0.3843 with the k nearest only, 0.3863
# with the SQLite store's pool of 400).
CANDIDATES = 400
CANDIDATES_PER_RESULT = 4
MAX_EF_SEARCH = 1000
# A walk whose filter leaves at least this share of the candidates asked for is the answer
# (nearest_rows); before, every walk that the default filter (no test files) left short
# of 400 was followed by an exact scan of every row: 1 s a query at 100k chunks.
ENOUGH_OF_LIMIT = 0.5
HNSW_M = 16
# The graph's build width.  64 (pgvector's default) left the recall of the true top 100
# at ef_search 800 at 0.947 at 102,665 chunks and 0.904 at 1,016,585 (200 hashed queries,
# bench_pg_recall.py); 128 gives 0.983 at 100k for the same walk cost (m 32 gave 0.966
# for a walk twice as long, m 24 with 100: 0.985 in 1.3x the time) and builds in about
# twice the time.  Stores made before take it on m006 (schema.py).
HNSW_EF_CONSTRUCTION = 128


# Reading the index ahead (warm_index).  After a server restart its shared buffers are
# empty and each walk of the first searches reads 3,000-9,000 of its ~14,000 pages from
# outside them (1M chunks: 2x the time with the OS cache warm, 4-8x after a reboot;
# architecture §10 round 13); each walk reads different pages (an HNSW graph's
# neighbours are spread over the whole index), so the first 50-100 searches all pay.
# The walks ahead stop once one read at most WARM_ENOUGH of its pages there (a warm
# server: the first walk; ~0.03 once 180 walks have run at 1M) or WARM_SECONDS passed.
WARM_ENOUGH = 0.1
WARM_SECONDS = 60.0


class WarmUp(Record, frozen=True):
    """What warm_index did: walks made, seconds, the last walk's share of pages read outside
    the server's shared buffers (None: no walk)."""

    walks: int
    seconds: float
    read_share: float | None


INDEX_PREFIX = "chunks_embedding_hnsw_"  # + the dimension: one HNSW index per model size


def _index_name(dim: int) -> str:
    return f"{INDEX_PREFIX}{int(dim)}"


def vector_literal(vector: np.ndarray) -> str:
    """pgvector's text form of a float32 vector (passed as a parameter)."""
    return "[" + ",".join(repr(float(x)) for x in vector.tolist()) + "]"


def prepare(store: PgStore, fingerprint: str, dim: int) -> None:
    """Make the vector columns match the embedder; a new model marks every vector stale."""
    with store.atomic():
        write_lock(store)
        old = get_setting(store, DIM_KEY)
        if get_setting(store, FINGERPRINT_KEY) != fingerprint:
            store.execute("UPDATE chunks SET vector_fp = NULL, embedding = NULL WHERE vector_fp IS NOT NULL")
            set_setting(store, FINGERPRINT_KEY, fingerprint)
            set_setting(store, DIM_KEY, str(dim))
            bump_generation(store)
        if old != str(dim) or not store.scalar("SELECT to_regclass(%s) IS NOT NULL", (_index_name(dim),)):
            # As the schema's owner (schema.py m004): a writer owns no table, so no index.
            store.execute("SELECT make_vector_index(%s, %s)", (int(dim), int(old) if old else None))


INDEX_OPTIONS = f"m = {HNSW_M}, ef_construction = {HNSW_EF_CONSTRUCTION}"  # CREATE INDEX ... WITH (...)
INDEX_RELOPTIONS = [f"m={HNSW_M}", f"ef_construction={HNSW_EF_CONSTRUCTION}"]  # as pg_class keeps them


def index_ddl(dim: int) -> str:
    """The statement that builds the vector index of a dimension, as shipped."""
    return (
        f"CREATE INDEX IF NOT EXISTS {_index_name(dim)} ON chunks"
        f" USING hnsw ((embedding::vector({int(dim)})) vector_cosine_ops) WITH ({INDEX_OPTIONS})"
    )


def create_index(store: PgStore, dim: int) -> None:
    store.execute(index_ddl(dim))


def drop_index(store: PgStore, dim: int) -> None:
    """For bulk loads (the benchmark): building the index afterwards is much faster."""
    store.execute(f"DROP INDEX IF EXISTS {_index_name(dim)}")


def bump_generation(store: PgStore) -> None:
    store.execute(
        "INSERT INTO settings (key, value) VALUES (%s, '1') ON CONFLICT (key)"
        " DO UPDATE SET value = (settings.value::bigint + 1)::text",
        (GENERATION_KEY,),
    )


def generation(store: PgStore) -> str:
    return get_setting(store, GENERATION_KEY) or "0"


def count_pending(store: PgStore) -> int:
    return int(store.scalar("SELECT count(*) FROM chunks WHERE vector_fp IS NULL") or 0)


def pending_rows(store: PgStore, after_id: int, limit: int) -> list[tuple[int, str, str, str, str, str, int]]:
    """(chunk id, title, text, document kind, rel_path, input sha, source id) lacking a vector, by id."""
    rows = store.execute(
        "SELECT c.id, c.title, c.text, d.kind, d.rel_path, c.input_sha, d.source_id FROM chunks c"
        " JOIN documents d ON d.id = c.document_id WHERE c.vector_fp IS NULL AND c.id > %s ORDER BY c.id LIMIT %s",
        (after_id, limit),
    )
    return [(int(a), str(b), str(c), str(d), str(e), str(f), int(g)) for a, b, c, d, e, f, g in rows]


def cached_vectors(store: PgStore, fingerprint: str, shas: list[str]) -> dict[str, bytes]:
    """sha -> float32 vector (bytes) of the given texts the cache holds."""
    from kenning.storage.vectors import unpack

    rows = store.execute(
        "SELECT input_sha, vector FROM embeddings WHERE fingerprint = %s AND input_sha = ANY(%s)",
        (fingerprint, list(shas)),
    )
    return {str(sha): unpack(bytes(blob)).tobytes() for sha, blob in rows}


def write_vectors(store: PgStore, fingerprint: str, items: list[tuple[int, str, bytes]]) -> None:
    """Store (chunk id, text sha, float32 blob) in one transaction; a chunk deleted
    meanwhile is simply not updated."""
    import numpy as np

    from kenning.storage.vectors import pack

    if not items:
        return
    with store.atomic():
        write_lock(store)
        store.execute(
            "INSERT INTO embeddings (fingerprint, input_sha, vector) SELECT %s, * FROM unnest(%s::text[], %s::bytea[])"
            " ON CONFLICT DO NOTHING",
            (fingerprint, [sha for _, sha, _ in items], [pack(blob) for _, _, blob in items]),
        )
        literals = [vector_literal(np.frombuffer(blob, dtype=np.float32)) for _, _, blob in items]
        store.execute(
            "UPDATE chunks c SET vector_fp = %s, embedding = u.v::vector"
            " FROM unnest(%s::bigint[], %s::text[]) AS u(id, v) WHERE c.id = u.id",
            (fingerprint, [cid for cid, _, _ in items], literals),
        )
        bump_generation(store)


def vector_from_binary(raw: bytes) -> np.ndarray:
    """A float32 vector from pgvector's binary form (vector_send: int16 dimension, int16
    unused, then the floats big-endian): what a column of type vector reads as in
    binary mode, no adapter registered.  Read so, 400 vectors of 384 cross in a third of
    the time an embedding::real[] took (psycopg built a Python float of each value, and
    the server cast each vector to an array first)."""
    import numpy as np

    dim = int.from_bytes(raw[:2], "big")
    if len(raw) != 4 + 4 * dim:
        raise ValueError(f"not a pgvector vector in binary form ({len(raw)} bytes for {dim} dimensions)")
    return np.frombuffer(raw, dtype=">f4", offset=4).astype(np.float32)


def vectors_for_chunks(store: PgStore, fingerprint: str, ids: list[int]) -> dict[int, np.ndarray]:
    """Current float32 vectors of the given chunks (read in binary: no text parsing)."""
    if not ids:
        return {}
    _, rows = store.query(
        "SELECT id, embedding FROM chunks WHERE vector_fp = %s AND id = ANY(%s)",
        (fingerprint, list(ids)),
        binary=True,
    )
    return {int(cid): vector_from_binary(raw) for cid, raw in rows}


def has_vectors(store: PgStore, fingerprint: str) -> bool:
    return bool(store.scalar("SELECT 1 FROM chunks WHERE vector_fp = %s LIMIT 1", (fingerprint,)))


def count_vectors(store: PgStore, fingerprint: str) -> int:
    return int(store.scalar("SELECT count(*) FROM chunks WHERE vector_fp = %s", (fingerprint,)) or 0)


def model_settings(store: PgStore) -> dict[str, str]:
    """The settings a walk checks (the model's fingerprint and dimension)."""
    rows = store.execute("SELECT key, value FROM settings WHERE key = ANY(%s)", ([DIM_KEY, FINGERPRINT_KEY],))
    return {str(k): str(v) for k, v in rows}


def _set_width(store: PgStore, ef: int, *, already: bool = False) -> None:
    """hnsw.ef_search for the connection's session, sent only when it differs from what
    this connection was set to (already: just set).  Inside a transaction it is sent
    and not remembered: a rollback would undo it."""
    if not store.idle():
        if not already:
            store.execute("SELECT set_config('hnsw.ef_search', %s, false)", (str(ef),))
        store.session_ef_search = None
        return
    if not already and store.session_ef_search == (store.conn, ef):
        return
    if not already:
        store.execute("SELECT set_config('hnsw.ef_search', %s, false)", (str(ef),))
    store.session_ef_search = (store.conn, ef)


def nearest(
    store: PgStore,
    fingerprint: str,
    query: np.ndarray,
    chunk_filter: ChunkFilter,
    limit: int,
    *,
    ef_search: int = EF_SEARCH,
) -> list[tuple[int, float]]:
    """(chunk id, cosine) of the `limit` allowed chunks nearest to query, best first."""
    return [(cid, cos) for cid, cos, _ in nearest_rows(store, fingerprint, query, chunk_filter, limit, ef_search)]


def nearest_rows(
    store: PgStore,
    fingerprint: str,
    query: np.ndarray,
    chunk_filter: ChunkFilter,
    limit: int,
    ef_search: int = EF_SEARCH,
    *,
    with_vectors: bool = False,
    needed: int | None = None,
    held: dict[str, str] | None = None,
) -> list[tuple[int, float, np.ndarray | None]]:
    """(chunk id, cosine, its float32 vector when asked) of up to `limit` allowed chunks
    nearest to query, best first (ties by id), in two round trips (the settings, the
    walk) when the filter leaves most rows.

    Through the HNSW index with the filter in the query.  pgvector walks ef_search rows
    and then filters them, so a filter leaves fewer: a walk that leaves at least
    ENOUGH_OF_LIMIT of `limit` is the answer (the default filter leaves out test files,
    often a tenth of a code base's chunks); a walk that leaves fewer is made again at
    MAX_EF_SEARCH, and when even that leaves fewer than `needed` (the results the caller
    must have; default `limit`) the allowed rows are ranked exactly, which is what a
    selective filter leaves few of.

    held: the model's settings (model_settings) as the caller last read them; the walk
    is then one statement while the connection's session has its width, the settings
    checked inside it (a one-time filter), and a walk that finds fewer than `needed`
    is made again after reading them afresh."""
    if limit <= 0:
        return []
    ef = min(max(ef_search, limit), MAX_EF_SEARCH)
    remembered = held is not None
    if held is None:
        # The model's settings and the walk's width in one round trip (no transaction
        # of three around a SET LOCAL): the width for the connection's session.
        held = {
            str(k): v
            for k, v, _ in store.execute(
                "SELECT key, value, set_config('hnsw.ef_search', %s, false) FROM settings WHERE key = ANY(%s)",
                (str(ef), [DIM_KEY, FINGERPRINT_KEY]),
            )
        }
        _set_width(store, ef, already=True)
    else:
        _set_width(store, ef)
    dim = int(held.get(DIM_KEY) or 0)
    if held.get(FINGERPRINT_KEY) != fingerprint or dim != len(query):
        if remembered:  # as they were: ask them now
            return nearest_rows(
                store, fingerprint, query, chunk_filter, limit, ef_search, with_vectors=with_vectors, needed=needed
            )
        return []
    needed = limit if needed is None else min(needed, limit)
    condition = filter_condition(chunk_filter)
    literal = vector_literal(query)
    still = " AND EXISTS (SELECT 1 FROM settings WHERE key = %s AND value = %s)" if remembered else ""
    sql = _walk_sql(dim, f"%s::vector({dim})", condition.sql + still, with_vectors)
    checked = (FINGERPRINT_KEY, fingerprint) if remembered else ()
    params = (literal, fingerprint, *condition.params, *checked, literal, limit)
    enough = max(needed, min(limit, math.ceil(limit * ENOUGH_OF_LIMIT)))
    _, rows = store.query(sql, params, binary=True)
    if remembered and len(rows) < needed:  # the model may have changed since: ask the settings
        return nearest_rows(
            store, fingerprint, query, chunk_filter, limit, ef_search, with_vectors=with_vectors, needed=needed
        )
    if len(rows) < enough and ef < MAX_EF_SEARCH:
        _set_width(store, MAX_EF_SEARCH)
        _, rows = store.query(sql, params, binary=True)
    if len(rows) < needed:
        with store.reading():
            # No index: every allowed row, ranked exactly (a filter that leaves few).
            store.execute("SET LOCAL enable_indexscan = off")
            _, rows = store.query(sql, params, binary=True)
    out = [(int(r[0]), float(r[1]), vector_from_binary(r[2]) if with_vectors else None) for r in rows]
    out.sort(key=lambda r: (-r[1], r[0]))
    return out


def _walk_sql(dim: int, query: str, condition: str, with_vectors: bool) -> str:
    """A walk of the index: the allowed chunks nearest to query (SQL of a vector(dim))."""
    distance = f"c.embedding::vector({dim}) <=> {query}"
    vector_column = ", c.embedding" if with_vectors else ""  # binary: vector_from_binary
    return (
        f"SELECT c.id, 1 - ({distance}) AS cosine{vector_column} FROM chunks c {JOIN_DOCUMENTS}"
        f" WHERE c.vector_fp = %s AND {condition} ORDER BY {distance} LIMIT %s"
    )  # no tie-break column: pgvector walks its index only for ORDER BY the distance alone


def warm_index(
    store: PgStore,
    fingerprint: str,
    chunk_filter: ChunkFilter,
    *,
    enough: float = WARM_ENOUGH,
    seconds: float = WARM_SECONDS,
    stop: threading.Event | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> WarmUp:
    """Walk the index as searches do, from stored chunks' own vectors (where searches go),
    until a walk reads at most `enough` of its pages outside the server's shared buffers
    (EXPLAIN's count), `seconds` pass or `stop` is set.  Reads only; returns what it did."""
    started = clock()
    held = model_settings(store)
    dim = int(held.get(DIM_KEY) or 0)
    bounds = store.execute("SELECT min(id), max(id) FROM chunks WHERE vector_fp = %s", (fingerprint,))
    if held.get(FINGERPRINT_KEY) != fingerprint or not dim or not bounds or bounds[0][0] is None:
        return WarmUp(0, clock() - started, None)
    first, last = int(bounds[0][0]), int(bounds[0][1])
    sample = f"(SELECT embedding::vector({dim}) FROM chunks WHERE vector_fp = %s AND id >= %s ORDER BY id LIMIT 1)"
    condition = filter_condition(chunk_filter)
    sql = "EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) " + _walk_sql(dim, sample, condition.sql, True)
    _set_width(store, EF_SEARCH)
    pick = random.Random(first ^ last)  # the same walks on the same store: runs compare
    walks, share = 0, None
    while not (stop is not None and stop.is_set()) and clock() - started < seconds:
        at = pick.randint(first, last)
        plan = store.execute(sql, (fingerprint, at, fingerprint, *condition.params, fingerprint, at, CANDIDATES))
        totals = plan[0][0][0]["Plan"]
        read, hit = int(totals["Shared Read Blocks"]), int(totals["Shared Hit Blocks"])
        walks, share = walks + 1, read / max(1, read + hit)
        if share <= enough:
            break
    return WarmUp(walks, clock() - started, share)


def collect_unused(store: PgStore) -> int:
    """Drop cached vectors whose text no chunk has any more; how many."""
    with store.atomic():
        write_lock(store)
        rows = store.execute(
            "DELETE FROM embeddings e WHERE NOT EXISTS (SELECT 1 FROM chunks c WHERE c.input_sha = e.input_sha)"
            " AND NOT EXISTS (SELECT 1 FROM documents d WHERE d.opening_sha = e.input_sha) RETURNING 1"
        )
    return len(rows)


# Documents' openings (m008), as the SQLite store keeps them (storage/vectors.py).


def pending_openings(store: PgStore, fingerprint: str, after_id: int, limit: int, parts: int) -> list[PendingOpening]:
    from kenning.storage.vectors import pending_openings_from_rows

    docs = store.execute(
        "SELECT d.id, d.kind, d.rel_path, (SELECT count(*) FROM chunks c WHERE c.document_id = d.id) FROM documents d"
        " WHERE d.id > %s AND (d.opening_sha IS NULL OR (d.opening_sha <> '' AND NOT EXISTS"
        "  (SELECT 1 FROM embeddings e WHERE e.fingerprint = %s AND e.input_sha = d.opening_sha)))"
        " ORDER BY d.id LIMIT %s",
        (after_id, fingerprint, limit),
    )
    first_chunks = (
        store.execute(
            "SELECT document_id, title, text, doc_words FROM chunks WHERE document_id = ANY(%s) AND ord < %s"
            " ORDER BY document_id, ord",
            ([int(d[0]) for d in docs], parts),
        )
        if docs
        else []
    )
    return pending_openings_from_rows(docs, first_chunks)


def write_openings(store: PgStore, fingerprint: str, items: list[tuple[int, str, bytes | None]]) -> None:
    from kenning.storage.vectors import pack

    if not items:
        return
    cached = [(sha, pack(blob)) for _, sha, blob in items if sha and blob is not None]
    with store.atomic():
        write_lock(store)
        if cached:
            store.execute(
                "INSERT INTO embeddings (fingerprint, input_sha, vector)"
                " SELECT %s, * FROM unnest(%s::text[], %s::bytea[]) ON CONFLICT DO NOTHING",
                (fingerprint, [sha for sha, _ in cached], [blob for _, blob in cached]),
            )
        store.execute(
            "UPDATE documents d SET opening_sha = u.sha FROM unnest(%s::bigint[], %s::text[]) AS u(id, sha)"
            " WHERE d.id = u.id",
            ([d for d, _, _ in items], [sha for _, sha, _ in items]),
        )


def openings_of(store: PgStore, fingerprint: str, ids: list[int]) -> dict[int, np.ndarray]:
    """chunk id -> its document's opening vector (float32), where current."""
    from kenning.storage.vectors import unpack

    if not ids:
        return {}
    rows = store.execute(
        "SELECT c.id, e.vector FROM chunks c JOIN documents d ON d.id = c.document_id"
        " JOIN embeddings e ON e.fingerprint = %s AND e.input_sha = d.opening_sha WHERE c.id = ANY(%s)",
        (fingerprint, list(ids)),
    )
    return {int(cid): unpack(bytes(blob)) for cid, blob in rows}
