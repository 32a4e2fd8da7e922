"""Phase 2: give every chunk lacking a current vector one, resumably.

Pending chunks are read a page at a time, sorted by length inside the page (similar
lengths pad less, and the model's cost grows with the longest text of a batch), looked
up in the embedding cache, and only then embedded.  Each batch commits on its own, so
a killed process loses at most one batch and never writes a vector twice.
"""

from __future__ import annotations

import time

import numpy as np

from kenning.core.progress import CancelToken, Progress, ProgressCallback
from kenning.core.types import EmbedReport
from kenning.embedding import Embedder
from kenning.ingest.embedtext import embedding_input
from kenning.storage import vectors
from kenning.storage.connection import Store

PAGE_SIZE = 256
BATCH_SIZE = 16  # docs/architecture.md §10: larger batches are no faster and cost memory


def embed_pending(
    store: Store,
    embedder: Embedder,
    on_progress: ProgressCallback,
    cancel: CancelToken,
    contextual: bool = True,
) -> EmbedReport:
    """Embed what is pending; return counts and timings for reports and benchmarks."""
    vectors.prepare(store, embedder.fingerprint, embedder.dim)
    total = vectors.count_pending(store)
    stats = EmbedReport(pending_at_start=total)
    started = time.monotonic()
    last_id = 0
    while not cancel.cancelled:
        page = vectors.pending_chunks(store, last_id, PAGE_SIZE)
        if not page:
            break
        last_id = page[-1].chunk_id
        _embed_page(store, embedder, page, stats, cancel, on_progress, total, started, contextual)
    stats.seconds = time.monotonic() - started
    if not cancel.cancelled:
        vectors.collect_unused_embeddings(store)
    return stats


def _embed_page(store, embedder, page, stats: EmbedReport, cancel, on_progress, total, started, contextual) -> None:
    rows = [
        (p.chunk_id, embedding_input(p.title, p.text, p.document_kind, p.rel_path, contextual), p.input_sha)
        for p in page
    ]
    paths = {p.chunk_id: p.rel_path for p in page}
    cached = vectors.cached_vectors(store, embedder.fingerprint, [sha for _, _, sha in rows])
    reuse = [(cid, sha, cached[sha]) for cid, _, sha in rows if sha in cached]
    if reuse:
        vectors.write_vectors(store, embedder.fingerprint, reuse)
        stats.reused += len(reuse)
    todo = sorted((row for row in rows if row[2] not in cached), key=lambda row: len(row[1]))
    for start in range(0, len(todo), BATCH_SIZE):
        if cancel.cancelled:
            return
        batch = todo[start : start + BATCH_SIZE]
        inputs = [text for _, text, _ in batch]
        matrix = embedder.embed_batch(inputs)
        stats.tokens += sum(embedder.count_tokens(inputs))
        items = [
            (cid, sha, np.ascontiguousarray(row, dtype=np.float32).tobytes())
            for (cid, _, sha), row in zip(batch, matrix)
        ]
        vectors.write_vectors(store, embedder.fingerprint, items)
        stats.embedded += len(batch)
        _progress(on_progress, stats, total, started, paths[batch[-1][0]])


def _progress(on_progress, stats: EmbedReport, total, started, current_path) -> None:
    done = stats.embedded + stats.reused
    elapsed = max(time.monotonic() - started, 1e-6)
    on_progress(
        Progress(
            phase="embeddings",
            done=done,
            total=total,
            current=current_path,  # a file name, never a chunk's raw text
            rate=stats.embedded / elapsed,
            unit="chunks",
        )
    )
