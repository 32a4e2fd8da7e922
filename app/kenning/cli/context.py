"""What every command needs: the store, the configured model, the engine."""

from __future__ import annotations

import os
from functools import cached_property
from pathlib import Path

from kenning.embedding import DEFAULT_MODEL, QUERY_THREADS, Embedder, resolve_embedder
from kenning.storage import open_store
from kenning.storage.connection import Store
from kenning.storage.paths import default_store_path, model_cache_dir
from kenning.storage.settings import get_setting

MODEL_SETTING = "embedding_model"


class Context:
    def __init__(self, store_path: Path | None = None, model: str | None = None) -> None:
        self.store_path = Path(store_path) if store_path else default_store_path()
        self._model_override = model or os.environ.get("KENNING_MODEL")

    @cached_property
    def store(self) -> Store:
        return open_store(self.store_path)

    @property
    def model_name(self) -> str:
        return self._model_override or get_setting(self.store, MODEL_SETTING) or DEFAULT_MODEL

    @cached_property
    def embedder(self) -> Embedder:
        return resolve_embedder(self.model_name, model_cache_dir())

    @cached_property
    def query_embedder(self) -> Embedder:
        """For commands that only embed queries (see QUERY_THREADS)."""
        return resolve_embedder(self.model_name, model_cache_dir(), threads=QUERY_THREADS)

    def close(self) -> None:
        if "store" in self.__dict__:
            self.store.close()
