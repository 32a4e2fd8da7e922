"""Phase 2: give every chunk lacking a current vector one, resumably.

Pending chunks are taken in the embedding queue's order (storage/queue.py: notes
before code, small sources before large, recent files before old: semantic search
becomes useful where it matters first), read a page at a time, sorted by length
inside one source's run of the page (similar
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
from kenning.ingest.embedtext import OPENING_PARTS, embedding_input, has_opening, input_sha, opening_input
from kenning.storage.api import PendingChunk, Store

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
    store.vectors.prepare(embedder.fingerprint, embedder.dim)
    total = store.vectors.count_pending()
    stats = EmbedReport(pending_at_start=total)
    started = time.monotonic()
    while not cancel.cancelled:
        order = store.queue.order()
        done_before = stats.embedded + stats.reused
        for start in range(0, len(order), PAGE_SIZE):
            if cancel.cancelled:
                break
            page = store.queue.pending_in_order(order[start : start + PAGE_SIZE].tolist())
            _embed_page(store, embedder, page, stats, cancel, on_progress, total, started, contextual)
        # Chunks written meanwhile (none under the indexing lock, but cheap to check)
        # get another pass; a pass that gave nothing a vector ends the phase.
        if not order or stats.embedded + stats.reused == done_before:
            break
    if not cancel.cancelled:
        _embed_openings(store, embedder, stats, cancel, contextual)
    stats.seconds = time.monotonic() - started
    if not cancel.cancelled:
        store.vectors.collect_unused()
    return stats


def _embed_openings(
    store: Store, embedder: Embedder, stats: EmbedReport, cancel: CancelToken, contextual: bool
) -> None:
    """Give every document cut in several chunks a vector of its opening (after its chunks':
    a search is useful without it).  A store indexed before openings existed has every
    document pending here once: its next index run embeds only them (a first chunk that
    fills the opening's window is read from the cache: its own vector)."""
    after = 0
    while not cancel.cancelled:
        page = store.vectors.pending_openings(embedder.fingerprint, after, PAGE_SIZE, OPENING_PARTS)
        if not page:
            return
        after = page[-1].document_id
        inputs: dict[int, tuple[str, str]] = {}
        for p in page:
            if has_opening(p.document_kind, p.chunk_count) and p.parts:
                text = opening_input(p.parts, p.document_kind, p.rel_path, contextual, p.doc_words)
                inputs[p.document_id] = (text, input_sha(text))
        cached = store.vectors.cached(embedder.fingerprint, [sha for _, sha in inputs.values()])
        items: list[tuple[int, str, bytes | None]] = [
            (p.document_id, inputs[p.document_id][1] if p.document_id in inputs else "", None)
            for p in page
            if p.document_id not in inputs or inputs[p.document_id][1] in cached
        ]
        todo = sorted(
            ((doc, text, sha) for doc, (text, sha) in inputs.items() if sha not in cached), key=lambda r: len(r[1])
        )
        for start in range(0, len(todo), BATCH_SIZE):
            if cancel.cancelled:
                break
            batch = todo[start : start + BATCH_SIZE]
            texts = [text for _, text, _ in batch]
            matrix = embedder.embed_batch(texts)
            stats.tokens += sum(embedder.count_tokens(texts))
            stats.openings += len(batch)
            items += [
                (doc, sha, np.ascontiguousarray(row, dtype=np.float32).tobytes())
                for (doc, _, sha), row in zip(batch, matrix)
            ]
        store.vectors.write_openings(embedder.fingerprint, items)


def _embed_page(
    store: Store,
    embedder: Embedder,
    page: list[PendingChunk],
    stats: EmbedReport,
    cancel: CancelToken,
    on_progress: ProgressCallback,
    total: int,
    started: float,
    contextual: bool,
) -> None:
    rows = [
        (
            p.chunk_id,
            embedding_input(p.title, p.text, p.document_kind, p.rel_path, contextual, p.doc_words),
            p.input_sha,
        )
        for p in page
    ]
    paths = {p.chunk_id: p.rel_path for p in page}
    cached = store.vectors.cached(embedder.fingerprint, [sha for _, _, sha in rows])
    reuse = [(cid, sha, cached[sha]) for cid, _, sha in rows if sha in cached]
    if reuse:
        store.vectors.write(embedder.fingerprint, reuse)
        stats.reused += len(reuse)
    tier = _tiers(page)
    todo = sorted((row for row in rows if row[2] not in cached), key=lambda row: (tier[row[0]], len(row[1])))
    model_seconds = 0.0
    for start in range(0, len(todo), BATCH_SIZE):
        if cancel.cancelled:
            return
        batch = todo[start : start + BATCH_SIZE]
        inputs = [text for _, text, _ in batch]
        batch_started = time.monotonic()
        matrix = embedder.embed_batch(inputs)
        model_seconds += time.monotonic() - batch_started
        stats.tokens += sum(embedder.count_tokens(inputs))
        items = [
            (cid, sha, np.ascontiguousarray(row, dtype=np.float32).tobytes())
            for (cid, _, sha), row in zip(batch, matrix)
        ]
        store.vectors.write(embedder.fingerprint, items)
        stats.embedded += len(batch)
        _progress(on_progress, stats, total, started, paths[batch[-1][0]])
    if todo:  # the model's own speed, for the time-to-semantic estimate (status, the app)
        store.queue.record_rate(len(todo) / max(model_seconds, 1e-6))


def _tiers(page: list[PendingChunk]) -> dict[int, int]:
    """Chunk id -> its run of one source's prose or code in queue order: the length sort
    stays inside a run, so it never lets a large source's short chunks jump the queue."""
    tiers: dict[int, int] = {}
    tier, previous = 0, None
    for p in page:
        key = (p.source_id, p.document_kind.startswith("code:"))
        if previous is not None and key != previous:
            tier += 1
        tiers[p.chunk_id], previous = tier, key
    return tiers


def _progress(on_progress: ProgressCallback, stats: EmbedReport, total: int, started: float, current_path: str) -> None:
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
