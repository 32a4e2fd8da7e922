"""The file watcher while the window is open, in a child process like the indexer.

The watcher core (kenning.ingest.watch, shared with `kenning index --watch`) runs in
its own process at lower priority: its indexing and embedding never hold the
window's GIL (see index_process for the measurements that led there).  Updates and
notices come back through a multiprocessing queue and leave as Qt signals.
"""

from __future__ import annotations

import multiprocessing
import queue as queue_module
import threading
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, QRunnable, QThreadPool, Signal

from kenning.core.logger import get_logger
from kenning.gui.index_process import lower_priority, when_parent_dies

log = get_logger(__name__)


def watch_child_main(store_path: str, factory, messages, stop_event) -> None:
    """Entry point of the watching process."""
    from kenning.workspace import Workspace

    lower_priority()
    stop = threading.Event()

    def stop_when_asked() -> None:
        stop_event.wait()
        stop.set()

    threading.Thread(target=stop_when_asked, daemon=True).start()
    when_parent_dies(stop.set, messages)
    workspace = Workspace(store_path)
    try:
        watcher = workspace.watcher(
            embedder_factory=factory,
            on_update=lambda update: messages.put(("update", update)),
            on_notice=lambda text: messages.put(("notice", text)),
        )
        watcher.sync_sources()
        messages.put(("ready", watcher.watched_count))
        watcher.run(stop)
    except Exception as exc:  # told to the window, never a silent death
        messages.put(("notice", f"File watching stopped: {type(exc).__name__}: {exc}"))
    finally:
        workspace.close()


class _Relay(QRunnable):
    def __init__(self, service: WatchService) -> None:
        super().__init__()
        self.service = service

    def run(self) -> None:
        self.service._relay()


class WatchService(QObject):
    """Starts and stops the watching process; `changed` fires after each indexed batch."""

    changed = Signal(object)  # WatchUpdate
    notice = Signal(str)
    ready = Signal(int)  # sources watched, once the watches are in place

    def __init__(self, store_path: Path, factory, parent=None) -> None:
        super().__init__(parent)
        self.store_path = store_path
        self.factory = factory  # picklable: it is called in the watching process
        self.pool = QThreadPool(self)
        self.pool.setMaxThreadCount(1)
        self._proc: Any = None
        self._stop: Any = None  # a multiprocessing Event, while the watching process runs
        self._messages: Any = None  # its Queue

    @property
    def running(self) -> bool:
        return self._proc is not None

    def start(self) -> None:
        if self._proc is not None:
            return
        ctx = multiprocessing.get_context("spawn")  # never fork a process that runs Qt threads
        self._stop = ctx.Event()
        self._messages = ctx.Queue()
        self._proc = ctx.Process(
            target=watch_child_main,
            args=(str(self.store_path), self.factory, self._messages, self._stop),
            name="kenning-watcher",
            daemon=True,
        )
        self._proc.start()
        self.pool.start(_Relay(self))

    def _relay(self) -> None:
        proc, messages = self._proc, self._messages
        while proc is not None and (proc.is_alive() or not messages.empty()):
            try:
                kind, payload = messages.get(timeout=0.2)
            except queue_module.Empty:
                continue
            except (EOFError, OSError):
                break
            try:
                {"update": self.changed, "notice": self.notice, "ready": self.ready}[kind].emit(payload)
            except RuntimeError:  # the window is gone
                break

    def shutdown(self, timeout: float = 5.0) -> None:
        proc, self._proc = self._proc, None
        if proc is None:
            return
        self._stop.set()
        proc.join(timeout)
        if proc.is_alive():
            log.warning("the watcher did not stop in %.0f s; killing it", timeout)
            proc.kill()
            proc.join(1)
        self.pool.waitForDone(2000)
