"""The team store's pruned keyword lists against the exact ones (#23 item 8, schema.py m007).

    python tests/benchmarks/bench_pg_pruned.py --sqlite STORE_DIR --url URL [--queries 120] [--depths 1000 1500 2000]
        [--with-sqlite] [--lists-only]

STORE_DIR is the bench_scale.py store the team store at URL was filled from
(bench_pg_scale.py; its queries are made from it).  First the keyword lists the
engine asks for while it searches those queries (lexical and hybrid) are recorded;
each one a pruned list changes (a word in more chunks than the depth) is asked again
for its best 100 on the exact path and the pruned one, alternated: the recall of the
exact top 100 (and tie-aware: rows scoring at least the exact 100th) and each path's
p50/p95.  Then whole searches, exact and pruned (and with --with-sqlite the SQLite
store, whose copy the SQLite side may write: migrations) alternated query by query, p50/p95.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from bench_search import RealCostEmbedder, make_queries

from kenning.embedding import QUERY_THREADS, resolve_embedder
from kenning.search.engine import SearchEngine, SearchOptions
from kenning.search.metrics import percentile
from kenning.storage import open_store
from kenning.storage.paths import model_cache_dir
from kenning.storage.postgres import lexical, open_pg_store

EXACT = 10**12  # a depth no word reaches: the exact path
ASKED = 100


def _record(engine: SearchEngine, queries: list[str], modes: tuple[str, ...]) -> list[tuple]:
    calls: list[tuple] = []
    original = lexical.ranked

    def recording(store, items, weights, limit, chunk_filter=None, *, also_scoring=()):
        calls.append((items, weights, chunk_filter, also_scoring))
        return original(store, items, weights, limit, chunk_filter, also_scoring=also_scoring)

    lexical.ranked = recording
    try:
        for mode in modes:
            for text in queries:
                engine.search(text, SearchOptions(limit=10, mode=mode))
    finally:
        lexical.ranked = original
    return calls


def _timed(call, *args, **kwargs):
    started = time.perf_counter()
    out = call(*args, **kwargs)
    return out, (time.perf_counter() - started) * 1000


def lists(pg, calls: list[tuple], depth: int) -> None:
    counts = dict(pg.execute("SELECT term, chunks FROM terms"))
    pruned_calls = [c for c in calls if any(len(i) == 1 and counts.get(i[0], 0) > depth for i in c[0])]
    recalls, tie_aware, exact_ms, pruned_ms = [], [], [], []
    for number, (items, weights, chunk_filter, also) in enumerate(pruned_calls):
        results = {}
        for path in ("exact", "pruned") if number % 2 == 0 else ("pruned", "exact"):
            lexical.PRUNE_DEPTH = EXACT if path == "exact" else depth
            results[path], ms = _timed(lexical.ranked, pg, items, weights, ASKED, chunk_filter, also_scoring=also)
            (exact_ms if path == "exact" else pruned_ms).append(ms)
        truth = [r.chunk_id for r in results["exact"]]
        got = {r.chunk_id for r in results["pruned"]}
        if truth:
            recalls.append(len(got & set(truth)) / len(truth))
            floor = results["exact"][-1].score
            tie_aware.append(min(1.0, sum(1 for r in results["pruned"] if r.score >= floor - 1e-9) / len(truth)))
    lexical.PRUNE_DEPTH = depth
    if not recalls:
        print(f"depth {depth}: no list of these queries is pruned")
        return
    ordered = sorted(recalls)
    print(
        f"depth {depth}: {len(pruned_calls)} of {len(calls)} lists pruned; recall of the exact top {ASKED}"
        f" {statistics.fmean(recalls):.3f} (tie-aware {statistics.fmean(tie_aware):.3f}, p5 {ordered[len(ordered) // 20]:.2f});"
        f" one list p50/p95 exact {percentile(exact_ms, 50):.0f}/{percentile(exact_ms, 95):.0f} ms,"
        f" pruned {percentile(pruned_ms, 50):.0f}/{percentile(pruned_ms, 95):.0f} ms (load {os.getloadavg()[0]:.1f})"
    )


def searches(
    engine: SearchEngine, queries: list[str], depth: int, sqlite: SearchEngine | None, modes: tuple[str, ...]
) -> None:
    """Whole searches, the team store's exact and pruned paths (and the SQLite store, when
    given) alternated query by query, the order turned each query."""
    paths = ["exact", "pruned"] + (["sqlite"] if sqlite is not None else [])
    for mode in modes:
        times: dict[str, list[float]] = {path: [] for path in paths}
        for number, text in enumerate(queries):
            for path in paths[number % len(paths) :] + paths[: number % len(paths)]:
                lexical.PRUNE_DEPTH = EXACT if path == "exact" else depth
                searcher = sqlite if path == "sqlite" and sqlite is not None else engine
                times[path].append(_timed(searcher.search, text, SearchOptions(limit=10, mode=mode))[1])
        print(
            f"{mode:<8} p50/p95 "
            + ", ".join(
                f"{'team store ' + p if p != 'sqlite' else 'SQLite'}{' at ' + str(depth) if p == 'pruned' else ''}"
                f" {percentile(times[p], 50):.0f}/{percentile(times[p], 95):.0f} ms"
                for p in paths
            )
            + f" ({len(queries)} queries, load {os.getloadavg()[0]:.1f})"
        )
    lexical.PRUNE_DEPTH = depth


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sqlite", required=True, type=Path)
    parser.add_argument("--url", required=True)
    parser.add_argument("--queries", type=int, default=120)
    parser.add_argument("--depths", type=int, nargs="+", default=[lexical.PRUNE_DEPTH])
    parser.add_argument("--lists-only", action="store_true")
    parser.add_argument("--modes", nargs="+", default=["lexical", "hybrid"])
    parser.add_argument("--with-sqlite", action="store_true", help="the SQLite store's searches in the alternation too")
    args = parser.parse_args()
    sqlite = open_store(args.sqlite / "bench.db")
    queries = make_queries(sqlite, args.queries)
    real = resolve_embedder("default", model_cache_dir(), threads=QUERY_THREADS)
    real.load()
    pg = open_pg_store(args.url)
    engine = SearchEngine(pg, RealCostEmbedder(real))
    personal = SearchEngine(sqlite, RealCostEmbedder(real)) if args.with_sqlite else None
    for warmed in filter(None, (engine, personal)):  # vocabulary, vector scan, server caches
        warmed.search("warm up the caches", SearchOptions(limit=10))
        warmed.search("zzyzx warm up the vocabulary", SearchOptions(limit=10))
    lexical.PRUNE_DEPTH = EXACT
    modes = tuple(args.modes)
    calls = _record(engine, queries, modes)
    print(f"{len(calls)} keyword lists asked by {len(queries)} queries ({', '.join(modes)})")
    for depth in args.depths:
        lists(pg, calls, depth)
    if not args.lists_only:
        searches(engine, queries, args.depths[0], personal, modes)
    pg.close()
    sqlite.close()


if __name__ == "__main__":
    main()
