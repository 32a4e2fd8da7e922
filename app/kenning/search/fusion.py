"""Fusing the retrievers' ranked lists into one pool, with each hit's record.

Reciprocal rank fusion (k = 60, ranks from 1, per-list weights) keyed by chunk id, or
a linear blend of min-max normalised scores.  Nothing retrieved is dropped here: a
chunk found by one list only (semantic-only hits included) joins the pool.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kenning.core.types import Fusion, ListScore
from kenning.search.fts import Ranked

RRF_K = 60
DEFAULT_WEIGHTS = {"porter": 1.0, "trigram": 0.5, "vector": 1.0, "feedback": 0.5}
LINEAR_VECTOR_ALPHA = 0.5
# The shipped fusion.  "linear" (a convex combination of min-max normalised scores)
# measured better on NPL, but min-max sends each list's last item to 0, so in a small
# pool two near-equal notes end up far apart and signals can no longer break their tie
# (tests/test_obsidian.py); see tests/benchmarks/bench_quality.py for both.
DEFAULT_FUSION: Fusion = "rrf"


@dataclass
class Candidate:
    chunk_id: int
    lists: dict[str, ListScore] = field(default_factory=dict)
    fused: float = 0.0

    @property
    def best_rank(self) -> int:
        return min((s.rank for s in self.lists.values()), default=1 << 30)

    @property
    def tie_order(self) -> tuple[float, int, int]:
        """Sort key of the fused ranking: fused score, then best single-list rank, then id."""
        return (-self.fused, self.best_rank, self.chunk_id)


def rrf_fuse(ranked: dict[str, list[Ranked]], weights: dict[str, float], k: int = RRF_K) -> dict[int, Candidate]:
    pool: dict[int, Candidate] = {}
    for name, items in ranked.items():
        weight = weights.get(name, 1.0)
        for rank, item in enumerate(items, start=1):
            contribution = weight / (k + rank)
            cand = pool.setdefault(item.chunk_id, Candidate(item.chunk_id))
            cand.lists[name] = ListScore(rank, item.score, weight, contribution)
    for cand in pool.values():
        cand.fused = _sum_contributions(cand)
    return pool


def rrf_ceiling(names: list[str], weights: dict[str, float], k: int = RRF_K) -> float:
    """The fused score of a chunk ranked first by every active list."""
    return sum(weights.get(n, 1.0) / (k + 1) for n in names)


def linear_fuse(
    ranked: dict[str, list[Ranked]], weights: dict[str, float], alpha: float = LINEAR_VECTOR_ALPHA
) -> dict[int, Candidate]:
    """Min-max normalise each list; the vector list gets alpha, the lexical lists share
    1 - alpha in proportion to their weights.  The ceiling is 1."""
    shares = _linear_shares(list(ranked), weights, alpha)
    pool: dict[int, Candidate] = {}
    for name, items in ranked.items():
        if not items:
            continue
        scores = [i.score for i in items]
        low, high = min(scores), max(scores)
        for rank, item in enumerate(items, start=1):
            norm = 1.0 if high == low else (item.score - low) / (high - low)
            cand = pool.setdefault(item.chunk_id, Candidate(item.chunk_id))
            cand.lists[name] = ListScore(rank, item.score, shares[name], shares[name] * norm)
    for cand in pool.values():
        cand.fused = _sum_contributions(cand)
    return pool


def _linear_shares(names: list[str], weights: dict[str, float], alpha: float) -> dict[str, float]:
    lexical = [n for n in names if n != "vector"]
    has_vector = "vector" in names
    if not lexical:
        return {"vector": 1.0}
    lexical_total = sum(weights.get(n, 1.0) for n in lexical) or 1.0
    lexical_mass = (1.0 - alpha) if has_vector else 1.0
    shares = {n: lexical_mass * weights.get(n, 1.0) / lexical_total for n in lexical}
    if has_vector:
        shares["vector"] = alpha
    return shares


def _sum_contributions(cand: Candidate) -> float:
    # Summed in list-name order so the explain output can reproduce it bit for bit.
    total = 0.0
    for name in sorted(cand.lists):
        total += cand.lists[name].contribution
    return total
