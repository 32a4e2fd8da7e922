"""The measuring half of bench_pg_scale.py: both stores' latency, and the HNSW index's recall."""

from __future__ import annotations

import os
import statistics
import time
from pathlib import Path

from bench_search import RealCostEmbedder, hashed_vector, make_queries

from kenning.core.filters import ChunkFilter
from kenning.embedding import QUERY_THREADS, resolve_embedder
from kenning.search.engine import SearchEngine, SearchOptions
from kenning.search.metrics import percentile
from kenning.storage import open_store
from kenning.storage.paths import model_cache_dir
from kenning.storage.postgres import open_pg_store
from kenning.storage.postgres import vectors as pg_vectors

RECALL_K = 100
EF_SEARCHES = (100, 200, 400, 600, 800, 1000)  # nearest() asks at least k (100) of the index


def _timed(engine: SearchEngine, text: str, mode: str) -> float:
    started = time.perf_counter()
    engine.search(text, SearchOptions(limit=10, mode=mode))
    return (time.perf_counter() - started) * 1000


def latencies(sqlite_db: Path, url: str, count: int) -> None:
    """Lexical and hybrid p50/p95 of the same queries on both stores, alternated query by query."""
    real = resolve_embedder("default", model_cache_dir(), threads=QUERY_THREADS)
    real.load()
    sqlite_store, pg = open_store(sqlite_db), open_pg_store(url)
    embedder = RealCostEmbedder(real)
    engines = {"sqlite": SearchEngine(sqlite_store, embedder), "postgresql": SearchEngine(pg, embedder)}
    queries = make_queries(sqlite_store, count)
    for engine in engines.values():  # vocabulary, vector scan, server caches
        engine.search("warm up the caches", SearchOptions(limit=10))
        engine.search("zzyzx warm up the vocabulary", SearchOptions(limit=10))
    for mode in ("lexical", "hybrid"):
        times: dict[str, list[float]] = {name: [] for name in engines}
        for number, text in enumerate(queries):
            order = list(engines.items()) if number % 2 == 0 else list(reversed(engines.items()))
            for name, engine in order:
                times[name].append(_timed(engine, text, mode))
        for name, found in times.items():
            print(
                f"{mode:<8} {name:<11} p50 {percentile(found, 50):7.1f} ms  p95 {percentile(found, 95):7.1f} ms"
                f"  ({len(found)} queries, load {os.getloadavg()[0]:.1f})"
            )
    sqlite_store.close()
    pg.close()


def hnsw_recall(sqlite_db: Path, url: str, count: int = 40) -> None:
    """Recall of the exact top RECALL_K (every allowed row ranked, no index) at each ef_search."""
    sqlite_store, pg = open_store(sqlite_db), open_pg_store(url)
    fingerprint = pg.settings.get(pg_vectors.FINGERPRINT_KEY) or ""
    dim = int(pg.settings.get(pg_vectors.DIM_KEY) or 0)
    queries = make_queries(sqlite_store, count, seed=7)[:count]
    vectors = [hashed_vector(q, dim) for q in queries]
    everything = ChunkFilter(test_files="included")
    exact = []
    started = time.perf_counter()
    for vec in vectors:
        with pg.reading():
            pg.execute("SET LOCAL enable_indexscan = off")
            rows = pg.execute(
                f"SELECT c.id FROM chunks c WHERE c.vector_fp = %s"
                f" ORDER BY c.embedding::vector({dim}) <=> %s::vector({dim}) LIMIT %s",
                (fingerprint, pg_vectors.vector_literal(vec), RECALL_K),
            )
        exact.append({r[0] for r in rows})
    exact_ms = (time.perf_counter() - started) * 1000 / len(vectors)
    print(f"exact top {RECALL_K} without the index: {exact_ms:,.0f} ms a query")
    for ef in EF_SEARCHES:
        recalls, took = [], []
        for vec, truth in zip(vectors, exact):
            started = time.perf_counter()
            found = pg_vectors.nearest(pg, fingerprint, vec, everything, RECALL_K, ef_search=ef)
            took.append((time.perf_counter() - started) * 1000)
            recalls.append(len({cid for cid, _ in found} & truth) / max(len(truth), 1))
        shipped = " (shipped)" if ef == pg_vectors.EF_SEARCH else ""
        print(
            f"ef_search {ef:>4}{shipped}: recall of the true top {RECALL_K} {statistics.fmean(recalls):.3f}"
            f" (min {min(recalls):.2f}), {percentile(took, 50):.1f} ms p50"
        )
    sqlite_store.close()
    pg.close()


def measure_both(sqlite_db: Path, url: str, count: int) -> None:
    latencies(sqlite_db, url, count)
    hnsw_recall(sqlite_db, url)
    print("sqlite store on disk:", f"{sum(_size(sqlite_db, s) for s in ('', '-wal')) / 1e6:,.0f} MB")


def _size(db: Path, suffix: str) -> int:
    try:
        return os.path.getsize(str(db) + suffix)
    except OSError:
        return 0
