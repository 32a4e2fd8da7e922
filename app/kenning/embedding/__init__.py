"""Embedding models: the Embedder protocol, the fastembed adapter, model names, a fake.

Importing this package is cheap: its names are loaded on first use (PEP 562), so a
command that never embeds (a lexical search, `kenning status`) never imports numpy,
and fastembed is imported only when a real model is first used or the catalog is listed.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

# name -> the submodule defining it
_WHERE = {
    "Embedder": "base",
    "make_fingerprint": "base",
    "normalise_rows": "base",
    "FakeEmbedder": "fake",
    "BATCH_SIZE": "fastembed_adapter",
    "FastEmbedEmbedder": "fastembed_adapter",
    "BUNDLED_MODEL_ID": "models",
    "DEFAULT_MODEL": "models",
    "FAKE_MODEL": "models",
    "QUERY_THREADS": "models",
    "ModelInfo": "models",
    "known_model_name": "models",
    "list_models": "models",
    "resolve_embedder": "models",
}

if TYPE_CHECKING:
    from kenning.embedding.base import Embedder, make_fingerprint, normalise_rows
    from kenning.embedding.fake import FakeEmbedder
    from kenning.embedding.fastembed_adapter import BATCH_SIZE, FastEmbedEmbedder
    from kenning.embedding.models import (
        BUNDLED_MODEL_ID,
        DEFAULT_MODEL,
        FAKE_MODEL,
        QUERY_THREADS,
        ModelInfo,
        known_model_name,
        list_models,
        resolve_embedder,
    )


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{_WHERE[name]}"), name)
    globals()[name] = value
    return value


__all__ = [
    "BATCH_SIZE",
    "BUNDLED_MODEL_ID",
    "DEFAULT_MODEL",
    "FAKE_MODEL",
    "Embedder",
    "FakeEmbedder",
    "FastEmbedEmbedder",
    "ModelInfo",
    "known_model_name",
    "QUERY_THREADS",
    "list_models",
    "make_fingerprint",
    "normalise_rows",
    "resolve_embedder",
]
