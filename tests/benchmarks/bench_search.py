"""Query latency on a store of >=100k chunks of real text with a vector for each.

    python tests/benchmarks/bench_search.py [--store DIR] [--chunks 100000] [--queries 240]

Builds (once, then reuses) a store from real text on this machine: Python's standard
library and the AWS CLI's rst examples, indexed by Kenning's own phase 1.  Vectors:
running the real model over 100k chunks takes hours here, so chunks get bag-of-words
vectors hashed into the model's 384 dimensions.  A KNN scan costs the same whatever
the numbers are, but the semantic list must agree with the keyword list the way a
real model's does, or hybrid-only steps (the feedback list needs chunks both lists
found) would never run.  Every query is embedded by the real default model and that
time is in every hybrid figure; the scan then uses the query's own bag-of-words
vector, in the space the chunks were given.
"""

from __future__ import annotations

import argparse
import random
import re
import statistics
import sys
import time
import zlib
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from corpus import real_text_folders

from kenning.embedding import QUERY_THREADS, resolve_embedder
from kenning.ingest.indexer import Indexer
from kenning.ingest.sources import add_source
from kenning.search.engine import SearchEngine, SearchOptions
from kenning.search.metrics import percentile
from kenning.search.query import STOPWORDS
from kenning.storage import open_store
from kenning.storage import vectors as vectors_repo
from kenning.storage.paths import model_cache_dir

QUESTIONS = [
    "how do I parse command line arguments",
    "read a csv file into dictionaries",
    "how to make an http request with a timeout",
    "compress a file with gzip",
    "run a subprocess and capture its output",
    "format a date as iso 8601",
    "how does the garbage collector find reference cycles",
    "create a temporary directory",
    "escape html special characters",
    "send an email over smtp with tls",
    "how to copy an s3 bucket to another region",
    "list running ec2 instances",
    "walk a directory tree recursively",
    "decode json with custom objects",
    "how are unicode strings normalized",
    "parse an xml document and find elements",
    "schedule a function to run later",
    "lock a resource shared between threads",
    "what happens when a generator is closed",
    "measure the execution time of code",
    "create a lambda function from a zip file",
    "attach an iam policy to a role",
    "serialize objects with pickle safely",
    "compute a sha256 hash of a file",
    "read configuration from an ini file",
    "log messages to a rotating file",
    "how do context managers release resources",
    "url encode query parameters",
    "match text with regular expressions",
    "sort a list of dictionaries by key",
    "describe a cloudformation stack",
    "upload a file to an s3 bucket",
    "wait for several asynchronous tasks",
    "pretty print nested data structures",
    "create a socket server",
    "handle keyboard interrupt gracefully",
    "compare two text files and show differences",
    "generate random passwords securely",
    "how to mock an object in unit tests",
    "convert between timezones",
]


def build_store(folder: Path, target_chunks: int) -> Path:
    db = folder / "bench.db"
    store = open_store(db)
    if store.scalar("SELECT count(*) FROM chunks") < target_chunks:
        for path, include in real_text_folders():
            if not store.scalar("SELECT 1 FROM sources WHERE root = ?", (str(path.resolve()),)):
                add_source(store, path, include=include)
        started = time.perf_counter()
        Indexer(store, None).run(embed=False)
        print(f"phase 1 indexed in {time.perf_counter() - started:.0f}s", file=sys.stderr)
    _fill_hashed_vectors(store)
    chunks = store.scalar("SELECT count(*) FROM chunks")
    print(f"store: {chunks} chunks, {vectors_repo.count_pending(store)} without vectors", file=sys.stderr)
    store.close()
    return db


BENCH_VECTORS_KEY = "bench.vectors"
BENCH_VECTORS = "hashed-words-v1"


def hashed_vector(text: str, dim: int) -> np.ndarray:
    """Content words hashed (crc32, stable across processes) into dim signed buckets."""
    vec = np.zeros(dim, dtype=np.float32)
    for word in re.findall(r"[a-z][a-z0-9_]{2,}", text.lower()):
        if word not in STOPWORDS:
            h = zlib.crc32(word.encode())
            vec[h % dim] += 1.0 if (h >> 16) & 1 else -1.0
    norm = np.linalg.norm(vec)
    if norm == 0:
        vec[0], norm = 1.0, 1.0
    return vec / norm


class RealCostEmbedder:
    """Pays the real model for every query, then answers in the chunks' hashed space."""

    def __init__(self, real) -> None:
        self.real = real
        self.fingerprint = real.fingerprint
        self.dim = real.dim

    def embed_query(self, text: str) -> np.ndarray:
        self.real.embed_query(text)
        return hashed_vector(text, self.dim)


def _fill_hashed_vectors(store) -> None:
    embedder = resolve_embedder("default", model_cache_dir())
    vectors_repo.prepare(store, embedder.fingerprint, embedder.dim)
    if vectors_repo.get_setting(store, BENCH_VECTORS_KEY) != BENCH_VECTORS:
        with store.atomic():  # vectors of an older bench version (random ones) go
            store.execute("DELETE FROM embeddings WHERE fingerprint = ?", (embedder.fingerprint,))
            store.execute("UPDATE chunks SET vector_fp = NULL")
            vectors_repo.set_setting(store, BENCH_VECTORS_KEY, BENCH_VECTORS)
    while True:
        page = vectors_repo.pending_chunks(store, 0, 5000)
        if not page:
            return
        items = [
            (row.chunk_id, row.input_sha, hashed_vector(f"{row.title} {row.text}", embedder.dim).tobytes())
            for row in page
        ]
        vectors_repo.write_vectors(store, embedder.fingerprint, items)


def make_queries(store, count: int, seed: int = 1) -> list[str]:
    rng = random.Random(seed)
    # The same store gives the same queries on every run (SQL's random() would not),
    # so runs before and after a change time the same searches.
    shuffled = f"ORDER BY (id * 1103515245 + {seed}) % 2147483647 LIMIT 3000"
    texts = [r[0] for r in store.execute(f"SELECT text FROM chunks WHERE kind = 'prose' {shuffled}")]
    code = [
        r[0] for r in store.execute(f"SELECT title FROM chunks WHERE kind = 'code' AND title LIKE '%: %' {shuffled}")
    ]
    words = [w for t in texts for w in re.findall(r"[a-z]{4,}", t.lower()) if w not in STOPWORDS]
    identifiers = [t.split(": ", 1)[1].replace("class ", "").split(",")[0].strip() for t in code]
    identifiers = [i for i in identifiers if len(i) >= 4]
    queries = list(QUESTIONS)
    while len(queries) < count:
        kind = rng.random()
        if kind < 0.55 or not identifiers:  # a store without code (notes only) gets word queries
            queries.append(" ".join(rng.sample(words, rng.randint(2, 4))))
        else:
            queries.append(rng.choice(identifiers))
    return queries[:count]


def measure(engine: SearchEngine, queries: list[str], mode: str) -> dict[str, float]:
    times = []
    with_feedback = []  # queries whose feedback list ran: the slowest hybrid path
    steps: dict[str, list[float]] = {}
    for q in queries:
        started = time.perf_counter()
        result = engine.search(q, SearchOptions(limit=10, mode=mode))
        times.append((time.perf_counter() - started) * 1000)
        if result.expansion:
            with_feedback.append(times[-1])
        for step, ms in result.timings_ms.items():
            steps.setdefault(step, []).append(ms)
    out = {
        "p50": percentile(times, 50),
        "p95": percentile(times, 95),
        "max": max(times),
        "mean": statistics.fmean(times),
    }
    if with_feedback:
        out["feedback"] = (
            f"feedback list ran for {len(with_feedback)} of {len(queries)} queries:"
            f" p50 {percentile(with_feedback, 50):.1f} ms  p95 {percentile(with_feedback, 95):.1f} ms"
        )
    out["steps"] = "  ".join(
        f"{k} {percentile(v, 50):.1f}/{percentile(v, 95):.1f}" for k, v in steps.items() if k != "total"
    )
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--store", default="/tmp/kenning-bench-100k")
    parser.add_argument("--chunks", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=240)
    args = parser.parse_args()
    folder = Path(args.store)
    folder.mkdir(parents=True, exist_ok=True)
    db = build_store(folder, args.chunks)
    store = open_store(db)
    embedder = resolve_embedder("default", model_cache_dir(), threads=QUERY_THREADS)  # as `kenning search` and the app
    embedder.load()
    engine = SearchEngine(store, RealCostEmbedder(embedder))
    queries = make_queries(store, args.queries)
    engine.search("warm up the caches", SearchOptions(limit=10))  # loads the vector matrix once
    engine.search("zzyzx warm up the vocabulary", SearchOptions(limit=10))  # and the typo vocabulary
    started = time.perf_counter()
    for q in queries[:50]:
        embedder.embed_query(q)
    embed_ms = (time.perf_counter() - started) * 1000 / 50
    print(
        f"{store.scalar('SELECT count(*) FROM chunks')} chunks, {len(queries)} queries; query embedding mean {embed_ms:.1f} ms"
    )
    for mode in ("lexical", "hybrid", "vector"):
        r = measure(engine, queries, mode)
        print(
            f"{mode:<8} p50 {r['p50']:6.1f} ms  p95 {r['p95']:6.1f} ms  mean {r['mean']:6.1f} ms  max {r['max']:6.1f} ms"
        )
        print(f"         steps p50/p95 ms: {r['steps']}")
        if "feedback" in r:
            print(f"         {r['feedback']}")


if __name__ == "__main__":
    main()
