"""The team store (PostgreSQL + pgvector) at scale (100k, 345k, 1M chunks), beside the SQLite store.

    python tests/benchmarks/bench_pg_scale.py --sqlite STORE_DIR [--pg-data DIR] [--queries 120]
        [--loader bulk|writer] [--load-only]

STORE_DIR holds a store built by bench_scale.py (bench.db: its real text, copies of it,
hashed bag-of-words vectors); measure a copy of it (the SQLite side is opened as a
store, so migrations may write to it).  The same documents, chunks and vectors are
written into a PostgreSQL store on a private server (pgserver, data kept in --pg-data,
so a second run measures without loading again):

- --loader bulk (default, pg_bulk.py): COPY of the writer's own rows, indexes built
  after, each build timed (GIN words, GIN trigrams, HNSW); a stopped load resumes, also
  from a smaller store whose rows are the first of this one;
- --loader writer: through documents.replace, one document a transaction.

Then, in the same run: lexical and hybrid p50/p95 of the same queries on both stores,
alternated per query (hybrid queries embedded by the real default model, in the figure,
on both); the HNSW recall of the exact top 100 (a scan without the index) at several
ef_search; both stores' size.  The real write path's rate is bench_pg_index.py's.

The server is tuned as a small team server would be (SERVER_SETTINGS, printed).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parents[1]))

from pg_bulk import bulk_load

from kenning.storage.postgres import open_pg_store
from kenning.storage.postgres.records import get_setting, set_setting, store_size_bytes
from pgtesting import copy_store

# maintenance_work_mem: the HNSW graph of a million 384-d vectors (~2.5 GB) is built in memory;
# max_wal_size: the bulk load's ~10 GB of rows without a checkpoint every gigabyte.
SERVER_SETTINGS = {
    "shared_buffers": "3GB",
    "maintenance_work_mem": "5GB",
    "max_parallel_maintenance_workers": "1",
    "max_wal_size": "8GB",
}
LOADED_KEY = "bench_loaded"


def server(data: Path):
    """The benchmark's PostgreSQL server, tuned, with its URL (its data kept between runs,
    the server stopped when the benchmark ends)."""
    import pgserver
    from pgserver._commands import pg_ctl

    os.environ.setdefault("XDG_RUNTIME_DIR", str(data.parent))
    handle = pgserver.get_server(data, cleanup_mode="stop")
    url = handle.get_uri()
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        current = {k: conn.execute(f"SHOW {k}").fetchone()[0] for k in SERVER_SETTINGS}
        changed = [k for k, v in SERVER_SETTINGS.items() if current[k] != v]
        for key in changed:
            conn.execute(f"ALTER SYSTEM SET {key} = '{SERVER_SETTINGS[key]}'")
        if not conn.execute("SELECT 1 FROM pg_database WHERE datname = 'kenning'").fetchone():
            conn.execute("CREATE DATABASE kenning")
    if changed:
        pg_ctl(["-w", "restart", "-l", str(data / "log")], pgdata=data, user=getattr(handle, "system_user", None))
    return handle, url.replace("/postgres?", "/kenning?")


def load(source: Path, url: str, loader: str) -> dict:
    """Copy every document, chunk and vector of the SQLite store into the team store."""
    pg = open_pg_store(url)
    if get_setting(pg, LOADED_KEY):
        facts = json.loads(get_setting(pg, LOADED_KEY) or "{}")
        pg.close()
        return facts
    if loader == "bulk":
        facts = {"loader": "bulk (COPY of the writer's rows, indexes built after)", **bulk_load(source, pg)}
    else:
        facts = {
            "loader": "writer (documents.replace, one document a transaction)",
            **copy_store(source, pg, progress=True),
        }
    set_setting(pg, LOADED_KEY, json.dumps(facts))
    pg.close()
    return facts


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sqlite", required=True, type=Path, help="a bench_scale.py store folder (bench.db)")
    parser.add_argument("--pg-data", type=Path, default=Path("/tmp/kenning-bench-pg/data"))
    parser.add_argument("--queries", type=int, default=120)
    parser.add_argument("--load-only", action="store_true")
    parser.add_argument("--loader", choices=("bulk", "writer"), default="bulk", help="bulk: COPY (pg_bulk.py)")
    args = parser.parse_args()
    args.pg_data.parent.mkdir(parents=True, exist_ok=True)
    _, url = server(args.pg_data)
    print(f"load average {os.getloadavg()[0]:.1f}; server settings {SERVER_SETTINGS}")
    facts = load(args.sqlite / "bench.db", url, args.loader)
    print(f"team store loaded by {facts.get('loader', 'writer')}:")
    print("  " + json.dumps({k: round(v, 1) if isinstance(v, float) else v for k, v in facts.items()}))
    if args.load_only:
        return
    from bench_pg_measure import measure_both

    measure_both(args.sqlite / "bench.db", url, args.queries)
    pg = open_pg_store(url)
    print(f"team store size on the server: {store_size_bytes(pg) / 1e6:,.0f} MB")
    pg.close()
    print(f"load average {os.getloadavg()[0]:.1f} at the end; {statistics.__name__} done")


if __name__ == "__main__":
    main()
