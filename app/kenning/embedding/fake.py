"""A deterministic embedder for tests: no model, no files, microseconds per text.

Each lowercased word (and, with a smaller weight, each character trigram of it) is
hashed into one of ``dim`` buckets with a +1/-1 sign; the sum is L2-normalised.  Texts
sharing words therefore point the same way, unrelated texts are nearly orthogonal,
and related word forms ("index", "indexing") still land close thanks to the trigrams.
"""

from __future__ import annotations

import hashlib
import re
import threading
from collections.abc import Sequence
from functools import lru_cache

import numpy as np

from kenning.embedding.base import empty_matrix, make_fingerprint, normalise_rows

FAKE_MODEL_ID = "fake"
_VERSION = "hash-v1"  # bump when the hashing below changes: stored fake vectors go stale
_WORD = re.compile(r"\w+", re.UNICODE)
_TRIGRAM_WEIGHT = 0.35  # words dominate; trigrams only smooth over word forms


@lru_cache(maxsize=65536)
def _bucket(feature: str, dim: int) -> tuple[int, float]:
    # blake2b rather than hash(): Python's str hash is salted per process, and the
    # fake must give the same vectors in every run (stored vectors, golden tests).
    digest = hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest()
    value = int.from_bytes(digest, "little")
    sign = 1.0 if value & 1 else -1.0
    return (value >> 1) % dim, sign


def _words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def _trigrams(word: str) -> list[str]:
    padded = f"<{word}>"
    return [padded[i : i + 3] for i in range(len(padded) - 2)]


class FakeEmbedder:
    """Satisfies :class:`kenning.embedding.base.Embedder` without any model.

    ``calls`` and ``texts_embedded`` let tests assert that unchanged text is not
    embedded again.
    """

    def __init__(self, dim: int = 64, *, max_tokens: int = 256) -> None:
        if dim < 2:
            raise ValueError("dim must be at least 2")
        self.model_id = FAKE_MODEL_ID
        self.dim = dim
        self.max_tokens = max_tokens
        self.fingerprint = make_fingerprint(FAKE_MODEL_ID, dim, f"{_VERSION}-t{max_tokens}")
        self.calls = 0
        self.texts_embedded = 0
        self._lock = threading.Lock()
        # The vector for text without words: fixed and unit length, so it is a valid
        # row, but the same for every empty text.
        self._empty = np.zeros(dim, dtype=np.float32)
        self._empty[0] = 1.0

    def embed_batch(self, texts: Sequence[str]) -> np.ndarray:
        with self._lock:
            self.calls += 1
            self.texts_embedded += len(texts)
        if not texts:
            return empty_matrix(self.dim)
        return normalise_rows(np.stack([self._vector(t) for t in texts]))

    def embed_query(self, text: str) -> np.ndarray:
        vector: np.ndarray = self.embed_batch([text])[0]
        return vector

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        return [min(len(_words(t)), self.max_tokens) for t in texts]

    def _vector(self, text: str) -> np.ndarray:
        words = _words(text)[: self.max_tokens]  # the same truncation a real model does
        if not words:
            return np.array(self._empty)
        vec = np.zeros(self.dim, dtype=np.float32)
        for word in words:
            index, sign = _bucket("w:" + word, self.dim)
            vec[index] += sign
            grams = _trigrams(word)
            share = _TRIGRAM_WEIGHT / len(grams)
            for gram in grams:
                index, sign = _bucket("t:" + gram, self.dim)
                vec[index] += sign * share
        if not vec.any():  # features cancelled out exactly: still return a unit row
            return np.array(self._empty)
        return vec

    def __repr__(self) -> str:
        return f"FakeEmbedder(dim={self.dim})"
