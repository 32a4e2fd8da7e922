"""Retrieval quality measures over graded judgements (BEIR conventions)."""

from __future__ import annotations

import math
from collections.abc import Sequence


def dcg(gains: Sequence[float]) -> float:
    return sum(g / math.log2(i + 2) for i, g in enumerate(gains))


def ndcg_at(ranked: list[str], judged: dict[str, int], k: int = 10) -> float:
    ideal = dcg(sorted(judged.values(), reverse=True)[:k])
    if ideal == 0:
        return 0.0
    return dcg([judged.get(doc, 0) for doc in ranked[:k]]) / ideal


def recall_at(ranked: list[str], judged: dict[str, int], k: int = 100) -> float:
    relevant = {d for d, g in judged.items() if g > 0}
    if not relevant:
        return 0.0
    return len(relevant & set(ranked[:k])) / len(relevant)


def mrr_at(ranked: list[str], judged: dict[str, int], k: int = 10) -> float:
    for i, doc in enumerate(ranked[:k], start=1):
        if judged.get(doc, 0) > 0:
            return 1.0 / i
    return 0.0


def percentile(values: list[float], pct: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, math.ceil(pct / 100 * len(ordered)) - 1))
    return ordered[index]
