"""sys.stdout and sys.stderr per thread, so a command run for a client writes to it alone.

The service installs one ThreadStreams pair for its whole life.  A thread that is
answering a client points them at that client's Capture; every other thread (the
watcher, the model loader, the MCP sessions) writes where the process always did.
"""

from __future__ import annotations

import contextlib
import sys
import threading
from collections.abc import Iterator
from typing import Any, TextIO

from kenning.serve.protocol import STDERR, STDOUT


class Capture:
    """What one command wrote, in order: [(STDOUT | STDERR, text), ...]."""

    def __init__(self, tty: tuple[bool, bool]) -> None:
        self.output: list[list[Any]] = []
        self.tty = tty

    def stream(self, which: int) -> CapturedStream:
        return CapturedStream(self, which)

    def write(self, which: int, text: str) -> None:
        if not text:
            return
        if self.output and self.output[-1][0] == which:
            self.output[-1][1] += text
        else:
            self.output.append([which, text])


class CapturedStream:
    """A text stream writing into a Capture; a terminal if the client's is one."""

    encoding = "utf-8"
    errors = "strict"

    def __init__(self, capture: Capture, which: int) -> None:
        self._capture = capture
        self._which = which

    def write(self, text: str) -> int:
        self._capture.write(self._which, text)
        return len(text)

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return self._capture.tty[0 if self._which == STDOUT else 1]

    def writable(self) -> bool:
        return True


class ThreadStreams:
    """A stand-in for sys.stdout or sys.stderr that writes to the current thread's target."""

    def __init__(self, default: TextIO) -> None:
        self._default = default
        self._local = threading.local()

    def _target(self) -> Any:
        return getattr(self._local, "target", None) or self._default

    def write(self, text: str) -> int:
        return int(self._target().write(text))

    def flush(self) -> None:
        self._target().flush()

    def isatty(self) -> bool:
        return bool(self._target().isatty())

    def __getattr__(self, name: str) -> Any:
        return getattr(self._target(), name)

    @contextlib.contextmanager
    def redirected(self, target: Any) -> Iterator[None]:
        previous = getattr(self._local, "target", None)
        self._local.target = target
        try:
            yield
        finally:
            self._local.target = previous


_installed: tuple[ThreadStreams, ThreadStreams] | None = None
_install_lock = threading.Lock()


def install() -> tuple[ThreadStreams, ThreadStreams]:
    """Put per-thread streams in front of sys.stdout and sys.stderr (once per process,
    and again if something has replaced them since: a test harness's capture)."""
    global _installed
    with _install_lock:
        if _installed is None or sys.stdout is not _installed[0] or sys.stderr is not _installed[1]:
            out = sys.stdout if isinstance(sys.stdout, ThreadStreams) else ThreadStreams(sys.stdout)
            err = sys.stderr if isinstance(sys.stderr, ThreadStreams) else ThreadStreams(sys.stderr)
            _installed = (out, err)
            sys.stdout, sys.stderr = _installed
        return _installed


@contextlib.contextmanager
def captured(tty: tuple[bool, bool]) -> Iterator[Capture]:
    """This thread's stdout and stderr go into a Capture for the duration."""
    out, err = install()
    capture = Capture(tty)
    with out.redirected(capture.stream(STDOUT)), err.redirected(capture.stream(STDERR)):
        yield capture
