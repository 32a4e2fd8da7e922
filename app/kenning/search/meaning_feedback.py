"""Meaning feedback: the query's vector moved toward its best first results (Rocchio).

Hybrid search only, beside the lexical feedback list (search.feedback), and read from
the same chunks: the best few that both the keyword and the meaning list found.  The
vector list is searched again with

    q' = (q + MOVE · mean(v_1 .. v_n)) / |q + MOVE · mean(v_1 .. v_n)|

Rocchio's relevance feedback (1971) with pseudo-relevant documents, as Li et al.
(2022, "Improving query representations for dense retrieval with pseudo relevance
feedback: a reproducibility study") apply it to dense retrievers.  MOVE = 1 puts q'
halfway between the query and the centroid of what it found first: a short query
borrows the vocabulary of meaning its best matches use, and the list finds the
chunks that say the same thing another way.  Without agreement (no chunk found
both ways) nothing moves.  Each hit's reported cosine stays its cosine to the query
as typed.
"""

from __future__ import annotations

import numpy as np

MOVE = 1.0


def moved_query(query_vec: np.ndarray, feedback_vecs: list[np.ndarray]) -> np.ndarray:
    """The unit vector between the query and the centroid of its feedback chunks."""
    centroid = np.mean(np.vstack(feedback_vecs), axis=0)
    moved = query_vec.astype(np.float32) + MOVE * centroid.astype(np.float32)
    norm = float(np.linalg.norm(moved))
    return query_vec.astype(np.float32) if norm == 0.0 else (moved / norm).astype(np.float32)
