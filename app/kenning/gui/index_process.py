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

from kenning.core.errors import KenningError, StoreLockedError
from kenning.core.progress import CancelToken, Progress

PROGRESS_INTERVAL = 0.08  # seconds between progress messages: a 10k-file run must not flood the loop
LOCKED = "Another Kenning process is indexing this store; try again when it ends."


class ModelFactory:
    """A picklable embedder factory (a lambda cannot cross into the child process)."""

    def __init__(self, name: str, threads: int | None = None) -> None:
        self.name = name
        self.threads = threads

    def __call__(self):
        from kenning.embedding import resolve_embedder
        from kenning.storage.paths import model_cache_dir

        return resolve_embedder(self.name, model_cache_dir(), threads=self.threads)


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
    """Entry point of the indexing process."""
    from kenning.ingest.indexer import Indexer
    from kenning.storage import open_store
    from kenning.storage import sources as sources_repo

    _lower_priority()
    cancel = CancelToken()
    threading.Thread(target=lambda: (cancel_event.wait(), cancel.cancel()), daemon=True).start()
    throttle = Throttle(lambda p: messages.put(("progress", p)))
    try:
        store = open_store(store_path)
    except KenningError as exc:
        messages.put(("done", None, str(exc)))
        return
    try:
        chosen = None
        if source_ids is not None:
            chosen = [s for s in sources_repo.list_sources(store) if s.id in source_ids]
        kwargs = {"size_cap": size_cap} if size_cap else {}
        run = Indexer(store, factory, lock_wait_seconds=2.0, **kwargs).run(chosen, on_progress=throttle, cancel=cancel)
        throttle.flush()
        messages.put(("done", run, ""))
    except StoreLockedError:
        messages.put(("done", None, LOCKED))
    except Exception as exc:  # reported to the window, never a silent death
        messages.put(("done", None, f"{type(exc).__name__}: {exc}"))
    finally:
        store.close()


def _lower_priority() -> None:
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
