"""The indexer runs in a child process, not a thread.

Measured with threads (tests/benchmarks/bench_gui_responsiveness.py, 3k files): the
event loop stalled for up to 157 ms, always while the indexer thread held the GIL in
a commit; every Qt call from Python can release the GIL and must wait for it back.
A process has its own GIL, so nothing the indexer does can block the window.
Progress, the final IndexRun and errors come back through a multiprocessing queue.
"""

from __future__ import annotations

import multiprocessing
import os
import queue as queue_module
import threading
import time
from collections.abc import Callable
from pathlib import Path

from kenning.core.errors import StoreLockedError
from kenning.core.logger import get_logger
from kenning.core.progress import CancelToken, Progress
from kenning.workspace import EmbedderFactory as ModelFactory  # picklable: a lambda cannot cross into the child

PROGRESS_INTERVAL = 0.08  # seconds between progress messages: a 10k-file run must not flood the loop
LOCKED = "Another Kenning process is indexing this store; try again when it ends."
log = get_logger(__name__)
__all__ = ["LOCKED", "ModelFactory", "Throttle", "child_main", "run_in_child"]


class Throttle:
    """Passes a Progress on at most every PROGRESS_INTERVAL, and every phase change."""

    def __init__(self, emit: Callable[[Progress], None]) -> None:
        self._emit = emit
        self._last = 0.0
        self._phase = ""
        self._pending: Progress | None = None

    def __call__(self, progress: Progress) -> None:
        now = time.monotonic()
        if progress.phase != self._phase or now - self._last >= PROGRESS_INTERVAL:
            self._phase, self._last, self._pending = progress.phase, now, None
            self._emit(progress)
        else:
            self._pending = progress

    def flush(self) -> None:
        if self._pending is not None:
            self._emit(self._pending)
            self._pending = None


def child_main(store_path, source_ids, factory, size_cap, messages, cancel_event) -> None:
    """Entry point of the indexing process (spawned: it configures its own logging)."""
    from kenning.workspace import Workspace, report, setup_logging

    setup_logging()
    lower_priority()
    cancel = CancelToken()

    def cancel_when_asked() -> None:
        cancel_event.wait()
        cancel.cancel()

    threading.Thread(target=cancel_when_asked, daemon=True).start()
    when_parent_dies(cancel.cancel, messages)
    throttle = Throttle(lambda p: messages.put(("progress", p)))
    workspace = Workspace(store_path)
    try:
        run = workspace.index(
            source_ids,
            embedder_factory=factory,
            on_progress=throttle,
            cancel=cancel,
            lock_wait_seconds=2.0,
            size_cap=size_cap,
        )
        throttle.flush()
        for report_ in run.reports:
            for error in report_.errors:
                log.warning("indexing %s: %s", report_.source, error)
        messages.put(("done", run, ""))
    except StoreLockedError:
        messages.put(("done", None, LOCKED))
    except Exception as exc:  # reported to the window (and the log, with its traceback), never a silent death
        messages.put(("done", None, report(exc, store_path, doing="indexing")))
    finally:
        workspace.close()


# How often a child of the window checks that the window's process is still there.
PARENT_CHECK_SECONDS = 1.0


def when_parent_dies(then: Callable[[], None], messages) -> None:
    """Call `then` once the window's process is gone (killed, crashed): its indexing or
    watching child must not go on alone -- a watcher left behind would hold the watch lock,
    and `kenning rebuild` refuses while a watch runs.  The queue is not flushed at exit
    then: nothing reads it any more."""
    parent = os.getppid()

    def wait() -> None:
        while os.getppid() == parent:
            time.sleep(PARENT_CHECK_SECONDS)
        messages.cancel_join_thread()
        then()

    threading.Thread(target=wait, name="kenning-parent-check", daemon=True).start()


def lower_priority() -> None:
    """Background work yields the CPU to the window (2-core machines: one core each)."""
    try:
        os.nice(10)
    except (AttributeError, OSError):  # Windows has no nice(); indexing still works
        pass


def run_in_child(store_path: Path, source_ids, factory, size_cap, cancel_event, on_progress) -> tuple[object, str]:
    """Start the child, relay its progress, return (IndexRun | None, error)."""
    ctx = multiprocessing.get_context("spawn")  # never fork a process that runs Qt threads
    messages = ctx.Queue()
    proc = ctx.Process(
        target=child_main,
        args=(str(store_path), source_ids, factory, size_cap, messages, cancel_event),
        name="kenning-indexer",
        daemon=True,
    )
    proc.start()
    try:
        while True:
            try:
                message = messages.get(timeout=0.2)
            except queue_module.Empty:
                if not proc.is_alive():
                    return None, f"the indexer stopped unexpectedly (exit code {proc.exitcode})"
                continue
            if message[0] == "progress":
                on_progress(message[1])
            else:
                return message[1], message[2]
    finally:
        proc.join(10)
        if proc.is_alive():
            proc.kill()
