"""The Embedder backed by ONNX runtime: the default model run directly
(embedding.bundled_runner), a catalog model by fastembed.

Both load on first use, not at import time: the CLI's quick commands and every test
using the fake should not pay for onnxruntime, and fastembed's import costs about a
second (it is imported only for a catalog model).
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from kenning.core import KenningError
from kenning.embedding.base import empty_matrix, make_fingerprint, normalise_rows
from kenning.embedding.models import (
    BUNDLED_DIM,
    BUNDLED_MAX_TOKENS,
    BUNDLED_MODEL_ID,
    BundledFiles,
    bundled_files,
    catalog_model,
    is_default,
    prepare_bundled_model_dir,
)

# docs/architecture.md §10: batches above 16 are no faster on these CPUs, and large batches of
# long texts take gigabytes (padding makes every row as long as the longest).
BATCH_SIZE = 16


class FastEmbedEmbedder:
    """An Embedder running a fastembed text model; safe to share between threads."""

    def __init__(
        self,
        model_name: str | None = None,
        *,
        cache_dir: Path,
        threads: int | None = None,
        few_runs: bool = False,
    ) -> None:
        """few_runs: this process embeds one command's query or two (the bundled model's
        session is then made faster and runs a little slower: bundled_runner)."""
        self.cache_dir = Path(cache_dir)
        self.threads = threads
        self.few_runs = few_runs
        self._lock = threading.Lock()
        self._model: Any = None  # fastembed.TextEmbedding once loaded
        self._bundled: BundledFiles | None = None
        if is_default(model_name):
            # Located now (cheap) so a missing package is reported before any work.
            self._bundled = bundled_files()
            self.model_id = BUNDLED_MODEL_ID
            self.dim = BUNDLED_DIM
            self.max_tokens = BUNDLED_MAX_TOKENS
            version = self._bundled.version
        else:
            info = catalog_model(str(model_name), self.cache_dir)
            self.model_id = info.name
            self.dim = info.dim
            self.max_tokens = info.max_tokens
            # fastembed has swapped the file behind a name before (fp16 -> fp32), so
            # the file it names is part of the identity, not just the model name.
            version = f"catalog-{_digest(info.source)}"
        self.fingerprint = make_fingerprint(self.model_id, self.dim, version)

    @property
    def is_bundled(self) -> bool:
        return self._bundled is not None

    @property
    def loaded(self) -> bool:
        return self._model is not None

    def embed_batch(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return empty_matrix(self.dim)
        with self._lock:
            model = self._ensure_loaded()
            rows = list(model.passage_embed(list(texts), batch_size=BATCH_SIZE))
        return self._checked(np.stack(rows), len(texts))

    def embed_query(self, text: str) -> np.ndarray:
        with self._lock:
            model = self._ensure_loaded()
            # query_embed, not embed: asymmetric catalog models (bge, e5, ...) add a
            # query prefix there; for the default model both are the same.
            rows = list(model.query_embed([text]))
        vector: np.ndarray = self._checked(np.stack(rows), 1)[0]
        return vector

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        if not texts:
            return []
        with self._lock:
            model = self._ensure_loaded()
            # token_count sums over its input, so texts go one at a time.  The
            # tokenizer truncates, so the counts are what the model actually reads.
            return [int(model.token_count(text)) for text in texts]

    def load(self) -> None:
        """Load now instead of on first use (e.g. in a worker thread at start-up)."""
        with self._lock:
            self._ensure_loaded()

    def _checked(self, matrix: np.ndarray, expected: int) -> np.ndarray:
        if matrix.shape != (expected, self.dim):
            raise KenningError(
                f"Embedding model {self.model_id} returned vectors of shape {matrix.shape}, "
                f"expected ({expected}, {self.dim})."
            )
        return normalise_rows(matrix)

    def _ensure_loaded(self) -> Any:
        # Called with self._lock held.
        if self._model is None:
            if self._bundled is not None:
                self._model = self._load_bundled(self._bundled)
            else:
                with _no_thread_spinning():
                    self._model = self._load_catalog()
            _release_free_memory()
        return self._model

    def _load_bundled(self, files: BundledFiles) -> Any:
        """The default model, run without fastembed's imports (embedding.bundled_runner)."""
        model_dir = prepare_bundled_model_dir(files, self.cache_dir)
        try:
            from kenning.embedding.bundled_runner import BundledRunner
        except ImportError as exc:
            raise KenningError(
                f"The embedding runtime is not installed ({exc}). Install it with: pip install fastembed"
            ) from exc
        try:
            return BundledRunner(model_dir, threads=self.threads, few_runs=self.few_runs)
        except Exception as exc:  # onnxruntime/tokenizers raise assorted types
            raise KenningError(f"Cannot load the bundled embedding model from {model_dir}: {exc}") from exc

    def _load_catalog(self) -> Any:
        TextEmbedding = _import_fastembed()
        options = {"cache_dir": str(self.cache_dir), "threads": self.threads}
        try:
            # The cache first: a model downloaded once must load offline, without
            # fastembed's retry loop (which sleeps ~40 s when the network is down).
            return TextEmbedding(self.model_id, local_files_only=True, **options)
        except Exception:
            pass
        try:
            return TextEmbedding(self.model_id, **options)
        except Exception as exc:  # network, hub and file errors all arrive here
            raise KenningError(
                f"Cannot load embedding model {self.model_id}: it must be downloaded once "
                f"into {self.cache_dir}, which failed ({_short(exc)}). Check the network "
                f"connection, or use the bundled model (--model default)."
            ) from exc

    def __repr__(self) -> str:
        return f"FastEmbedEmbedder({self.model_id!r}, dim={self.dim})"


@contextmanager
def _no_thread_spinning() -> Iterator[None]:
    """Sessions created meanwhile do not busy-wait after each run.

    onnxruntime's worker threads spin for a while after every inference by default;
    on two cores that spinning steals the CPU from the vector scan that follows a
    query embedding (measured: the scan took ~29 ms instead of ~17 ms).  fastembed
    builds its SessionOptions itself, so the option is set on the class it uses.
    """
    import onnxruntime as ort

    original = ort.SessionOptions

    class QuietSessionOptions(original):  # type: ignore[misc, valid-type]
        def __init__(self) -> None:
            super().__init__()
            self.add_session_config_entry("session.intra_op.allow_spinning", "0")
            self.add_session_config_entry("session.inter_op.allow_spinning", "0")

    ort.SessionOptions = QuietSessionOptions
    try:
        yield
    finally:
        ort.SessionOptions = original


def _release_free_memory() -> None:
    """Give the heap that loading left free back to the system (glibc keeps it otherwise).

    Parsing the ONNX file and building the session allocate and free tens of MB; glibc
    keeps the freed pages, so a process that loaded the default model stayed ~60 MiB
    larger than it needs (measured: 246 -> 190 MiB resident after malloc_trim).  That
    matters for the processes that keep a model: the app, the service, `kenning mcp`.
    """
    try:
        import ctypes

        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass  # not glibc (macOS, Windows, musl): nothing to give back this way


def _import_fastembed() -> Any:
    try:
        from fastembed import TextEmbedding
    except ImportError as exc:
        raise KenningError(
            f"The embedding runtime is not installed ({exc}). Install it with: pip install fastembed"
        ) from exc
    return TextEmbedding


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


def _short(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    first = text[0] if text else type(exc).__name__
    return first[:200]
