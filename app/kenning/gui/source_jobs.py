"""Source changes and repository inspection, off the UI thread.

Adding, removing (a cascading delete over every chunk of the source), enabling,
setting globs and asking git about a repository (`git status` walks the work tree)
can each take seconds, or wait for the indexing process's transaction: none may run
on the UI thread.  One worker runs them in order on its own Workspace (connection),
and hands each answer back to the UI thread through a signal, where the caller's
callback runs.  Failures arrive as words for the user (workspace.report logs them).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, QRunnable, QThreadPool, Signal

from kenning.core.logger import get_logger
from kenning.workspace import Workspace, report

log = get_logger(__name__)

Job = Callable[[Workspace], Any]
Done = Callable[[Any], None]
Failed = Callable[[str], None]


class _Run(QRunnable):
    def __init__(self, fn: Callable[[], None]) -> None:
        super().__init__()
        self._fn = fn

    def run(self) -> None:
        self._fn()


class SourceJobs(QObject):
    """Runs jobs (functions of a Workspace) one after another on a worker thread."""

    _finished = Signal(int, bool, object)  # job id, succeeded, result or message
    idle = Signal()  # every submitted job has reported back

    def __init__(self, store_path: Path, parent=None) -> None:
        super().__init__(parent)
        self.store_path = Path(store_path)
        self.pool = QThreadPool(self)
        self.pool.setMaxThreadCount(1)  # in order: a remove never overtakes the add before it
        self._workspace: Workspace | None = None  # opened, used and closed on the worker thread
        self._callbacks: dict[int, tuple[Done, Failed]] = {}
        self._next = 0
        self._closed = False
        self._finished.connect(self._deliver)

    @property
    def busy(self) -> bool:
        return bool(self._callbacks)

    def submit(self, doing: str, job: Job, on_done: Done, on_failed: Failed) -> int:
        """Run job(workspace) on the worker; on_done(result) or on_failed(message) on the UI thread."""
        self._next += 1
        job_id = self._next
        if self._closed:
            return job_id
        self._callbacks[job_id] = (on_done, on_failed)
        self.pool.start(_Run(lambda: self._run(job_id, doing, job)))
        return job_id

    def shutdown(self) -> None:
        self._closed = True
        self.pool.waitForDone(15000)
        self.pool.start(_Run(self._close_workspace))
        self.pool.waitForDone(5000)

    # Worker side.
    def _run(self, job_id: int, doing: str, job: Job) -> None:
        try:
            if self._workspace is None:
                self._workspace = Workspace(self.store_path)
            outcome: tuple[bool, Any] = (True, job(self._workspace))
        except Exception as exc:  # every failure reaches the user as words, the log with details
            outcome = (False, report(exc, self.store_path, doing=doing))
        try:
            self._finished.emit(job_id, *outcome)
        except RuntimeError:  # the window is gone: nobody to tell
            log.debug("source job %s finished after the window closed", doing)

    def _close_workspace(self) -> None:
        if self._workspace is not None:
            self._workspace.close()
            self._workspace = None

    # UI side.
    def _deliver(self, job_id: int, ok: bool, payload: Any) -> None:
        on_done, on_failed = self._callbacks.pop(job_id, (None, None))
        if self._closed or on_done is None:
            return
        if ok:
            on_done(payload)
        elif on_failed is not None:
            on_failed(payload)
        if not self._callbacks:
            self.idle.emit()
