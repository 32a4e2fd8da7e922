"""Indexing throughput on real text: files/s and chunks/s of phase 1, embedded chunks/s
and tokens/s of phase 2 (the real default model), and peak memory of each phase.

    python tests/benchmarks/bench_index.py [--embed-chunks 600]

Phase 1 indexes Python's standard library and the AWS CLI's rst examples (see
corpus.py).  Phase 2 embeds the first --embed-chunks chunks only (the model needs
hours for all of them on two cores) and, for comparison, runs the model raw over the
same inputs in the same batches, so the indexer's overhead shows as a ratio.
"""

from __future__ import annotations

import argparse
import resource
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from corpus import real_text_folders

from kenning.core.progress import CancelToken
from kenning.embedding import resolve_embedder
from kenning.ingest.embedphase import BATCH_SIZE, embed_pending
from kenning.ingest.embedtext import embedding_input
from kenning.ingest.indexer import Indexer
from kenning.ingest.sources import add_source
from kenning.storage import open_store
from kenning.storage.paths import model_cache_dir


class PeakRss:
    """Samples this process's resident memory while a phase runs."""

    def __init__(self) -> None:
        self.peak = 0
        self._stop = threading.Event()

    def _rss(self) -> int:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * resource.getpagesize()

    def _run(self) -> None:
        while not self._stop.wait(0.05):
            self.peak = max(self.peak, self._rss())

    def __enter__(self):
        self.peak = self._rss()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--embed-chunks", type=int, default=600)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        store = open_store(Path(tmp) / "bench.db")
        for folder, include in real_text_folders():
            add_source(store, folder, include=include)
        with PeakRss() as mem:
            started = time.perf_counter()
            run = Indexer(store, None).run(embed=False)
            seconds = time.perf_counter() - started
        files = sum(r.added for r in run.reports)
        chunks = sum(r.chunks_written for r in run.reports)
        mb = sum(r[0] for r in store.execute("SELECT sum(size) FROM documents")) / 1e6
        print(
            f"phase 1: {files} files ({mb:.0f} MB), {chunks} chunks in {seconds:.1f}s = "
            f"{files / seconds:.0f} files/s, {chunks / seconds:.0f} chunks/s; peak RSS {mem.peak / 1e6:.0f} MB"
        )
        _phase2(store, args.embed_chunks)


def _phase2(store, limit: int) -> None:
    embedder = resolve_embedder("default", model_cache_dir())
    embedder.load()
    # Leave only the first `limit` chunks pending: the others pretend to be done.
    keep = store.scalar("SELECT id FROM chunks ORDER BY id LIMIT 1 OFFSET ?", (limit,))
    from kenning.storage import vectors as vectors_repo

    vectors_repo.prepare(store, embedder.fingerprint, embedder.dim)
    with store.atomic():
        store.execute("UPDATE chunks SET vector_fp = 'skipped-by-benchmark' WHERE id >= ?", (keep,))
    with PeakRss() as mem:
        stats = embed_pending(store, embedder, lambda p: None, CancelToken())
    print(
        f"phase 2: {stats.embedded} chunks, {stats.tokens} tokens in {stats.seconds:.1f}s = "
        f"{stats.embedded / stats.seconds:.1f} chunks/s, {stats.tokens / stats.seconds:.0f} tokens/s; "
        f"peak RSS {mem.peak / 1e6:.0f} MB"
    )
    rows = store.execute(
        "SELECT c.title, c.text, d.kind, d.rel_path FROM chunks c JOIN documents d ON d.id = c.document_id"
        " WHERE c.id < ? ORDER BY c.id",
        (keep,),
    )
    inputs = sorted((embedding_input(*r) for r in rows), key=len)
    started = time.perf_counter()
    for i in range(0, len(inputs), BATCH_SIZE):
        embedder.embed_batch(inputs[i : i + BATCH_SIZE])
    raw = time.perf_counter() - started
    print(
        f"raw model on the same {len(inputs)} inputs: {len(inputs) / raw:.1f} chunks/s "
        f"(indexer/raw time ratio {stats.seconds / raw:.2f})"
    )


if __name__ == "__main__":
    main()
