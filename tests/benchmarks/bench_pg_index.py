"""Indexing throughput into a team store through the real path (`kenning index`'s Indexer).

    python tests/benchmarks/bench_pg_index.py [--packages asyncio email ...] [--repeat 1] [--sqlite]

Indexes some packages of Python's standard library (real text, ~25k chunks by
default) into a new database on a private PostgreSQL server (pgserver), phase 1 only
(text, words, statistics: what the team store's writer does; the embedding model's
time is the same for either backend and is measured by bench_index.py), and prints
chunks/s of the whole run.  With --sqlite, the same folder into a SQLite store in the
same run, for the ratio.  Run it at two commits (PYTHONPATH) for a before/after.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1]))

from kenning.ingest.indexer import Indexer
from kenning.ingest.sources import add_source
from kenning.storage import open_store
from kenning.storage.postgres import open_pg_store

PACKAGES = ("asyncio", "email", "idlelib", "tkinter", "unittest", "xml", "multiprocessing")


def index_once(store, root: Path, packages: tuple[str, ...]) -> tuple[int, float]:
    """(chunks written, seconds) of one phase-1 run over a new source."""
    add_source(store, root, name="stdlib", include=tuple(f"{p}/**" for p in packages))
    started = time.perf_counter()
    Indexer(store, None).run(embed=False)
    seconds = time.perf_counter() - started
    return sum(s.chunks for s in store.stats.per_source().values()), seconds


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--packages", nargs="+", default=list(PACKAGES))
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--sqlite", action="store_true", help="the same run into a SQLite store too")
    args = parser.parse_args()
    from pgtesting import start_server, stop_server

    root = Path(sysconfig.get_paths()["stdlib"])
    base = Path(tempfile.mkdtemp(prefix="kenning-pgidx-"))
    server = start_server(base / "data")
    rates: dict[str, list[float]] = {"postgresql": [], "sqlite": []}
    try:
        for rep in range(args.repeat):
            backends = ["postgresql", "sqlite"] if args.sqlite else ["postgresql"]
            for backend in backends if rep % 2 == 0 else reversed(backends):
                if backend == "postgresql":
                    store = open_pg_store(server.url(server.new_database()))
                else:
                    store = open_store(base / f"s{rep}.db")
                chunks, seconds = index_once(store, root, tuple(args.packages))
                store.close()
                rates[backend].append(chunks / seconds)
                print(
                    f"{backend:<11} {chunks:,} chunks in {seconds:,.1f} s: {chunks / seconds:,.0f} chunks/s"
                    f" (load {os.getloadavg()[0]:.1f})",
                    flush=True,
                )
    finally:
        stop_server(server)
    for backend, found in rates.items():
        if found:
            print(f"{backend}: median {statistics.median(found):,.0f} chunks/s over {len(found)} runs")


if __name__ == "__main__":
    main()
