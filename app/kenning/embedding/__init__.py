"""Embedding models: the Embedder protocol, the fastembed adapter, model names, a fake.

Importing this package is cheap: fastembed is imported only when a real model is
first used or the catalog is listed.
"""

from kenning.embedding.base import Embedder, make_fingerprint, normalise_rows
from kenning.embedding.fake import FakeEmbedder
from kenning.embedding.fastembed_adapter import BATCH_SIZE, FastEmbedEmbedder
from kenning.embedding.models import (
    BUNDLED_MODEL_ID,
    DEFAULT_MODEL,
    FAKE_MODEL,
    QUERY_THREADS,
    ModelInfo,
    list_models,
    resolve_embedder,
)

__all__ = [
    "BATCH_SIZE",
    "BUNDLED_MODEL_ID",
    "DEFAULT_MODEL",
    "FAKE_MODEL",
    "Embedder",
    "FakeEmbedder",
    "FastEmbedEmbedder",
    "ModelInfo",
    "QUERY_THREADS",
    "list_models",
    "make_fingerprint",
    "normalise_rows",
    "resolve_embedder",
]
