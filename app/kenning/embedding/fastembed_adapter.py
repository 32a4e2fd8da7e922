"""The Embedder backed by fastembed (ONNX runtime).

fastembed is imported on first use, not at import time: it costs about a second, and
the CLI's quick commands and every test using the fake should not pay for it.
"""

from __future__ import annotations

import hashlib
import os
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

_registration_lock = threading.Lock()


class FastEmbedEmbedder:
    """An Embedder running a fastembed text model; safe to share between threads."""

    def __init__(
        self,
        model_name: str | None = None,
        *,
        cache_dir: Path,
        threads: int | None = None,
    ) -> None:
        self.cache_dir = Path(cache_dir)
        self.threads = threads
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
            with _no_thread_spinning():
                if self._bundled is not None:
                    self._model = self._load_bundled(self._bundled)
                else:
                    self._model = self._load_catalog()
            _release_free_memory()
        return self._model

    def _load_bundled(self, files: BundledFiles) -> Any:
        model_dir = prepare_bundled_model_dir(files, self.cache_dir)
        CustomTextEmbedding = _register_bundled_model()
        try:
            with _hub_offline():
                return CustomTextEmbedding(
                    BUNDLED_MODEL_ID,
                    cache_dir=str(self.cache_dir),
                    threads=self.threads,
                    specific_model_path=str(model_dir),
                    local_files_only=True,
                )
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


_bundled_registered = False


def _register_bundled_model() -> Any:
    """Tell fastembed about the default model once per process; returns the class that runs it.

    The default model is one of fastembed's custom models: CustomTextEmbedding runs it
    (TextEmbedding would only dispatch to it, after importing every text model family).
    The source named here is never contacted: the model is always loaded from a local
    directory.  Registered on that class directly, so that neither fastembed's package
    nor TextEmbedding need to be imported (text_model_classes).
    """
    global _bundled_registered
    with _registration_lock:
        CustomTextEmbedding, DenseModelDescription, ModelSource, PoolingType = _text_model_classes()
        if not _bundled_registered:
            if not any(m.model.lower() == BUNDLED_MODEL_ID.lower() for m in CustomTextEmbedding.SUPPORTED_MODELS):
                CustomTextEmbedding.add_model(
                    DenseModelDescription(
                        model=BUNDLED_MODEL_ID,
                        sources=ModelSource(hf="sentence-transformers/all-MiniLM-L6-v2"),
                        dim=BUNDLED_DIM,
                        model_file="model.onnx",
                        description="all-MiniLM-L6-v2 int8, bundled with Kenning",
                        license="apache-2.0",
                        size_in_GB=0.023,
                    ),
                    pooling=PoolingType.MEAN,
                    normalization=True,
                )
            _bundled_registered = True
    return CustomTextEmbedding


# fastembed's packages whose __init__ imports every model family (images, sparse and
# late-interaction text, their image preprocessing) and reads the installed version from
# the distribution metadata; a local text model needs none of it.
_EAGER_PACKAGES = ("fastembed", "fastembed.text", "fastembed.image")


def _text_model_classes() -> tuple[Any, Any, Any, Any]:
    """fastembed's custom-model class and its description types, imported without the
    package __init__s of _EAGER_PACKAGES (measured: ~20% of loading the default model).

    Only importing fastembed's own modules less eagerly is possible: the modules a
    text model is made of import, at module level, huggingface_hub, requests, tqdm
    and loguru (common.model_management, through text_embedding_base), PIL
    (common.types) and fastembed.image.transform (common.preprocessor_utils), none of
    which a model loaded from a local folder calls.  Each deferred package is still
    a real module: its own __init__ runs on the first attribute anyone asks of it
    (`from fastembed import TextEmbedding` works as before).  If fastembed is laid out
    otherwise, it is imported the ordinary way.
    """
    try:
        _defer_package_inits(_EAGER_PACKAGES)
        from fastembed.common.model_description import DenseModelDescription, ModelSource, PoolingType
        from fastembed.text.custom_text_embedding import CustomTextEmbedding
    except ImportError as exc:
        raise KenningError(
            f"The embedding runtime is not installed ({exc}). Install it with: pip install fastembed"
        ) from exc
    except Exception:  # another layout of fastembed: the ordinary import
        _import_fastembed()
        from fastembed.common.model_description import DenseModelDescription, ModelSource, PoolingType
        from fastembed.text.custom_text_embedding import CustomTextEmbedding
    return CustomTextEmbedding, DenseModelDescription, ModelSource, PoolingType


def _defer_package_inits(names: tuple[str, ...]) -> None:
    """Put each package in sys.modules without running its __init__ until an attribute
    the package itself defines is first asked for."""
    import importlib.machinery
    import importlib.util
    import sys

    for name in names:
        if name in sys.modules:
            continue
        parent, _, leaf = name.rpartition(".")
        spec = (
            importlib.machinery.PathFinder.find_spec(leaf, sys.modules[parent].__path__)
            if parent
            else importlib.util.find_spec(name)
        )
        if spec is None or spec.loader is None or spec.submodule_search_locations is None:
            raise ImportError(f"No module named {name!r}")
        module = importlib.util.module_from_spec(spec)
        module.__dict__["__getattr__"] = _finish_init(module, spec)
        sys.modules[name] = module
        if parent:
            setattr(sys.modules[parent], leaf, module)


def _finish_init(module: Any, spec: Any) -> Any:
    lock = threading.Lock()

    def __getattr__(name: str) -> Any:
        with lock:
            if module.__dict__.pop("__getattr__", None) is None:
                raise AttributeError(f"module {module.__name__!r} has no attribute {name!r}")
            spec.loader.exec_module(module)  # the package's own __init__, now
        return getattr(module, name)

    return __getattr__


@contextmanager
def _hub_offline() -> Iterator[None]:
    """HF_HUB_OFFLINE=1 while the bundled model loads, restored afterwards.

    Only around the default model: a catalog model chosen later in the same process
    must still be able to download.  fastembed reads the variable when it resolves a
    model, so setting it after fastembed was imported is enough.
    """
    previous = os.environ.get("HF_HUB_OFFLINE")
    os.environ["HF_HUB_OFFLINE"] = "1"
    try:
        yield
    finally:
        if previous is None:
            os.environ.pop("HF_HUB_OFFLINE", None)
        else:
            os.environ["HF_HUB_OFFLINE"] = previous


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


def _short(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    first = text[0] if text else type(exc).__name__
    return first[:200]
