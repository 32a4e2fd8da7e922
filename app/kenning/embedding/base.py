"""The embedder protocol every model adapter (and the test fake) satisfies.

Deliberately narrow, after llm's ``EmbeddingModel.embed_batch``: callers hand over a
batch of texts and get one normalised row per text back.  Caching, batching by length
and persistence belong to the indexer, not to the embedder.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:  # numpy is imported where vectors are made: commands that never embed skip it
    import numpy as np


@runtime_checkable
class Embedder(Protocol):
    """Turns text into unit-length float32 vectors.

    fingerprint identifies the vector space: two embedders with the same fingerprint
    produce interchangeable vectors, so stored vectors whose fingerprint differs from
    the current embedder's are stale and must be recomputed.
    """

    model_id: str
    dim: int
    fingerprint: str
    max_tokens: int  # word pieces the model reads; the rest of a longer text is ignored

    def embed_batch(self, texts: Sequence[str]) -> np.ndarray:
        """Shape (len(texts), dim), float32, rows of L2 norm 1; (0, dim) for no texts."""
        ...

    def embed_query(self, text: str) -> np.ndarray:
        """Shape (dim,): the vector to compare stored chunk vectors with."""
        ...

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        """Tokens per text as the model reads them (capped at max_tokens)."""
        ...


def make_fingerprint(model_id: str, dim: int, version: str) -> str:
    """One string for the model identity; stored next to every vector."""
    return f"{model_id}|{dim}|{version}"


def normalise_rows(matrix: np.ndarray) -> np.ndarray:
    """L2-normalise each row in float32.

    Not every catalog model normalises its output, and the store compares vectors with
    a plain dot product, so the contract is enforced here once.  An all-zero row (which
    a degenerate model output could give) is left as is rather than divided by zero.
    """
    import numpy as np

    out = np.asarray(matrix, dtype=np.float32)
    if out.ndim != 2:
        raise ValueError(f"expected a 2-D matrix, got shape {out.shape}")
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    norms[norms == 0.0] = 1.0
    return np.ascontiguousarray(out / norms, dtype=np.float32)


def empty_matrix(dim: int) -> np.ndarray:
    import numpy as np

    return np.zeros((0, dim), dtype=np.float32)
