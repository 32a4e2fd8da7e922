"""Resource bounds: the walk streams, indexing holds a few files' text at a time, and
phase 2 never hands the model more than BATCH_SIZE texts (PAGE_SIZE rows in memory).

Peak RSS with the real model is measured by tests/benchmarks/bench_memory.py.
"""

from __future__ import annotations

import os
import tracemalloc

import kenning.ingest.embedphase as embedphase
from kenning.embedding import FakeEmbedder
from kenning.ingest.indexer import Indexer
from kenning.ingest.sources import add_source
from kenning.ingest.walker import walk_source
from kenning_testing import document_count
from reliability.helpers import note, pick, write_files

FILE_BYTES = 150_000


def test_walk_yields_before_listing_the_whole_tree(tmp_path, monkeypatch):
    for d in range(50):
        write_files(tmp_path / "root" / f"d{d:02}", {"a.md": "a\n"})
    listed = []
    real = os.scandir
    monkeypatch.setattr(os, "scandir", lambda p=".": listed.append(p) or real(p))
    from kenning.core.types import Source

    walk = walk_source(Source(1, "folder", str(tmp_path / "root"), "r"), [])
    next(walk)
    assert len(listed) <= 3, "the walk listed the tree before yielding its first file"


def test_phase1_peak_python_memory_is_a_few_files_not_the_tree(store, tmp_path):
    n = pick(40, 200)
    body = ("lorem ipsum dolor sit amet " * (FILE_BYTES // 27)) + "\n"
    root = write_files(tmp_path / "root", {f"f{i:03}.md": f"# F{i}\n\n{body}" for i in range(n)})
    add_source(store, root)
    tracemalloc.start()
    try:
        Indexer(store, None).run(embed=False)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    total = n * FILE_BYTES
    assert document_count(store) == n
    # Measured: 2.2 MB peak for 40 and for 120 files of 150 kB.  Ceiling: 25 file sizes,
    # far below the tree (n file sizes) in long mode, and a fifth of it in short.
    assert peak < 25 * FILE_BYTES, (peak, total)
    assert peak < total, (peak, total)


def test_phase2_batches_and_pages_are_bounded(store, tmp_path, monkeypatch):
    root = write_files(tmp_path / "root", {f"n{i:03}.md": note(i, 120) for i in range(300)})
    add_source(store, root)
    Indexer(store, None).run(embed=False)
    pending = store.chunks.count()
    batches, pages = [], []

    class Recording(FakeEmbedder):
        def embed_batch(self, texts):
            batches.append(len(texts))
            return super().embed_batch(texts)

    real_page = store.queue.pending_in_order  # pages follow the embedding queue
    monkeypatch.setattr(store.queue, "pending_in_order", lambda ids: pages.append(len(ids)) or real_page(ids))
    run = Indexer(store, Recording).run()
    assert sum(batches) == pending + run.embedding.openings and pending > embedphase.PAGE_SIZE
    assert max(batches) <= embedphase.BATCH_SIZE == 16
    assert max(pages) <= embedphase.PAGE_SIZE
