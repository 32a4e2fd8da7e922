"""Should the SQLite backend's nearest-vector search run in sqlite-vec?  (issue #22)

    python tests/benchmarks/bench_vec0.py [--cache /work/cache/scale-22] [--sizes 100k 300k 1000k] [--queries 60]

For each store bench_scale.py built (bench.db in the size's folder), the sign codes the
scan keeps (vector_codes) are copied once into a sqlite-vec table beside it (vec0.db:
`bit[384]` codes, with is_test and source_id as metadata columns, the columns a
default search and a source: filter need, so the filter is applied inside the KNN).
Then, alternated query by query in one process, the same query codes are answered:

- scan: Kenning's in-memory Hamming scan (storage/vector_scan.py: six uint64 columns,
  xor + popcount, the filter a boolean mask), the best RESCORE_CANDIDATES rows;
- vec0: `code MATCH ? AND k = RESCORE_CANDIDATES AND <filter>` in sqlite-vec.

Both then need the same exact rescoring of those rows from the embedding cache, which
is left out of both figures.  Prints per size and filter: p50/p95 ms, and the share of
the scan's candidates vec0 also returned (Hamming ties may be broken differently).
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import statistics
import time
from pathlib import Path

import apsw
import numpy as np

from kenning.storage import quantised
from kenning.storage.vector_scan import RESCORE_CANDIDATES


def _vec_connection(path: Path) -> apsw.Connection:
    spec = importlib.util.find_spec("sqlite_vec")
    assert spec and spec.origin, "sqlite-vec is not installed"
    conn = apsw.Connection(str(path))
    conn.enable_load_extension(True)
    conn.load_extension(os.path.join(os.path.dirname(spec.origin), "vec0"))
    return conn


def _codes(store: apsw.Connection) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(ids, uint8 codes, is_test, source_id) of every current chunk, by id."""
    rows = store.execute(
        "SELECT k.chunk_id, k.code, d.is_test, d.source_id FROM vector_codes k"
        " JOIN chunks c ON c.id = k.chunk_id JOIN documents d ON d.id = c.document_id ORDER BY k.chunk_id"
    ).fetchall()
    ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
    codes = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.uint8).reshape(len(rows), -1)
    tests = np.fromiter((r[2] for r in rows), dtype=np.int64, count=len(rows))
    sources = np.fromiter((r[3] for r in rows), dtype=np.int64, count=len(rows))
    return ids, codes, tests, sources


def _build_vec0(path: Path, ids, codes, tests, sources) -> apsw.Connection:
    fresh = not path.exists()
    conn = _vec_connection(path)
    if fresh:
        started = time.perf_counter()
        conn.execute(
            f"CREATE VIRTUAL TABLE v USING vec0(chunk_id integer primary key, code bit[{codes.shape[1] * 8}],"
            " is_test integer, source_id integer)"
        )
        with conn:
            conn.executemany(
                "INSERT INTO v (chunk_id, code, is_test, source_id) VALUES (?, vec_bit(?), ?, ?)",
                ((int(i), c.tobytes(), int(t), int(s)) for i, c, t, s in zip(ids, codes, tests, sources)),
            )
        print(f"  built {path} in {time.perf_counter() - started:.0f} s", flush=True)
    return conn


def _percentiles(values: list[float]) -> tuple[float, float]:
    ordered = sorted(values)
    return statistics.median(ordered), ordered[int(0.95 * (len(ordered) - 1))]


def run(folder: Path, queries: int) -> None:
    # Read-only and without Kenning's migrations: the same store serves older code's runs.
    store = apsw.Connection(str(folder / "bench.db"), flags=apsw.SQLITE_OPEN_READONLY)
    ids, codes, tests, sources = _codes(store)
    store.close()
    conn = _vec_connection(folder / "vec0.db") if (folder / "vec0.db").exists() else None
    conn = conn or _build_vec0(folder / "vec0.db", ids, codes, tests, sources)
    layout = quantised.SignCodes.from_rows(codes)
    rng = np.random.default_rng(22)
    picks = rng.choice(len(ids), size=queries, replace=False)
    common_source = int(np.bincount(sources).argmax())
    small_source = int(sources[picks[0]])
    filters = {
        "default (no tests)": ("is_test = 0", tests == 0),
        f"source {small_source} ({(sources == small_source).mean():.1%})": (
            f"source_id = {small_source}",
            sources == small_source,
        ),
        f"source {common_source} ({(sources == common_source).mean():.1%})": (
            f"source_id = {common_source}",
            sources == common_source,
        ),
    }
    print(f"\n== {len(ids):,} codes ({folder}) ==")
    for name, (where, mask) in filters.items():
        scan_ms, vec_ms, agreement = [], [], []
        for row in picks:
            query = codes[row]
            started = time.perf_counter()
            chosen = quantised.hamming_candidates(layout, query, mask, RESCORE_CANDIDATES)
            scan_ids = set(ids[chosen].tolist())
            scan_ms.append((time.perf_counter() - started) * 1000)
            started = time.perf_counter()
            found = conn.execute(
                f"SELECT chunk_id FROM v WHERE code MATCH vec_bit(?) AND k = ? AND {where}",
                (query.tobytes(), RESCORE_CANDIDATES),
            ).fetchall()
            vec_ms.append((time.perf_counter() - started) * 1000)
            agreement.append(len(scan_ids & {r[0] for r in found}) / max(1, len(scan_ids)))
        s50, s95 = _percentiles(scan_ms)
        v50, v95 = _percentiles(vec_ms)
        print(
            f"{name:<28} scan p50 {s50:7.1f} p95 {s95:7.1f} ms | vec0 p50 {v50:7.1f} p95 {v95:7.1f} ms"
            f" | vec0/scan {v50 / s50:5.1f}x | same candidates {statistics.mean(agreement):.0%}",
            flush=True,
        )
    conn.close()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cache", default="/work/cache/scale-22")
    parser.add_argument("--sizes", nargs="+", default=["100k", "300k", "1000k"])
    parser.add_argument("--queries", type=int, default=60)
    args = parser.parse_args()
    print(f"k = {RESCORE_CANDIDATES} (the rows the scan rescores); load {os.getloadavg()[0]:.1f}")
    for size in args.sizes:
        run(Path(args.cache) / size, args.queries)


if __name__ == "__main__":
    main()
