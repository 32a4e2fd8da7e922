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

from kenning.core.records import Record
from kenning.storage.vectors import sign_bits


def binary_codes(matrix: np.ndarray) -> np.ndarray:
    """(n, dim) float -> (n, dim/8) uint8: bit set where the coordinate is positive.

    The store keeps the same code for every chunk (storage.vectors.sign_bits)."""
    return sign_bits(np.asarray(matrix).reshape(len(matrix), -1))


class SignCodes(Record, frozen=True):
    """Every row's sign code, laid out for the scan.

    At 384 dimensions a code is six 64-bit words; the scan keeps word w of every row
    in one contiguous array (columns[w]), so the distance is six passes of xor and
    popcount over contiguous memory, summed into one counter per row: 9 ms at a
    million rows where row-major codes (xor a row of six words, sum along it) took
    70 ms.  Dimensions that are not a multiple of 64 keep the row-major bytes."""

    columns: np.ndarray  # (dim/64, rows) uint64, or (rows, dim/8) uint8 when dim % 64

    @classmethod
    def from_rows(cls, codes: np.ndarray) -> SignCodes:
        codes = np.ascontiguousarray(codes, dtype=np.uint8)
        if codes.ndim == 2 and codes.shape[1] % 8 == 0 and codes.shape[1]:
            return cls(np.ascontiguousarray(codes.view(np.uint64).T))
        return cls(codes)

    def extended(self, rows: np.ndarray) -> SignCodes:
        """These codes followed by more uint8 code rows (the rows written since a load)."""
        more = SignCodes.from_rows(rows)
        if not len(self):
            return more
        return SignCodes(np.concatenate([self.columns, more.columns], axis=1 if self.by_word else 0))

    def take(self, rows: np.ndarray) -> SignCodes:
        """These codes' rows in the given order (indices into the rows)."""
        return SignCodes(self.columns[:, rows] if self.by_word else self.columns[rows])

    @property
    def by_word(self) -> bool:
        return self.columns.dtype == np.uint64

    def __len__(self) -> int:
        return int(self.columns.shape[1] if self.by_word else self.columns.shape[0])

    @property
    def nbytes(self) -> int:
        return int(self.columns.nbytes)

    def distances(self, query_code: np.ndarray) -> np.ndarray:
        """Bits differing between each row's code and the query's code (int32 per row)."""
        if not self.by_word:
            by_row: np.ndarray = np.bitwise_count(self.columns ^ query_code).sum(axis=1, dtype=np.int32)
            return by_row
        words = np.ascontiguousarray(query_code, dtype=np.uint8).view(np.uint64)
        total = np.zeros(len(self), dtype=np.int32)
        for column, word in zip(self.columns, words):
            total += np.bitwise_count(column ^ word)
        return total


def hamming_distances(codes: np.ndarray | SignCodes, query_code: np.ndarray) -> np.ndarray:
    """Bits differing between each row of codes (uint8 rows, or SignCodes) and the query's code."""
    return (codes if isinstance(codes, SignCodes) else SignCodes.from_rows(codes)).distances(query_code)


def hamming_candidates(
    codes: np.ndarray | SignCodes, query_code: np.ndarray, mask: np.ndarray | None, count: int
) -> np.ndarray:
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
