"""The semantic retriever: the backend's nearest vectors, rescored here by exact cosine.

The store answers `vectors.nearest` with candidates and their float32 vectors (SQLite:
a sign-bit scan held in memory, storage/vector_scan.py; PostgreSQL: pgvector's
index), the filter applied inside it.  This module orders them by exact cosine, keeps
them for a second ranking of a moved query (search.meaning_feedback) and gives every
hit its cosine, lexical-only hits included.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import numpy as np

from kenning.core.filters import ChunkFilter
from kenning.storage.api import Candidates, Ranked, Store

__all__ = ["Candidates", "VectorIndex"]


class VectorIndex:
    """Nearest-vector search over one store's current vectors of one fingerprint."""

    def __init__(self, store: Store, fingerprint: str) -> None:
        self.store = store
        self.fingerprint = fingerprint

    @property
    def concurrent(self) -> bool:
        """The store's nearest() may run beside its keyword statements (api.Vectors.concurrent)."""
        return self.store.vectors.concurrent

    def load(self, condition: ChunkFilter | None = None) -> None:
        """Read now what the first search would read (0.6 s at a million chunks in SQLite),
        with what it reads for this filter when one is given."""
        self.store.vectors.warm(self.fingerprint, condition)

    def search(
        self, query_vec: np.ndarray, condition: ChunkFilter, limit: int, also: Iterable[int] = ()
    ) -> list[Ranked]:
        """The limit best allowed chunks by exact cosine, among the backend's candidates
        and `also` (the chunks the keyword lists found, already filtered: a chunk matching
        both ways always gets its true vector rank)."""
        return self.rank(self.candidates(query_vec, condition, limit, also), query_vec, limit)

    def candidates(
        self, query_vec: np.ndarray, condition: ChunkFilter, limit: int, also: Iterable[int] = ()
    ) -> Candidates:
        """The chunks search() rescores, with their float32 vectors (kept by the engine, so a
        moved query (search.meaning_feedback) is rescored without a second scan)."""
        return self.store.vectors.nearest(self.fingerprint, query_vec, condition, limit, set(also))

    def with_vectors(self, known: Candidates, chunk_ids: Iterable[int]) -> Candidates:
        """known, plus the given chunks it lacks (those that have a current vector)."""
        have = set(known.ids.tolist())
        wanted = sorted(c for c in set(chunk_ids) if c not in have)
        found = self.store.vectors.vectors_of(self.fingerprint, wanted) if wanted else {}
        if not found:
            return known
        ids = np.fromiter(found.keys(), dtype=np.int64, count=len(found))
        matrix = np.vstack([found[c] for c in found]).astype(np.float32)
        if not len(known.ids):
            return Candidates(ids, matrix)
        return Candidates(np.concatenate([known.ids, ids]), np.vstack([known.matrix, matrix]))

    @staticmethod
    def rank(
        candidates: Candidates,
        query_vec: np.ndarray,
        limit: int,
        openings: Mapping[int, np.ndarray] | None = None,
        opening_weight: float = 0.0,
        parts: dict[int, tuple[float, float]] | None = None,
    ) -> list[Ranked]:
        """The limit best candidates by their meaning score (mixed_scores); `parts`, when
        given, gets (cosine, opening's cosine) of each ranked chunk whose score mixed them,
        the very floats the score was made of (the explain record's)."""
        if not len(candidates.ids):
            return []
        scores, cos, opened = mixed_scores(candidates, query_vec, openings or {}, opening_weight)
        ranked = _top(candidates.ids, scores, limit)
        if parts is not None and openings:
            row = {int(c): i for i, c in enumerate(candidates.ids.tolist())}
            for r in ranked:
                i = row[r.chunk_id]
                if not np.isnan(opened[i]):
                    parts[r.chunk_id] = (float(cos[i]), float(opened[i]))
        return ranked

    def openings(self, chunk_ids: Iterable[int]) -> dict[int, np.ndarray]:
        """chunk id -> its document's opening vector, for those of the chunks that have one."""
        ids = sorted({int(c) for c in chunk_ids})
        return self.store.vectors.openings_of(self.fingerprint, ids) if ids else {}

    def cosines(self, query_vec: np.ndarray, chunk_ids: list[int], known: Candidates | None = None) -> dict[int, float]:
        """Exact cosine of each given chunk (lexical-only hits too), from its float32 vector;
        only the vectors `known` (what a scan already read) lacks are read from the store."""
        pool = self.with_vectors(known or Candidates.empty(), chunk_ids)
        rows = pool.rows_of(chunk_ids)
        if not rows:
            return {}
        sims = pool.matrix[rows] @ query_vec.astype(np.float32)
        return {int(pool.ids[r]): float(sim) for r, sim in zip(rows, sims)}


def mixed_scores(
    candidates: Candidates, query_vec: np.ndarray, openings: Mapping[int, np.ndarray], weight: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(meaning score, cosine to the chunk, cosine to its document's opening or NaN) per
    candidate.  The score is the chunk's cosine, and for a chunk whose document has an
    opening vector (1 - weight) × that + weight × the opening's cosine (float64): a
    document's start read whole is evidence its best chunk lacks (Callan 1994; Dai and
    Callan's FirstP + MaxP, 2019; docs/architecture.md §6, round nine)."""
    q = query_vec.astype(np.float32)
    cos = candidates.matrix @ q
    opened = np.full(len(cos), np.nan)
    if not weight or not openings:
        return cos, cos, opened
    rows = [i for i, c in enumerate(candidates.ids.tolist()) if c in openings]
    if not rows:
        return cos, cos, opened
    opened[rows] = np.vstack([openings[int(candidates.ids[i])] for i in rows]).astype(np.float32) @ q
    scores = cos.astype(np.float64)
    scores[rows] = (1.0 - weight) * scores[rows] + weight * opened[rows]
    return scores, cos, opened


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
