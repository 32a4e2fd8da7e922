"""What a service holds for its clients: the open store, the loaded model, the watcher.

- One Workspace (one connection) answers every request, one at a time under `lock`:
  apsw serialises a connection anyway, and the engines' caches (vocabulary, the
  vector scan's sign bits) are made once and kept, keyed on the store's version so
  that what the watcher indexes shows at once.
- The model is loaded in the background when the service starts (or handed over by
  the app, which has loaded it for its own window); a request that needs it waits for
  it (`model_for`), so an answer is the same whether or not the model was warm.
- The index is kept fresh by one keeper (workspace.freshness, as `kenning mcp` does
  in-process): at start it catches up with what changed while nothing ran, then it
  watches every source on its own thread and connection; vectors for changed files
  come from the loaded model.  Every MCP session the service serves reports its state.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kenning.core.errors import KenningError
from kenning.core.logger import get_logger
from kenning.embedding import QUERY_THREADS
from kenning.workspace import EmbedderFactory, Workspace
from kenning.workspace.background import BackgroundModel
from kenning.workspace.freshness import NOT_WATCHING, IndexKeeper, store_workspace

if TYPE_CHECKING:
    from kenning.embedding import Embedder
    from kenning.workspace import Searcher

log = get_logger(__name__)

MODEL_WAIT_SECONDS = 30.0  # a request needing the model waits this long for it to load
# A service stopping waits this long for its background work (the model loading, the MCP
# warm-up) to finish: a daemon thread cut off by the interpreter's exit while in native
# code (onnxruntime, pydantic-core) can abort the whole process (exit -6) instead of
# letting it stop cleanly.
FINISH_SECONDS = 30.0


class Warm:
    def __init__(
        self,
        store_path: Path | str,
        *,
        model: BackgroundModel | None = None,
        watch: bool = True,
        environ: Mapping[str, str] | None = None,
        on_upgrade: Callable[[str], None] | None = None,
        unwatched_note: str = NOT_WATCHING,
        searcher: Searcher | None = None,
        lock: threading.RLock | None = None,
    ) -> None:
        """model: one loaded already (the app's); watch: keep the index fresh here (a host
        that keeps it fresh by other means says how in unwatched_note); searcher and lock:
        a host's own Searcher (its Workspace, connection, engines and caches) and the lock
        its own searches take (the app's window, gui.workers): one copy of them in memory,
        used by one caller at a time; its Workspace stays the host's to close."""
        self.store_path = Path(store_path)
        # The service's own settings environment, fixed at start: a client's KENNING_*
        # variables apply to its own requests only (cli.served).
        self.environ = dict(os.environ if environ is None else environ)
        self._borrowed = searcher is not None
        self.workspace = (
            searcher.workspace
            if searcher is not None
            else Workspace(self.store_path, environ=self.environ, on_upgrade=on_upgrade)
        )
        self.lock = lock or threading.RLock()
        with self.lock:  # a borrowed Workspace may be in use on its host's thread
            self.model_name = self.workspace.model_name
        self.model = model or BackgroundModel(
            EmbedderFactory(self.model_name, threads=QUERY_THREADS), name="kenning-service-model"
        )
        self._model_owned = model is None
        self.watch = watch
        self.keeper = IndexKeeper(
            store_workspace(self.store_path, self.model_name),
            self._model_for_vectors,
            watch=watch,
            unwatched_note=unwatched_note,
        )
        # The one Searcher every request uses (workspace.searcher): its engines, with their
        # vocabulary and vector scan, are made once and kept; the model joins it once loaded.
        self.searcher = searcher or self.workspace.searcher()
        self.http_url: str | None = None  # MCP over HTTP, when the service serves it
        self.mcp_services: dict[tuple[int, bool], Any] = {}  # per (max_bytes, allow_writes), kept
        self.mcp_ready = threading.Event()  # set once MCP sessions are prepared (mcpserver.transport)
        self.background: list[threading.Thread] = []  # work close() lets finish (the MCP warm-up)

    def start(self) -> Warm:
        with self.lock:
            self.workspace.open()  # (and upgrade) now: a broken store fails the start, not a request
        if self._model_owned:
            self.model.start()
        self.keeper.start()
        return self

    def close(self) -> None:
        self._let_background_finish()
        self.keeper.close()
        with self.lock:
            self.searcher.save_query_vectors(now=True)
            if not self._borrowed:
                self.workspace.close()

    def _let_background_finish(self) -> None:
        deadline = time.monotonic() + FINISH_SECONDS
        if self._model_owned:
            self.model.wait(FINISH_SECONDS)
        for thread in self.background:
            thread.join(max(0.0, deadline - time.monotonic()))

    # -- the model -----------------------------------------------------------------

    def searcher_with_model(self, wait: float = MODEL_WAIT_SECONDS) -> Searcher:
        """The Searcher with the model, waiting for it to load (call under `lock`): an
        answer is the same whether or not the model was warm when it was asked."""
        self.model.wait(wait)
        self.searcher.set_model(self.model.embedder, self.model.error)
        return self.searcher

    def view(
        self, store_path: Path, *, environ: Mapping[str, str] | None = None, model: str | None = None
    ) -> Workspace:
        """A client's Workspace over the service's open store: the client's settings
        environment and --model, the store as the client named it."""
        return Workspace(store_path, model=model, environ=environ, borrow=self.workspace)

    def model_name_for(self, environ: Mapping[str, str], flag: str | None = None) -> str:
        """The model a client with this environment (and --model flag) would use on this store."""
        with self.lock:
            return self.view(self.store_path, environ=environ, model=flag).model_name

    def describe(self) -> dict[str, Any]:
        return {
            "model": self.model_name,
            "model_state": self.model.state,
            "model_error": self.model.error,
            "watching": self.keeper.state(None).get("watching"),
            "http": self.http_url,
            "mcp_ready": self.mcp_ready.is_set(),
        }

    def _model_for_vectors(self) -> Embedder:
        """The loaded model, for the vectors of changed files (the keeper's thread waits for it)."""
        self.model.wait()
        if self.model.embedder is None:
            raise KenningError(f"the semantic model could not be loaded ({self.model.error})")
        return self.model.embedder
