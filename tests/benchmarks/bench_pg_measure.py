"""The measuring half of bench_pg_scale.py: both stores' latency, and the HNSW index's recall."""

from __future__ import annotations

import os
import time
from pathlib import Path

from bench_pg_recall import exact_truth, queries_of, report
from bench_search import RealCostEmbedder, make_queries

from kenning.embedding import QUERY_THREADS, resolve_embedder
from kenning.search.engine import SearchEngine, SearchOptions
from kenning.search.metrics import percentile
from kenning.storage import open_store
from kenning.storage.paths import model_cache_dir
from kenning.storage.postgres import open_pg_store
from kenning.storage.postgres import vectors as pg_vectors


class StatementCounter:
    """Statements this process sends to PostgreSQL (each a round trip: queries, and the
    BEGIN / COMMIT of transactions), counted in psycopg while installed."""

    def __init__(self) -> None:
        self.count = 0

    def __enter__(self) -> StatementCounter:
        import psycopg
        from psycopg import _connection_base

        counter = self
        self._cursor, self._command = psycopg.Cursor.execute, _connection_base.BaseConnection._exec_command
        cursor_execute, exec_command = self._cursor, self._command

        def execute(cur, *args, **kwargs):
            counter.count += 1
            return cursor_execute(cur, *args, **kwargs)

        def command(conn, *args, **kwargs):
            counter.count += 1
            return (yield from exec_command(conn, *args, **kwargs))

        psycopg.Cursor.execute = execute  # type: ignore[method-assign]
        _connection_base.BaseConnection._exec_command = command  # type: ignore[method-assign]
        return self

    def __exit__(self, *exc: object) -> None:
        import psycopg
        from psycopg import _connection_base

        psycopg.Cursor.execute = self._cursor  # type: ignore[method-assign]
        _connection_base.BaseConnection._exec_command = self._command  # type: ignore[method-assign]


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
    read_ahead(engines["postgresql"], pg)
    for engine in engines.values():  # vocabulary, vector scan, server caches
        engine.search("warm up the caches", SearchOptions(limit=10))
        engine.search("zzyzx warm up the vocabulary", SearchOptions(limit=10))
    for mode in ("lexical", "hybrid"):
        times: dict[str, list[float]] = {name: [] for name in engines}
        statements = 0
        for number, text in enumerate(queries):
            order = list(engines.items()) if number % 2 == 0 else list(reversed(engines.items()))
            for name, engine in order:
                if name == "postgresql":
                    with StatementCounter() as counter:
                        times[name].append(_timed(engine, text, mode))
                    statements += counter.count
                else:
                    times[name].append(_timed(engine, text, mode))
        for name, found in times.items():
            sent = f", {statements / len(found):.1f} statements a query" if name == "postgresql" else ""
            print(
                f"{mode:<8} {name:<11} p50 {percentile(found, 50):7.1f} ms  p95 {percentile(found, 95):7.1f} ms"
                f"  ({len(found)} queries{sent}, load {os.getloadavg()[0]:.1f})"
            )
    sqlite_store.close()
    pg.close()


def read_ahead(engine: SearchEngine, pg) -> None:
    """What the app does once it has the model (workspace.Searcher.warm): the team store
    reads its index ahead in the background (vectors.warm_index).  The searches start
    once it is done; a user searching sooner meets part of the cold cost it reports."""
    started = time.perf_counter()
    engine.vectors.load()
    done = pg.vectors.wait_warm()
    share = "-" if done is None or done.read_share is None else f"{done.read_share:.2f}"
    print(
        f"team store read-ahead at connect: {time.perf_counter() - started:.1f} s,"
        f" {done.walks if done else 0} walks (the last read {share} of its pages outside the server's buffers)"
    )


def hnsw_recall(sqlite_db: Path, url: str, count: int = 200) -> None:
    """Recall of the exact top 100 (every row ranked in numpy) at each ef_search: bench_pg_recall.py."""
    pg = open_pg_store(url)
    dim = int(pg.settings.get(pg_vectors.DIM_KEY) or 0)
    fingerprint = pg.settings.get(pg_vectors.FINGERPRINT_KEY) or ""
    report(pg, exact_truth(pg, fingerprint, dim, queries_of(sqlite_db, count, dim)))
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
