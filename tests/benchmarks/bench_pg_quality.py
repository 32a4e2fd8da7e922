"""The team store ranks as the personal one: nDCG@10 of both backends, in one run (#23 item 3).

    python tests/benchmarks/bench_pg_quality.py [FOLDER ...] [--cache DIR] [--pg-data DIR]

For each collection (default: every one under ../shared/data) the SQLite store of
bench_quality.py is made or reused from --cache (the same key, so a copy of that
benchmark's cache serves), and its documents, chunks and vectors are written into a
PostgreSQL team store on a private server (pgserver; data in --pg-data) through the
team store's own writes (pg_copy.py): the two stores hold the same chunks and the
same vectors, and differ only in their backend.  Then lexical, vector and hybrid search with the shipped
defaults are measured on both, by the code `kenning eval` uses, and each figure of the
team store is checked to be within 0.01 nDCG@10 of the SQLite store's (or better).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parents[1]))
from bench_quality import DATA, kenning_store

from kenning.cli.evaluate import default_options, load_dataset, measure
from kenning.embedding import resolve_embedder
from kenning.search.engine import SearchEngine
from kenning.storage.paths import model_cache_dir
from kenning.storage.postgres import open_pg_store
from pgtesting import copy_store

MODES = ("lexical", "vector", "hybrid")
METRICS = ("ndcg@10", "recall@100", "mrr@10")
TOLERANCE = 0.01


def pg_server(data: Path) -> str:
    """The benchmark's server (its data kept between runs, the server stopped when the
    benchmark ends); the URL of its maintenance database."""
    import pgserver

    os.environ.setdefault("XDG_RUNTIME_DIR", str(data.parent))
    return pgserver.get_server(data, cleanup_mode="stop").get_uri()


def _database(admin_url: str, name: str) -> str:
    import psycopg

    with psycopg.connect(admin_url, autocommit=True) as conn:
        if not conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone():
            conn.execute(f'CREATE DATABASE "{name}"')
    return admin_url.replace("/postgres?", f"/{name}?")


def team_store(where: Path, admin_url: str):
    """The team store of the collection: the SQLite store's documents, chunks and vectors
    written through the team store's own writes (bench: pg_copy.py)."""
    url = _database(admin_url, f"quality_{where.name.replace('-', '_')}"[:60])
    pg = open_pg_store(url)
    if not pg.sources.list():
        facts = copy_store(where / "eval.db", pg)
        print(f"  team store: {facts['chunks']} chunks copied in {facts['text_seconds']:.0f}s", file=sys.stderr)
    return pg


def run_collection(folder: Path, embedder, cache: Path, admin_url: str) -> list[bool]:
    corpus, queries, qrels = load_dataset(folder)
    print(f"\n== {folder.name}: {len(corpus)} documents, {len(qrels)} judged queries ==")
    sqlite_store, where = kenning_store(folder, corpus, embedder, cache)
    pg = team_store(where, admin_url)
    counts = (sqlite_store.chunks.count(), pg.chunks.count())
    vectors = (sqlite_store.vectors.count(embedder.fingerprint), pg.vectors.count(embedder.fingerprint))
    print(f"chunks sqlite/postgresql {counts[0]}/{counts[1]}, vectors {vectors[0]}/{vectors[1]}")
    engines = {"sqlite": SearchEngine(sqlite_store, embedder), "postgresql": SearchEngine(pg, embedder)}
    print(f"{'mode':<8} {'backend':<11} " + " ".join(f"{m:>10}" for m in METRICS) + f" {'p50 ms':>8} {'p95 ms':>8}")
    verdicts = []
    for mode in MODES:
        rows = {name: measure(engine, queries, qrels, default_options(mode)) for name, engine in engines.items()}
        for name, row in rows.items():
            figures = " ".join(f"{row[m]:>10.4f}" for m in METRICS)
            print(f"{mode:<8} {name:<11} {figures} {row['p50_ms']:>8.1f} {row['p95_ms']:>8.1f}")
        delta = rows["postgresql"]["ndcg@10"] - rows["sqlite"]["ndcg@10"]
        ok = delta >= -TOLERANCE
        verdicts.append(ok)
        print(f"{mode:<8} {'Δ nDCG@10':<11} {delta:>+10.4f}  {'PASS' if ok else 'FAIL'} (within {TOLERANCE} or better)")
    sqlite_store.close()
    pg.close()
    return verdicts


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("folders", nargs="*", type=Path)
    parser.add_argument("--cache", type=Path, default=Path("/tmp/kenning-bench-quality"))
    parser.add_argument("--pg-data", type=Path, default=Path("/tmp/kenning-bench-pg-quality/data"))
    args = parser.parse_args()
    folders = args.folders or sorted(p for p in DATA.iterdir() if (p / "corpus.jsonl").exists())
    args.cache.mkdir(parents=True, exist_ok=True)
    args.pg_data.parent.mkdir(parents=True, exist_ok=True)
    print(f"load average {os.getloadavg()[0]:.1f}")
    admin_url = pg_server(args.pg_data)
    embedder = resolve_embedder("default", model_cache_dir())
    verdicts = []
    for folder in folders:
        verdicts += run_collection(folder, embedder, args.cache, admin_url)
    print(f"\nteam store within {TOLERANCE} nDCG@10 of the SQLite store (or better): {sum(verdicts)}/{len(verdicts)}")
    print(f"load average {os.getloadavg()[0]:.1f} at the end")


if __name__ == "__main__":
    main()
