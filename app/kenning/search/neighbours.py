"""Neighbours: a hit that reads like the other strong hits gains (issue #28 round fourteen).

Score regularisation (Diaz, "Regularizing ad hoc retrieval scores", CIKM 2005): related
documents should have related scores, so each of the fused ranking's first POOL chunks
gets one more list, "neighbours", whose score is the mean fused score of its K nearest
chunks among those POOL, weighted by their cosine to it.  Under linear fusion the list
adds WEIGHT × that mean over the best such mean: a chunk whose nearest neighbours rank
high rises, one that only one list liked and that resembles nothing else around it falls.

It reorders the first POOL and recalls nothing: a chunk outside them gets no share, and
each of them already scores at least what any chunk outside does, so the first POOL stay
the first POOL.  (A chunk the feedback words alone found has no vector the search holds
and takes no part: it can fall behind them.)  POOL is a constant, not the number of hits asked for, so the first N
hits are the first N of any longer list (issue #28 item 5).  Hybrid only: in vector mode
the same rule lost CISI and NPL held out (docs/architecture.md §6, round fourteen).  Not
for a query that names a symbol the code defines (search.definitions): that is a lookup
with one answer, and the uses of a symbol resemble one another more than its definition.
"""

from __future__ import annotations

from kenning import TYPE_CHECKING
from kenning.core.types import NEIGHBOURS_LIST
from kenning.search.fusion import DEFAULT_WEIGHTS
from kenning.storage.api import Ranked

if TYPE_CHECKING:
    import numpy as np

LIST = NEIGHBOURS_LIST
WEIGHT = DEFAULT_WEIGHTS[LIST]  # chosen with K by leaving one collection out; the setting `weights` changes it
K = 20  # nearest chunks a chunk's neighbour score is the mean of
POOL = 100  # how many of the fused ranking's first chunks are regularised (the benchmark's depth)
MODES = ("hybrid",)
FEWEST = 3  # below this many chunks there is no neighbourhood to read


def neighbour_scores(chunk_ids: list[int], fused: list[float], vectors: np.ndarray) -> list[Ranked]:
    """Each chunk's cosine-weighted mean of its K nearest chunks' fused scores, best first.

    chunk_ids, fused and the rows of vectors (unit length) are in the same order; a
    chunk is not its own neighbour, and a neighbour at a cosine of 0 or less counts 0."""
    import numpy as np

    count = len(chunk_ids)
    if count < FEWEST:
        return []
    unit = vectors.astype(np.float32)
    # einsum, not `@`: a matrix product this small (0.6 ms) is not worth BLAS's threads,
    # which spin after it and take the 2 cores from the next query's model and SQLite
    # (bench_search at 100k: hybrid p50 +6 ms with `@`; with einsum the whole step takes 1 ms).
    similar = np.einsum("ij,kj->ik", unit, unit, optimize=False)
    np.fill_diagonal(similar, -np.inf)
    k = min(K, count - 1)
    nearest = np.argpartition(-similar, k - 1, axis=1)[:, :k]
    closeness = np.clip(np.take_along_axis(similar, nearest, axis=1), 0.0, None).astype(np.float64)
    scores = np.asarray(fused, dtype=np.float64)
    total = closeness.sum(axis=1)
    mean = np.divide((closeness * scores[nearest]).sum(axis=1), total, out=np.zeros(count), where=total > 0)
    ranked = sorted(zip(chunk_ids, mean.tolist(), strict=True), key=lambda item: (-item[1], item[0]))
    return [Ranked(cid, score) for cid, score in ranked]
