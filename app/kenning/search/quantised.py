"""Quantised vectors for the semantic scan (issue #15; chosen by tests/benchmarks/bench_quantised.py).

At a million chunks a float32 matrix of 384 dimensions is 1.5 GB in the search
process.  The scan instead holds one bit per dimension (the sign: 48 bytes a
vector, 48 MB at 1M), ranks every allowed row by Hamming distance to the query's
signs, and rescores the best few hundred at full precision with their float32
vectors read from the store.  On Cranfield and NPL this finds the exact top 10
(recall@10 against exact cosine, docs/architecture.md §10).

int8 codes (one byte a dimension plus a scale) are kept here too: the benchmark
compares both.
"""

from __future__ import annotations

import numpy as np

from kenning.storage.vectors import sign_bits


def binary_codes(matrix: np.ndarray) -> np.ndarray:
    """(n, dim) float -> (n, dim/8) uint8: bit set where the coordinate is positive.

    The store keeps the same code for every chunk (storage.vectors.sign_bits)."""
    return sign_bits(np.asarray(matrix).reshape(len(matrix), -1))


def hamming_distances(codes: np.ndarray, query_code: np.ndarray) -> np.ndarray:
    """Bits differing between each row of codes and the query's code (uint8 rows)."""
    if codes.shape[1] % 8 == 0:  # 8 bytes at a time: six words a vector at 384 dimensions
        words = codes.view(np.uint64)
        differing: np.ndarray = np.bitwise_count(words ^ query_code.view(np.uint64))
    else:
        differing = np.bitwise_count(codes ^ query_code)
    distances: np.ndarray = differing.sum(axis=1, dtype=np.int32)
    return distances


def hamming_candidates(codes: np.ndarray, query_code: np.ndarray, mask: np.ndarray | None, count: int) -> np.ndarray:
    """Row indices of the `count` allowed rows nearest the query (any order)."""
    distances = hamming_distances(codes, query_code)
    if mask is not None:
        distances = np.where(mask, distances, np.iinfo(np.int32).max)
        count = min(count, int(mask.sum()))
    if count <= 0:
        return np.zeros(0, dtype=np.int64)
    if count >= len(distances):
        return np.arange(len(distances))
    return np.argpartition(distances, count - 1)[:count]


def int8_codes(matrix: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-row symmetric int8: (codes, scales) with row ≈ codes × scale."""
    matrix = np.asarray(matrix, dtype=np.float32)
    peak = np.abs(matrix).max(axis=1)
    scales = np.where(peak > 0, peak / 127.0, 1.0).astype(np.float32)
    codes = np.clip(np.rint(matrix / scales[:, None]), -127, 127).astype(np.int8)
    return codes, scales


def int8_scores(codes: np.ndarray, scales: np.ndarray, query: np.ndarray) -> np.ndarray:
    scores: np.ndarray = (codes @ query.astype(np.float32)) * scales
    return scores


def top_rows(scores: np.ndarray, k: int) -> np.ndarray:
    """Indices of the k highest scores, best first."""
    k = min(k, len(scores))
    if k <= 0:
        return np.zeros(0, dtype=np.int64)
    part = np.argpartition(-scores, k - 1)[:k] if k < len(scores) else np.arange(len(scores))
    return part[np.argsort(-scores[part], kind="stable")]
