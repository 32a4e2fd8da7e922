"""Kenning at 100k, 300k and 1M chunks: latency, memory, disk by table, indexing rate.

    python tests/benchmarks/bench_scale.py [--sizes 100000 300000 1000000] [--cache DIR] [--queries 120]

Each store is built once into --cache and reused by later runs (delete a size's
folder to rebuild it).  Text: the real text bench_search.py indexes (Python's
standard library, the AWS CLI's examples, numpy, pip: ~100k chunks); larger sizes
add copies of those files in which every word of six letters or more carries the
copy's number, so each copy is new text (nothing is reused from the embedding
cache) with the same natural word-frequency distribution.  Vectors: the hashed
bag-of-words vectors of bench_search.py, which agree with the text.  Every hybrid
query is embedded by the real default model, and that time is in its figure.

Prints per size: lexical and hybrid p50/p95, the search process's resident memory
(and what the vector scan holds), the store's size on disk by table (SQLite's
dbstat), and the phase-1 rate measured when the store was built.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from bench_search import RealCostEmbedder, _fill_hashed_vectors, make_queries, measure
from corpus import real_text_folders

from kenning.embedding import QUERY_THREADS, resolve_embedder
from kenning.ingest.indexer import Indexer
from kenning.ingest.sources import add_source
from kenning.search.engine import SearchEngine, SearchOptions
from kenning.storage import open_store
from kenning.storage.paths import model_cache_dir

_LONG_WORD = re.compile(r"\b([A-Za-z]{6,})\b")
TEXT_SUFFIXES = (".py", ".rst", ".txt", ".md")


def _write_copy(sources: list[tuple[Path, tuple[str, ...]]], target: Path, copy: int) -> None:
    """One renamed copy of the real text (see the module docstring)."""
    for root, include in sources:
        prefixes = [g.split("/**")[0] for g in include] or [""]
        for prefix in prefixes:
            for path in sorted((root / prefix).rglob("*")):
                if path.suffix not in TEXT_SUFFIXES or not path.is_file() or "site-packages" in path.parts[-4:-1]:
                    continue
                if not include and "site-packages" in path.relative_to(root).parts:
                    continue
                try:
                    text = path.read_text(encoding="utf-8")
                except (UnicodeDecodeError, OSError):
                    continue
                out = target / root.name / path.relative_to(root)
                out.parent.mkdir(parents=True, exist_ok=True)
                out.write_text(_LONG_WORD.sub(lambda m: f"{m.group(1)}{copy}", text), encoding="utf-8")


def _copies_present(store) -> int:
    names = [r[0] for r in store.execute("SELECT name FROM sources WHERE name LIKE 'copy%'")]
    return max((int(n[4:]) for n in names if n[4:].isdigit()), default=0)


def _seed(folder: Path, grow_from: Path | None) -> None:
    """Start a larger store from a copy of a smaller one (its copies of the text are reused)."""
    if grow_from is None or (folder / "bench.db").exists():
        return
    source = open_store(grow_from / "bench.db")
    source.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    source.close()
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(grow_from / "bench.db", folder / "bench.db")


def build(folder: Path, size: int, grow_from: Path | None = None) -> dict:
    """The store of `size` chunks in folder (built once, resumed if interrupted); returns its build facts.

    The phase-1 rate is that of the chunks added by this run (a grown store's own part)."""
    facts_file = folder / "facts.json"
    db = folder / "bench.db"
    if facts_file.exists() and db.exists():
        return json.loads(facts_file.read_text())
    _seed(folder, grow_from)
    folder.mkdir(parents=True, exist_ok=True)
    store = open_store(db)
    started_with = store.scalar("SELECT count(*) FROM chunks")
    if not started_with:
        for path, include in real_text_folders():
            add_source(store, path, include=include)
    started = time.perf_counter()
    Indexer(store, None).run(embed=False)
    copy = _copies_present(store)
    while store.scalar("SELECT count(*) FROM chunks") < size:
        copy += 1
        target = folder / f"copy{copy}"
        _write_copy(real_text_folders(), target, copy)
        add_source(store, target, name=f"copy{copy}")
        Indexer(store, None).run(embed=False)
        print(f"  {store.scalar('SELECT count(*) FROM chunks'):,} chunks after copy {copy}", flush=True)
    seconds = time.perf_counter() - started
    chunks = store.scalar("SELECT count(*) FROM chunks")
    started_vectors = time.perf_counter()
    _fill_hashed_vectors(store)
    store.close()
    facts = {
        "chunks": chunks,
        "phase1_seconds": seconds,
        "phase1_chunks_per_second": (chunks - started_with) / seconds,
        "chunks_built_here": chunks - started_with,
        "bench_vectors_seconds": time.perf_counter() - started_vectors,
    }
    facts_file.write_text(json.dumps(facts))
    return facts


def disk_by_table(store) -> list[tuple[str, int]]:
    groups: dict[str, int] = {}
    for name, size in store.execute("SELECT name, sum(pgsize) FROM dbstat GROUP BY name"):
        key = next((p for p in ("chunks_fts", "chunks_tri", "chunk_vectors") if name.startswith(p)), name)
        key = "embeddings" if "embeddings" in name else key
        groups[key] = groups.get(key, 0) + size
    return sorted(groups.items(), key=lambda item: -item[1])


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def report(folder: Path, facts: dict, queries_wanted: int) -> None:
    db = folder / "bench.db"
    store = open_store(db)
    embedder = resolve_embedder("default", model_cache_dir(), threads=QUERY_THREADS)
    embedder.load()
    rss_before = rss_mb()
    engine = SearchEngine(store, RealCostEmbedder(embedder))
    queries = make_queries(store, queries_wanted)
    engine.search("warm up the caches", SearchOptions(limit=10))
    engine.search("zzyzx warm up the vocabulary", SearchOptions(limit=10))
    text_bytes = store.scalar("SELECT sum(length(text)) FROM chunks")
    print(f"\n== {facts['chunks']:,} chunks ({db}) ==")
    for mode in ("lexical", "hybrid"):
        r = measure(engine, queries, mode)
        print(f"{mode:<8} p50 {r['p50']:6.1f} ms  p95 {r['p95']:6.1f} ms   ({len(queries)} queries)")
    scan = store.vector_scan(engine.vectors.fingerprint).memory_bytes
    print(
        f"search process RSS {rss_mb():,.0f} MB (model loaded before the store: {rss_before:,.0f} MB);"
        f" the vector scan holds {scan / 2**20:,.1f} MiB"
    )
    total = os.path.getsize(db)
    print(f"store {total / 1e6:,.0f} MB on disk for {text_bytes / 1e6:,.0f} MB of text ({total / text_bytes:.1f}x):")
    for name, size in disk_by_table(store)[:9]:
        print(f"    {name:<28} {size / 1e6:8.1f} MB")
    if facts.get("phase1_chunks_per_second"):
        rate, seconds = facts["phase1_chunks_per_second"], facts["phase1_seconds"]
        print(f"phase 1: {rate:,.0f} chunks/s ({seconds:.0f} s when built)")
    else:
        print("phase 1: not measured (a store built elsewhere was placed in the cache)")
    store.close()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", nargs="+", type=int, default=[100_000, 300_000, 1_000_000])
    parser.add_argument("--cache", default="/tmp/kenning-bench-scale")
    parser.add_argument("--queries", type=int, default=120)
    parser.add_argument("--folder-prefix", default="", help="e.g. before- : compare a store kept from older code")
    parser.add_argument("--grow", action="store_true", help="start each size from a copy of the previous one")
    parser.add_argument("--build-only", action="store_true", help="build the stores, measure nothing")
    args = parser.parse_args()
    previous: Path | None = None
    for size in args.sizes:
        folder = Path(args.cache) / f"{args.folder_prefix}{size // 1000}k"
        facts = build(folder, size, previous if args.grow else None)
        previous = folder
        if not args.build_only:
            report(folder, facts, args.queries)


if __name__ == "__main__":
    main()
