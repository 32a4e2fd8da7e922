"""What a service holds for its clients: the open store, the loaded model, the watcher.

- One Workspace (one connection) answers every request, one at a time under `lock`:
  apsw serialises a connection anyway, and the engines' caches (vocabulary, the
  vector scan's sign bits) are made once and kept, keyed on the store's version so
  that what the watcher indexes shows at once.
- The model is loaded in the background when the service starts (or handed over by
  the app, which has loaded it for its own window); a request that needs it waits for
  it (`model_for`), so an answer is the same whether or not the model was warm.
- The watcher (ingest.watch) runs on its own thread with its own connection, at a
  lower priority; vectors for changed files come from a second model instance it
  makes when it first needs one, so a long batch never holds the query model.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kenning.embedding import QUERY_THREADS
from kenning.workspace import EmbedderFactory, Workspace
from kenning.workspace.background import BackgroundModel

if TYPE_CHECKING:
    from kenning.embedding import Embedder
    from kenning.search.engine import SearchEngine

log = logging.getLogger(__name__)

MODEL_WAIT_SECONDS = 30.0  # a request needing the model waits this long for it to load
WATCH_NICE = 10  # the watcher's thread (and the model threads it starts) yield to searches


class Warm:
    def __init__(
        self,
        store_path: Path | str,
        *,
        model: BackgroundModel | None = None,
        watch: bool = True,
        environ: Mapping[str, str] | None = None,
        on_upgrade: Callable[[str], None] | None = None,
    ) -> None:
        self.store_path = Path(store_path)
        # The service's own settings environment, fixed at start: a client's KENNING_*
        # variables apply to its own requests only (cli.served).
        self.environ = dict(os.environ if environ is None else environ)
        self.workspace = Workspace(self.store_path, environ=self.environ, on_upgrade=on_upgrade)
        self.lock = threading.RLock()
        self.model_name = self.workspace.model_name
        self.model = model or BackgroundModel(
            EmbedderFactory(self.model_name, threads=QUERY_THREADS), name="kenning-service-model"
        )
        self._model_owned = model is None
        self.watch = watch
        self._stop = threading.Event()
        self._watcher: threading.Thread | None = None
        self._engines: dict[str | None, SearchEngine] = {}
        self.watching = 0  # sources watched, once the watcher is in place
        self.http_url: str | None = None  # MCP over HTTP, when the service serves it
        self.mcp_services: dict[tuple[int, bool], Any] = {}  # per (max_bytes, allow_writes), kept

    def start(self) -> Warm:
        _ = self.workspace.store  # open (and upgrade) now: a broken store fails the start, not a request
        if self._model_owned:
            self.model.start()
        if self.watch:
            self._watcher = threading.Thread(target=self._watch, name="kenning-service-watcher", daemon=True)
            self._watcher.start()
        return self

    def close(self) -> None:
        self._stop.set()
        if self._watcher is not None:
            self._watcher.join(5)
        with self.lock:
            self._engines.clear()
            self.workspace.close()

    # -- the model -----------------------------------------------------------------

    def model_for(self, name: str, wait: float = MODEL_WAIT_SECONDS) -> tuple[Embedder | None, str | None]:
        """The loaded model if it is `name` (waiting for it to load), or None and why not."""
        if name != self.model_name:
            return None, f"the service runs the model {self.model_name}, not {name}"
        self.model.wait(wait)
        return self.model.embedder, self.model.error

    def model_name_for(self, environ: Mapping[str, str], flag: str | None = None) -> str:
        """The model a client with this environment (and --model flag) would use on this store."""
        view = Workspace(self.store_path, model=flag, environ=environ)
        view.__dict__["store"] = self.workspace.store  # read through the open store; never closed
        with self.lock:
            return view.model_name

    def engine(self, embedder: Embedder | None) -> SearchEngine:
        """The engine for this embedder (None: keywords only), kept across requests; the
        keyword and the semantic engine share one set of word caches (search.engine)."""
        from kenning.search.engine import SearchEngine

        key = None if embedder is None else embedder.fingerprint
        if key not in self._engines:
            words = next(iter(self._engines.values())).words if self._engines else None
            self._engines[key] = SearchEngine(self.workspace.store, embedder, words=words)
        return self._engines[key]

    def describe(self) -> dict[str, Any]:
        return {
            "model": self.model_name,
            "model_state": self.model.state,
            "model_error": self.model.error,
            "watching": self.watching if self.watch else None,
            "http": self.http_url,
        }

    # -- the watcher ---------------------------------------------------------------

    def _watch(self) -> None:
        _lower_this_thread()
        workspace = Workspace(self.store_path, environ=self.environ)
        try:
            factory = EmbedderFactory(self.model_name)
            watcher = workspace.watcher(embedder_factory=factory, on_update=_log_update, on_notice=_log_notice)
            watcher.sync_sources()
            self.watching = watcher.watched_count
            log.info("service watching %d sources", self.watching)
            watcher.run(self._stop)
        except Exception:
            log.exception("the service's watcher stopped")
        finally:
            workspace.close()


def _lower_this_thread() -> None:
    """Linux gives each thread its own nice value (threads it starts inherit it)."""
    try:
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), WATCH_NICE)
    except (AttributeError, OSError):
        pass


def _log_update(update: Any) -> None:
    for report in update.reports:
        log.info(
            "watch: %s: %d new, %d changed, %d removed%s",
            report.source,
            report.added,
            report.changed,
            report.removed,
            f", {len(report.errors)} errors" if report.errors else "",
        )
    if update.embedded:
        log.info("watch: %d chunks embedded", update.embedded)


def _log_notice(text: str) -> None:
    log.warning("watch: %s", text)
