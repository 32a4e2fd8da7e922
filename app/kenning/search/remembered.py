"""The query embedder with a memory that outlives the process (store.query_vectors).

A command-line search starts a new process for every query, and loading the model
costs seconds where the search costs milliseconds.  Wrapped in a RememberingEmbedder,
the model is loaded when a text must be embedded whose vector the store does not
remember (the exact text the engine embeds: a corrected query's corrected words), so a
search repeated in a new process reads its vector and never loads the model.  The
vectors are the model's own (stored as float32), so the results are the same.  A model
that fails to load then raises ModelUnavailable: the front end searches on keywords.

New vectors are kept in memory until save(), which a front end calls once the
results are shown: a write during the search would change the store's version and
make the engine's caches over the store (term counts, filter masks) start again.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence

from kenning import TYPE_CHECKING
from kenning.core.errors import KenningError

if TYPE_CHECKING:
    import numpy as np

    from kenning.embedding import Embedder
    from kenning.storage.api import Store

# How many query vectors the store keeps (the least recently used go), and how often a
# remembered one is marked as used again (a hit would otherwise write on every search).
CAP = 1000  # about 1.5 KB each at 384 dimensions
TOUCH_AFTER_SECONDS = 3600.0


class ModelUnavailable(KenningError):
    """The model was needed (a query not remembered) and could not be loaded; `cause` says why."""

    def __init__(self, cause: Exception) -> None:
        super().__init__(str(cause))
        self.cause = cause


class RememberingEmbedder:
    """An Embedder (kenning.embedding.base) whose query vectors are remembered in the store.

    load_seconds: how long this process took to load the model (None: not loaded here).
    """

    def __init__(self, model: Embedder, store: Store, *, clock: Callable[[], float] = time.time) -> None:
        self.model = model
        self.store = store
        self.clock = clock
        # Known without loading the model: the fingerprint names the files and settings.
        self.model_id = model.model_id
        self.dim = model.dim
        self.fingerprint = model.fingerprint
        self.max_tokens = model.max_tokens
        self.load_seconds: float | None = None
        self._lock = threading.Lock()  # the dicts below (the engine embeds on its own thread)
        self._load_lock = threading.Lock()
        self._known: dict[str, np.ndarray] = {}  # read from the store or embedded in this process
        self._new: dict[str, np.ndarray] = {}  # embedded here, not saved yet
        self._used: set[str] = set()  # read from the store, to be marked as used
        self._loaded = False

    def remembers(self, text: str) -> bool:
        """Whether text's vector is known without the model (read from the store once)."""
        return self._recall(text) is not None

    def load(self) -> None:
        """Load the model now, once, measured (load_seconds); ModelUnavailable when it cannot."""
        with self._load_lock:
            if self._loaded:
                return
            started = time.perf_counter()
            load = getattr(self.model, "load", None)
            try:
                if load is not None:  # a real model loads lazily: pay it here, once
                    load()
            except Exception as exc:  # missing model files, no network for a catalog model
                raise ModelUnavailable(exc) from exc
            self.load_seconds = time.perf_counter() - started
            self._loaded = True

    def embed_query(self, text: str) -> np.ndarray:
        remembered = self._recall(text)
        if remembered is not None:
            return remembered
        self.load()
        vector = self.model.embed_query(text)
        with self._lock:
            self._keep(text, vector)
            self._new[text] = vector
        return vector

    def embed_batch(self, texts: Sequence[str]) -> np.ndarray:
        self.load()
        return self.model.embed_batch(texts)

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        self.load()
        return self.model.count_tokens(texts)

    def save(self) -> bool:
        """Write the vectors embedded since the last save (best effort: False when the store
        was busy or read-only; they are kept for the next save)."""
        with self._lock:
            new, used = dict(self._new), set(self._used)
        if not self.store.query_vectors.remember(self.fingerprint, new, used, now=self.clock(), cap=CAP):
            return False
        with self._lock:
            for text in new:
                self._new.pop(text, None)
            self._used -= used
        return True

    def _recall(self, text: str) -> np.ndarray | None:
        with self._lock:
            if text in self._known:
                return self._known[text]
        found = self.store.query_vectors.recall(self.fingerprint, text, self.dim)
        if found is None:
            return None
        vector, used_at = found
        with self._lock:
            self._keep(text, vector)
            if self.clock() - used_at > TOUCH_AFTER_SECONDS:
                self._used.add(text)
        return vector

    def _keep(self, text: str, vector: np.ndarray) -> None:
        if len(self._known) >= CAP:  # a long-lived front end: bounded like the table
            self._known.clear()
        self._known[text] = vector

    def __repr__(self) -> str:
        return f"RememberingEmbedder({self.model!r})"
