"""Embedding models: the Embedder protocol, the fastembed adapter, model names, a fake.

Importing this package is cheap: its names are loaded on first use (PEP 562), so a
command that never embeds (a lexical search, `kenning status`) never imports numpy,
and fastembed is imported only when a real model is first used or the catalog is listed.
The few constants every front end reads (the settings' default model, the query
embedder's threads) are defined here, so reading them loads no submodule at all.
"""

from __future__ import annotations

import importlib

from kenning import TYPE_CHECKING

DEFAULT_MODEL = "default"  # the bundled offline model (models.py)
FAKE_MODEL = "fake"  # the deterministic test embedder (fake.py)
# A process that only embeds queries runs the model on one thread.  A query is a few
# tokens: a second thread barely speeds it up, but it takes the core SQLite needs for
# the keyword lists that run meanwhile (measured at 100k chunks: hybrid p95 78 against
# 86 ms with two threads, embedding alone no slower).
QUERY_THREADS = 1

# name -> the submodule defining it
_WHERE = {
    "Embedder": "base",
    "make_fingerprint": "base",
    "normalise_rows": "base",
    "FakeEmbedder": "fake",
    "BATCH_SIZE": "fastembed_adapter",
    "FastEmbedEmbedder": "fastembed_adapter",
    "BUNDLED_MODEL_ID": "models",
    "ModelInfo": "models",
    "known_model_name": "models",
    "list_models": "models",
    "resolve_embedder": "models",
}

if TYPE_CHECKING:
    from typing import Any

    from kenning.embedding.base import Embedder, make_fingerprint, normalise_rows
    from kenning.embedding.fake import FakeEmbedder
    from kenning.embedding.fastembed_adapter import BATCH_SIZE, FastEmbedEmbedder
    from kenning.embedding.models import (
        BUNDLED_MODEL_ID,
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
