"""Keeping the index fresh while `kenning mcp` or `kenning serve` runs, and saying how fresh it is.

An assistant writes a note and searches for it a moment later; a session lasts hours
while the user edits files beside it.  So the server does what `kenning index --watch`
does, on a thread of its own with its own connection: once at start it catches up
(every source is walked; only files whose size or time changed are read again, as in
`kenning index`; its watch is already on, so nothing saved meanwhile is missed), then it
watches every enabled source (ingest.watch: the platform's
file notifications, or polling when the system's watch limit is reached) and indexes
each change within about a second, its vectors after it.  Every answer carries
`index`: when the store last changed and whether it is being watched.  One keeper per
process: the service's (serve.warm) is shared by every MCP session it serves.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kenning.core.errors import StoreLockedError
from kenning.core.logger import get_logger
from kenning.workspace.answers import iso

if TYPE_CHECKING:
    from kenning.ingest.watch import WatchUpdate
    from kenning.workspace import Workspace

log = get_logger(__name__)

STOP_WAIT_SECONDS = 3.0
NOT_WATCHING = "not watching the sources (started with --no-watch): run `kenning index` to see changes"


class IndexKeeper:
    """The catch-up run and the watcher, on one background thread.

    workspace_for() opens the keeper's own Workspace (connection) on its thread;
    embedder() gives the server's loaded model for the vectors of changed files (or
    raises when it could not be loaded: text is still indexed)."""

    def __init__(
        self,
        workspace_for: Callable[[], Any],
        embedder: Callable[[], Any],
        *,
        watch: bool = True,
        unwatched_note: str = NOT_WATCHING,
    ) -> None:
        self._workspace_for = workspace_for
        self._embedder = embedder
        self.watch = watch
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="kenning-mcp-index", daemon=True)
        self._watcher: Any = None
        self._checking = watch
        self._last_change: float | None = None
        self._notes: list[str] = [] if watch else [unwatched_note]
        self._lock = threading.Lock()

    def start(self) -> IndexKeeper:
        if self.watch:
            self._thread.start()
        return self

    def close(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(STOP_WAIT_SECONDS)

    # -- what answers say --------------------------------------------------------------

    def state(self, last_indexed: float | None) -> dict[str, Any]:
        """`index` of every answer: when the store last changed (a full run's end, or the
        last change the watcher indexed), whether changes are being followed, and why not."""
        with self._lock:
            changed = max((t for t in (last_indexed, self._last_change) if t is not None), default=None)
            watcher = self._watcher
            out: dict[str, Any] = {"updated": iso(changed), "watching": watcher is not None}
            if self._checking:
                out["checking"] = True  # the catch-up walk is still running
            if watcher is not None and watcher.pending:
                out["changes_pending"] = True  # heard, indexed within a second
            if self._notes:
                out["notes"] = list(self._notes)
        return out

    def _note(self, text: str) -> None:
        log.info("mcp index: %s", text)
        with self._lock:
            if text not in self._notes:
                self._notes = [*self._notes[-4:], text]

    # -- the thread ----------------------------------------------------------------------

    def _run(self) -> None:
        from kenning.workspace import user_message

        try:
            ws = self._workspace_for()
        except Exception as exc:
            self._note(f"the index is not kept fresh: {user_message(exc)}")
            self._checking = False
            return
        try:
            # Watching starts before the catch-up walk: a file saved while it runs is heard.
            watcher = ws.watcher(embedder_factory=self._embedder, on_update=self._updated, on_notice=self._note)
            watcher.sync_sources()
            with self._lock:
                self._watcher = watcher
            self._catch_up(ws)
            if not self._stop.is_set():
                watcher.run(self._stop)
        except Exception as exc:  # the server keeps answering from the index as it is
            log.warning("the MCP server's watcher stopped", exc_info=True)
            self._note(f"changes are no longer followed: {user_message(exc)}")
        finally:
            with self._lock:
                watcher, self._watcher = self._watcher, None
            if watcher is not None:
                watcher.close()  # run() closes it too; a failed catch-up leaves it to us
            ws.close()

    def _catch_up(self, ws: Workspace) -> None:
        """What changed while no server ran: the walk of `kenning index`, no embedding."""
        from kenning.workspace import user_message

        try:
            run = ws.index(embed=False)
            if any(r.added or r.changed or r.removed for r in run.reports):
                self._changed()
        except StoreLockedError:
            self._note("another Kenning is indexing this store: its changes appear as it commits them")
        except Exception as exc:
            self._note(f"could not check the sources for changes: {user_message(exc)}")
        finally:
            self._checking = False

    def _updated(self, update: WatchUpdate) -> None:
        if update.files or update.embedded:
            self._changed()

    def _changed(self) -> None:
        with self._lock:
            self._last_change = time.time()


def store_workspace(store_path: Path | str, model: str | None) -> Callable[[], Any]:
    """Opens a Workspace on the keeper's thread (a connection belongs to its thread family)."""

    def open_workspace() -> Workspace:
        from kenning.workspace import Workspace

        return Workspace(store_path, model=model)

    return open_workspace
