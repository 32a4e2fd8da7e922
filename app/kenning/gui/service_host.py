"""The service inside the app while its window is open (docs/architecture.md §11).

The window has loaded the model for its own searches; the service answers the CLI and
assistants with that same model (one copy in memory) and with the window's own Searcher
(its connection, engines, vector scan and caches: one copy of those too), taking turns
with the window's search thread under the window's lock (gui.workers.SearchService), on
a thread of its own.  The window's watcher keeps the store fresh, so the
service watches nothing itself.  When a `kenning serve` already runs for this store,
that one keeps serving and the app runs none.  No Qt here: the host is plain threads.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from kenning.core.logger import get_logger
from kenning.embedding import Embedder
from kenning.serve.server import Service, ServiceError, ServiceRunning
from kenning.workspace.background import BackgroundModel
from kenning.workspace.searcher import Searcher

log = get_logger(__name__)

WINDOW_WATCHES = "changes to the sources are followed by the open Kenning window"
HandlersFor = Callable[[Any], dict[str, Any]]  # warm state -> the ops it answers (cli.serving.handlers_for)


class ServiceHost:
    def __init__(
        self,
        store_path: Path,
        model: Callable[[], Embedder],
        handlers_for: HandlersFor,
        *,
        searcher: Searcher | None = None,
        lock: threading.RLock | None = None,
    ) -> None:
        """searcher, lock: the window's, answered with and taken in turns (None: the
        service opens a Searcher of its own)."""
        self.store_path = Path(store_path)
        self.model = model
        self.handlers_for = handlers_for
        self.searcher = searcher
        self.lock = lock
        self.service: Service | None = None
        self._warm: Any = None
        self._thread: threading.Thread | None = None

    @classmethod
    def for_window(cls, window: Any, handlers_for: HandlersFor) -> ServiceHost:
        """The service beside an open window (gui.main_window.MainWindow): its model, and its
        search thread's Searcher and lock."""
        search = window.search_service
        return cls(window.store_path, window.holder.get, handlers_for, searcher=search.searcher, lock=search.lock)

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def start(self) -> ServiceHost:
        """Serve while the window is open; quietly none when another service (or no
        Unix socket support) makes that impossible: the app works the same without it."""
        from kenning.serve import streams
        from kenning.serve.warm import Warm

        try:
            service = Service(self.store_path, {}, idle_seconds=None).start()
        except ServiceRunning as exc:
            log.info("the app runs no service: %s", exc)
            return self
        except ServiceError as exc:
            log.warning("the app runs no service: %s", exc)
            return self
        try:
            model = BackgroundModel(self.model, name="kenning-app-service-model").start()
            self._warm = Warm(
                self.store_path,
                model=model,
                watch=False,
                unwatched_note=WINDOW_WATCHES,
                searcher=self.searcher,
                lock=self.lock,
            ).start()
            service.handlers.update(self.handlers_for(self._warm))
            service.describe = self._warm.describe
        except Exception:
            service.close()
            log.exception("the app's service could not start")
            return self
        streams.install()
        self.service = service
        self._thread = threading.Thread(target=service.serve, name="kenning-app-service", daemon=True)
        self._thread.start()
        log.info("the app serves %s on %s", self.store_path, service.address.socket)
        return self

    def stop(self) -> None:
        if self.service is not None:
            self.service.stop()
        if self._thread is not None:
            self._thread.join(5)
        if self._warm is not None:
            self._warm.close()
        self.service = self._thread = self._warm = None
