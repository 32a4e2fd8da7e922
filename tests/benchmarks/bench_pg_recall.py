"""The team store's HNSW recall: how much of the exact top 100 the index walk finds (#23 item 8).

    python tests/benchmarks/bench_pg_recall.py --pg-data DIR --queries-from STORE.db
        [--queries 200] [--ef 200,400,800,1000] [--index NAME ...]

The truth is every row ranked exactly, in numpy (the embeddings read once by a binary
COPY: about a minute at a million chunks, where an exact scan in SQL took 6 s a query),
for bench_search's queries made from a SQLite store (--queries-from; bench_scale.py's
stores hold hashed bag-of-words vectors, and so do these queries).  Two figures:

- strict: the share of the exact top 100's ids the walk returns;
- tie-aware: the share of the walk's 100 that are as near as the exact 100th (about
  half of these queries have rows tied at the 100th place, any of which is right).

--index NAME (repeatable): measure each of these HNSW indexes on chunks alone, the others
dropped inside a transaction that is rolled back (how build options are compared on one
store).  Without it, the store's own index.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parents[1]))

from bench_search import hashed_vector, make_queries

from kenning.core.filters import ChunkFilter
from kenning.search.metrics import percentile
from kenning.storage import open_store
from kenning.storage.postgres import open_pg_store
from kenning.storage.postgres import vectors as pg_vectors

RECALL_K = 100
EF_SEARCHES = (200, 400, 800, 1000)
TIE = 1e-5  # cosines this close to the 100th are as near (float32 sums in two orders)
EVERYTHING = ChunkFilter(test_files="included")


@dataclass(frozen=True)
class Truth:
    query: str
    vector: np.ndarray
    ids: set[int]  # the exact top RECALL_K
    kth: float  # the cosine of the RECALL_K-th


def queries_of(sqlite_db: Path, count: int, dim: int) -> list[tuple[str, np.ndarray]]:
    store = open_store(sqlite_db)
    try:
        texts = make_queries(store, count, seed=7)[:count]
    finally:
        store.close()
    return [(text, hashed_vector(text, dim)) for text in texts]


def _embeddings(pg, fingerprint: str, dim: int) -> tuple[np.ndarray, np.ndarray]:
    """Every row's (id, unit vector), by a binary COPY parsed as fixed-size records."""
    buffer = bytearray()
    with pg.conn.cursor().copy(
        "COPY (SELECT id, embedding FROM chunks WHERE vector_fp = %s) TO STDOUT (FORMAT BINARY)", (fingerprint,)
    ) as copy:
        for data in copy:
            buffer += data
    record = np.dtype(
        [
            ("fields", ">i2"),
            ("id_len", ">i4"),
            ("id", ">i8"),
            ("vec_len", ">i4"),
            ("dim", ">i2"),
            ("unused", ">i2"),
            ("vector", ">f4", (dim,)),
        ]
    )
    rows = np.frombuffer(bytes(buffer[19:-2]), dtype=record)  # header 19 bytes, trailer 2
    assert (rows["fields"] == 2).all() and (rows["dim"] == dim).all()
    vectors = rows["vector"].astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    return rows["id"].astype(np.int64), vectors


def exact_truth(pg, fingerprint: str, dim: int, queries: list[tuple[str, np.ndarray]]) -> list[Truth]:
    ids, vectors = _embeddings(pg, fingerprint, dim)
    out = []
    for start in range(0, len(queries), 20):
        part = queries[start : start + 20]
        scores = vectors @ np.stack([vec for _, vec in part]).T
        for column, (text, vec) in enumerate(part):
            cosine = scores[:, column]
            top = np.argpartition(-cosine, RECALL_K)[:RECALL_K]
            out.append(Truth(text, vec, set(ids[top].tolist()), float(cosine[top].min())))
    return out


class _RolledBack(Exception):
    pass


def walk_recall(pg, fingerprint: str, truth: list[Truth], ef: int, drop: tuple[str, ...] = ()) -> dict[str, float]:
    strict, tied, took = [], [], []
    for one in truth:
        found: list[tuple[int, float]] = []
        try:
            with pg.atomic():
                for name in drop:
                    pg.execute(f"DROP INDEX {name}")
                started = time.perf_counter()
                found = pg_vectors.nearest(pg, fingerprint, one.vector, EVERYTHING, RECALL_K, ef_search=ef)
                took.append((time.perf_counter() - started) * 1000)
                raise _RolledBack
        except _RolledBack:
            pass
        strict.append(len({cid for cid, _ in found} & one.ids) / RECALL_K)
        tied.append(min(RECALL_K, sum(1 for _, cos in found if cos >= one.kth - TIE)) / RECALL_K)
    return {
        "strict": statistics.fmean(strict),
        "strict_min": min(strict),
        "tied": statistics.fmean(tied),
        "tied_p5": percentile(tied, 5),
        "walk_p50_ms": percentile(took, 50),
    }


def report(pg, truth: list[Truth], efs: tuple[int, ...] = EF_SEARCHES, drop: tuple[str, ...] = ()) -> None:
    fingerprint = pg.settings.get(pg_vectors.FINGERPRINT_KEY) or ""
    for ef in efs:
        r = walk_recall(pg, fingerprint, truth, ef, drop)
        shipped = " (shipped)" if ef == pg_vectors.EF_SEARCH else ""
        print(
            f"ef_search {ef:>4}{shipped}: recall of the true top {RECALL_K} {r['strict']:.3f} (min {r['strict_min']:.2f}),"
            f" tie-aware {r['tied']:.3f} (p5 {r['tied_p5']:.2f}), walk {r['walk_p50_ms']:.0f} ms p50"
            f"  ({len(truth)} queries, load {os.getloadavg()[0]:.1f})",
            flush=True,
        )


def hnsw_indexes(pg) -> list[str]:
    rows = pg.execute(
        "SELECT c.relname FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_am a ON a.oid = c.relam"
        " WHERE i.indrelid = 'chunks'::regclass AND a.amname = 'hnsw' ORDER BY c.relname"
    )
    return [str(r[0]) for r in rows]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pg-data", type=Path, required=True, help="a bench_pg_scale.py server's data folder")
    parser.add_argument("--queries-from", type=Path, required=True, help="a bench_scale.py store (bench.db)")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--ef", default=",".join(map(str, EF_SEARCHES)))
    parser.add_argument("--index", action="append", default=[], help="measure this HNSW index alone (repeatable)")
    args = parser.parse_args()
    from bench_pg_scale import server

    _, url = server(args.pg_data)
    pg = open_pg_store(url)
    dim = int(pg.settings.get(pg_vectors.DIM_KEY) or 0)
    started = time.perf_counter()
    truth = exact_truth(
        pg, pg.settings.get(pg_vectors.FINGERPRINT_KEY) or "", dim, queries_of(args.queries_from, args.queries, dim)
    )
    print(f"exact top {RECALL_K} of {len(truth)} queries in numpy: {time.perf_counter() - started:.0f} s")
    efs = tuple(int(x) for x in args.ef.split(","))
    every = hnsw_indexes(pg)
    for name in args.index or [None]:
        if name is not None:
            print(f"== {name} ({pg.scalar('SELECT reloptions::text FROM pg_class WHERE relname = %s', (name,))})")
        report(pg, truth, efs, tuple(i for i in every if name is not None and i != name))
    pg.close()


if __name__ == "__main__":
    main()
