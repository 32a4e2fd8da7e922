"""Fusing the retrievers' ranked lists into one pool, with each hit's record.

Two fusions, keyed by chunk id, with the same per-list weights:

- linear (the default): each list's scores divided by that list's best score (bm25
  and cosine both have 0 as their natural floor, so a list's first item counts 1 and
  a near-equal second counts nearly 1), times the list's weight, summed.  This is the
  convex combination with "theoretical min-max" normalisation that Bruch, Gai and
  Ingber (2023) found more accurate than RRF in and out of domain; unlike min-max it
  never stretches two near-equal scores apart in a small pool.
- rrf: reciprocal rank fusion, weight / (k + rank), k = 60, ranks from 1.  It reads
  ranks only, so a list that is unsure (cosines of 0.50 and 0.49) speaks as loudly as
  one that is sure (bm25 of 30 against 12).

Nothing retrieved is dropped here: a chunk found by one list only (semantic-only hits
included) joins the pool.  tests/benchmarks/bench_quality.py measures both.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator
from dataclasses import field

from kenning import TYPE_CHECKING
from kenning.core.records import Record
from kenning.core.types import NEIGHBOURS_LIST, ListScore

if TYPE_CHECKING:  # the settings read this module's defaults: `kenning status` must not load the retrievers
    from kenning.core.types import Fusion
    from kenning.search.fts import Ranked

RRF_K = 60
# vector 1.5 and neighbours 0.75 (search.neighbours): chosen by leaving one of five
# collections out (docs/architecture.md §6).
DEFAULT_WEIGHTS = {"porter": 1.0, "trigram": 0.5, "vector": 1.5, "feedback": 0.5, NEIGHBOURS_LIST: 0.75}
# The shipped fusion: linear beat RRF on each of the five collections (docs/architecture.md
# §6; bench_quality.py prints the other fusion's row).
DEFAULT_FUSION: Fusion = "linear"
# Hits a search shows unless told otherwise (the `limit` setting's default; every front
# end reads the setting, workspace.searcher).
DEFAULT_LIMIT = 20
# Related files given when the caller does not say how many (the app, the MCP server).
RELATED_LIMIT = 8  # beside one hit
RELATED_TO_DOCUMENT_LIMIT = 10  # to a whole file (the MCP `related` tool)


class Candidate(Record):
    """A chunk found by at least one list, with its score in each."""

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
        for cid, score in _rrf_scores(items, weights.get(name, 1.0), k):
            pool.setdefault(cid, Candidate(cid)).lists[name] = score
    for cand in pool.values():
        cand.fused = _sum_contributions(cand)
    return pool


def _rrf_scores(items: list[Ranked], weight: float, k: int = RRF_K) -> Iterator[tuple[int, ListScore]]:
    for rank, item in enumerate(items, start=1):
        yield item.chunk_id, ListScore(rank, item.score, weight, weight / (k + rank))


def rrf_ceiling(names: list[str], weights: dict[str, float], k: int = RRF_K) -> float:
    """The fused score of a chunk ranked first by every active list."""
    return sum(weights.get(n, 1.0) / (k + 1) for n in names)


def linear_fuse(
    ranked: dict[str, list[Ranked]], weights: dict[str, float], by_rank: Collection[str] = ()
) -> dict[int, Candidate]:
    """weight × score / the list's best score (a score under 0 counts 0), summed over the lists.

    A list named in by_rank is read by rank, as RRF reads it: share (k + 1) / (k + rank),
    equal scores sharing one rank.  The store says which (api.KeywordList.by_rank_only:
    in a tiny SQLite index every bm25 can sit at FTS5's idf floor, and its ratios then
    mostly measure length)."""
    pool: dict[int, Candidate] = {}
    for name, items in ranked.items():
        for cid, score in _linear_scores(items, weights.get(name, 1.0), name in by_rank):
            pool.setdefault(cid, Candidate(cid)).lists[name] = score
    for cand in pool.values():
        cand.fused = _sum_contributions(cand)
    return pool


def _linear_scores(items: list[Ranked], weight: float, by_rank: bool) -> Iterator[tuple[int, ListScore]]:
    best = max((i.score for i in items), default=0.0)
    read_by_rank = by_rank and best > 0.0
    first_rank: dict[float, int] = {}  # equal scores share the rank of the first of them
    for rank, item in enumerate(items, start=1):
        used = first_rank.setdefault(item.score, rank)
        if read_by_rank:
            share = (RRF_K + 1) / (RRF_K + used)
        else:
            share = max(0.0, item.score) / best if best > 0 else 0.0  # nothing above 0: no evidence
        yield item.chunk_id, ListScore(rank, item.score, weight, weight * share, used if read_by_rank else 0)


def add_list(
    pool: dict[int, Candidate], name: str, items: list[Ranked], weight: float, fusion: Fusion, by_rank: bool = False
) -> None:
    """One more list fused into a pool (one made from the others: search.neighbours; the
    feedback words'), each record and fused score as fusing every list again would make
    them, without fusing the others again; a chunk new to the pool joins it last, as it
    would with the list fused last."""
    scores = _linear_scores(items, weight, by_rank) if fusion == "linear" else _rrf_scores(items, weight)
    for cid, score in scores:
        cand = pool.setdefault(cid, Candidate(cid))
        cand.lists[name] = score
        cand.fused = _sum_contributions(cand)


def linear_ceiling(names: list[str], weights: dict[str, float]) -> float:
    """The fused score of a chunk that is the best of every active list."""
    return sum(weights.get(n, 1.0) for n in names)


def _sum_contributions(cand: Candidate) -> float:
    # Summed in list-name order so the explain output can reproduce it bit for bit.
    total = 0.0
    for name in sorted(cand.lists):
        total += cand.lists[name].contribution
    return total
