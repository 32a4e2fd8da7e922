"""Exceptions nobody caught: into kenning.log with their traceback, and into the window.

PySide hands an exception raised in a slot, an event handler or a QRunnable's run()
to sys.excepthook (on whichever thread raised it); a threading.Thread's goes to
threading.excepthook.  Python's default hooks print to stderr, which a desktop user
never sees, and the log (the file the About box asks users to attach) got nothing.
The window installs these hooks while it is open: each exception is logged through
workspace.report (traceback included) and its one-line user message is emitted to
the window on the UI thread.

A fault in a paint or timer handler repeats many times a second: its traceback is
logged for its first REPEATS_LOGGED occurrences, then every further one is counted.
"""

from __future__ import annotations

import sys
import threading
import traceback
from collections import Counter
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, Signal

from kenning.core.logger import get_logger
from kenning.workspace import report

log = get_logger(__name__)

REPEATS_LOGGED = 3


class ErrorReporter(QObject):
    """Logs an uncaught exception and emits `reported(message)`; safe from any thread
    (the signal is queued to the thread the reporter lives in)."""

    reported = Signal(str)

    def __init__(self, store_path: Path, parent=None) -> None:
        super().__init__(parent)
        self.store_path = store_path
        self._seen: Counter[tuple] = Counter()
        self._lock = threading.Lock()

    def handle(self, exc: BaseException, where: str) -> None:
        key = _signature(exc)
        with self._lock:
            self._seen[key] += 1
            count = self._seen[key]
        if count <= REPEATS_LOGGED:
            message = report(exc, self.store_path, doing=where)
        else:
            from kenning.workspace import user_message

            message = user_message(exc, self.store_path)
            if count % 100 == 0:
                log.error("the same error again (%d times): %s", count, message)
        try:
            self.reported.emit(message)
        except RuntimeError:  # the window is gone: the log has it
            pass


def _signature(exc: BaseException) -> tuple:
    """The same fault raised again: its type and where it was raised."""
    frames = traceback.extract_tb(exc.__traceback__)[-1:] if exc.__traceback__ else []
    return (type(exc).__name__, *((f.filename, f.lineno) for f in frames))


_reporters: list[ErrorReporter] = []
_previous: dict[str, Any] = {}


def install(reporter: ErrorReporter) -> None:
    """Route uncaught exceptions to reporter (the newest window's, while several are open)."""
    if sys.excepthook is not _excepthook:
        _previous["sys"] = sys.excepthook
        sys.excepthook = _excepthook
    if threading.excepthook is not _thread_hook:
        _previous["thread"] = threading.excepthook
        threading.excepthook = _thread_hook
    _reporters.append(reporter)


def uninstall(reporter: ErrorReporter) -> None:
    """The window closes: its reporter is dropped; with the last one the hooks go back."""
    if reporter in _reporters:
        _reporters.remove(reporter)
    if _reporters:
        return
    if sys.excepthook is _excepthook:
        sys.excepthook = _previous.pop("sys", sys.__excepthook__)
    if threading.excepthook is _thread_hook:
        threading.excepthook = _previous.pop("thread", threading.__excepthook__)


def _dispatch(exc: BaseException | None, where: str) -> None:
    if exc is None:
        return
    reporter = _reporters[-1] if _reporters else None
    if reporter is None:
        log.error("uncaught exception (%s)", where, exc_info=exc)
        return
    try:
        reporter.handle(exc, where)
    except Exception:  # reporting must never raise into Qt
        log.exception("reporting an uncaught exception failed")


def _excepthook(exc_type, exc, tb) -> None:
    if exc is not None and exc.__traceback__ is None and tb is not None:
        exc = exc.with_traceback(tb)
    if issubclass(exc_type, KeyboardInterrupt):
        sys.__excepthook__(exc_type, exc, tb)
        return
    thread = threading.current_thread()
    where = "handling an event in the window" if thread is threading.main_thread() else f"working on {thread.name}"
    _dispatch(exc, where)
    _chain("sys", exc_type, exc, tb)


def _thread_hook(args) -> None:
    if args.exc_type is SystemExit:
        return
    name = args.thread.name if args.thread is not None else "a thread"
    _dispatch(args.exc_value, f"working on {name}")
    _chain("thread", args)


def _chain(kind: str, *args) -> None:
    """A hook installed before ours that is not Python's printing one (pytest-qt's, which
    fails a test on an exception in Qt) still hears about it; stderr does not."""
    previous = _previous.get(kind)
    if previous is None or previous in (sys.__excepthook__, threading.__excepthook__):
        return
    previous(*args)
