"""The semantic retriever: exact cosine KNN over the store's vectors.

Vectors live in sqlite-vec's vec0 table; for querying they are held in one numpy
matrix per process.  docs/architecture.md §10 has the figures: a brute-force vec0 scan of 100k
vectors takes ~119 ms, the same scan as one float32 matrix product ~19 ms, and
metadata filters do not shorten the vec0 scan anyway.  Filters become a boolean
mask over the matrix rows, computed by the store before ranking, so the top k is taken
among allowed chunks only.

Without sqlite-vec the retriever scans at most FALLBACK_CAP filtered rows read
straight from the embedding cache, and says so in every breakdown.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

import numpy as np

from kenning.core.filters import ChunkFilter
from kenning.search.fts import Ranked
from kenning.storage import vectors as vectors_repo
from kenning.storage.chunks import allowed_chunk_ids
from kenning.storage.connection import Store

FALLBACK_CAP = 5000
# While an indexer writes vectors every second, reloading the whole matrix for each
# query would cost more than the search: newly embedded chunks join within this delay.
RELOAD_INTERVAL_SECONDS = 5.0


@dataclass
class _Loaded:
    generation: str
    loaded_at: float
    ids: np.ndarray
    matrix: np.ndarray
    row_of: dict[int, int]


class VectorIndex:
    """An in-memory copy of the current vectors, reloaded when the store changes."""

    def __init__(self, store: Store, fingerprint: str) -> None:
        self.store = store
        self.fingerprint = fingerprint
        self._loaded: _Loaded | None = None
        self._masks: dict[ChunkFilter, tuple[tuple[str, tuple[int, int]], np.ndarray]] = {}
        self._lock = threading.Lock()

    @property
    def capped(self) -> bool:
        return not self.store.vec_available

    def _generation(self) -> str:
        return vectors_repo.generation(self.store)

    def _current(self) -> _Loaded:
        generation = self._generation()
        with self._lock:
            if self._needs_reload(generation):
                ids, matrix = vectors_repo.load_all(self.store, self.fingerprint)
                row_of = {int(cid): i for i, cid in enumerate(ids)}
                self._loaded = _Loaded(generation, time.monotonic(), ids, matrix, row_of)
                self._masks.clear()
            assert self._loaded is not None  # _needs_reload() is True until it is set
            return self._loaded

    def _needs_reload(self, generation: str) -> bool:
        loaded = self._loaded
        if loaded is None:
            return True
        if loaded.generation == generation:
            return False
        return time.monotonic() - loaded.loaded_at >= RELOAD_INTERVAL_SECONDS

    def _mask(self, loaded: _Loaded, condition: ChunkFilter) -> np.ndarray:
        version = (loaded.generation, self.store.version())
        cached = self._masks.get(condition)
        if cached and cached[0] == version:
            return cached[1]
        allowed = allowed_chunk_ids(self.store, condition)
        mask = np.zeros(len(loaded.ids), dtype=bool)
        rows = [loaded.row_of[cid] for cid in allowed if cid in loaded.row_of]
        mask[rows] = True
        if len(self._masks) > 32:
            self._masks.clear()
        self._masks[condition] = (version, mask)
        return mask

    def search(self, query_vec: np.ndarray, condition: ChunkFilter, limit: int) -> list[Ranked]:
        if self.capped:
            return self._fallback_scan(query_vec, condition, limit)
        loaded = self._current()
        if not len(loaded.ids):
            return []
        mask = self._mask(loaded, condition)
        scores = loaded.matrix @ query_vec.astype(np.float32)
        scores = np.where(mask, scores, -np.inf)
        return _top(loaded.ids, scores, limit)

    def cosines(self, query_vec: np.ndarray, chunk_ids: list[int]) -> dict[int, float]:
        """Cosine of each given chunk (lexical-only hits too): one dot product each."""
        if self.capped:
            found = vectors_repo.vectors_for_chunks(self.store, self.fingerprint, chunk_ids)
            return {cid: float(vec @ query_vec) for cid, vec in found.items()}
        loaded = self._current()
        rows = [(cid, loaded.row_of[cid]) for cid in chunk_ids if cid in loaded.row_of]
        if not rows:
            return {}
        sims = loaded.matrix[[r for _, r in rows]] @ query_vec.astype(np.float32)
        return {cid: float(s) for (cid, _), s in zip(rows, sims)}

    def _fallback_scan(self, query_vec: np.ndarray, condition: ChunkFilter, limit: int) -> list[Ranked]:
        ids, matrix = vectors_repo.newest_vectors(self.store, self.fingerprint, condition, FALLBACK_CAP)
        if not len(ids):
            return []
        return _top(ids, matrix @ query_vec.astype(np.float32), limit)


def _top(ids: np.ndarray, scores: np.ndarray, limit: int) -> list[Ranked]:
    finite = np.isfinite(scores)
    count = int(finite.sum())
    if count == 0:
        return []
    k = min(limit, count)
    part = np.argpartition(-scores, k - 1)[:k] if k < len(scores) else np.arange(len(scores))
    part = part[np.isfinite(scores[part])]
    # Sort by score, then chunk id, so equal scores always come out in one order.
    order = np.lexsort((ids[part], -scores[part]))
    return [Ranked(int(ids[part[i]]), float(scores[part[i]])) for i in order[:k]]
