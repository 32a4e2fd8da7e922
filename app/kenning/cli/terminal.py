"""Everything the CLI writes to a terminal goes through here.

- `visible()` (kenning.core.controls, the log file's rule too) turns every control
  character of untrusted text (note text, titles, file and source names, error
  messages quoting paths) into a visible `\\uXXXX` escape.
- `safe_streams()` puts that sanitiser in front of stdout and stderr for a whole
  command, replaces what the output encoding cannot show, and turns write failures
  into OutputClosed / OutputFailed for main() to report like a Unix tool.
- Progress on a terminal: one rewritten line with rate and ETA; silent when piped.
"""

from __future__ import annotations

import contextlib
import errno
import os
import sys
import time
from collections.abc import Callable, Iterator

from kenning import TYPE_CHECKING
from kenning.core.controls import replace_controls, visible

if TYPE_CHECKING:
    from typing import Any, TextIO, TypeVar

    from kenning.core.progress import Progress

    T = TypeVar("T")

# Kenning's own highlight marks (Unicode noncharacters, which real text never holds):
# the safe stream turns them into colour on a terminal and drops them elsewhere.
HIGHLIGHT_ON = "\ufdd0"
HIGHLIGHT_OFF = "\ufdd1"
_SGR = {HIGHLIGHT_ON: "\033[1;33m", HIGHLIGHT_OFF: "\033[0m"}


def printable(text: str) -> str:
    """Untrusted text (a note's title, a path) made safe to print on one line."""
    return replace_controls(text)


def one_line(text: str) -> str:
    """A line naming untrusted things (a file, a source, a title): a newline or tab in a
    name is shown as `\\u000a` like every other control, so a name never forges a line."""
    return visible(text, one_line=True)


class OutputClosed(Exception):
    """The reader went away (a closed pipe: `kenning search x | head -1`)."""


class OutputFailed(Exception):
    """Writing the output failed (a full disk, an I/O error)."""


class SafeStream:
    """A text stream that sanitises, never fails on encoding, and names write failures."""

    def __init__(self, stream: TextIO, *, colour: bool) -> None:
        self.unsanitised = stream
        self._colour = colour

    def write(self, text: str) -> int:
        text = visible(text)
        for mark, sgr in _SGR.items():
            text = text.replace(mark, sgr if self._colour else "")
        try:
            return int(self.unsanitised.write(text))
        except UnicodeEncodeError:
            encoding = getattr(self.unsanitised, "encoding", None) or "ascii"
            return int(self._guard(lambda: self.unsanitised.write(text.encode(encoding, "replace").decode(encoding))))
        except OSError as exc:
            raise _output_error(exc) from None

    def flush(self) -> None:
        self._guard(self.unsanitised.flush)

    def _guard(self, action: Callable[[], T]) -> T:
        try:
            return action()
        except OSError as exc:
            raise _output_error(exc) from None

    def isatty(self) -> bool:
        return bool(getattr(self.unsanitised, "isatty", lambda: False)())

    def __getattr__(self, name: str) -> Any:
        return getattr(self.unsanitised, name)


def _output_error(exc: OSError) -> Exception:
    if isinstance(exc, BrokenPipeError) or exc.errno in (errno.EPIPE, errno.ECONNRESET):
        return OutputClosed()
    return OutputFailed(exc.strerror or str(exc))


def colour_wanted(stream: object) -> bool:
    return bool(getattr(stream, "isatty", lambda: False)()) and not os.environ.get("NO_COLOR")


@contextlib.contextmanager
def safe_streams() -> Iterator[None]:
    """Sanitise sys.stdout and sys.stderr for the duration (restored afterwards)."""
    saved = sys.stdout, sys.stderr
    sys.stdout = SafeStream(saved[0], colour=colour_wanted(saved[0]))
    sys.stderr = SafeStream(saved[1], colour=False)
    try:
        yield
    finally:
        sys.stdout, sys.stderr = saved


def silence(stream: object) -> None:
    """After a closed pipe or a failed write: point the stream's file descriptor at the
    null device, so the interpreter's final flush cannot fail again with a traceback."""
    try:
        fd = raw_stream(stream).fileno()
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, fd)
        os.close(null)
    except (OSError, AttributeError, ValueError):
        pass  # not a file (a test's StringIO): nothing is left to flush


def raw_stream(stream: Any) -> Any:
    """The stream under a SafeStream (progress draws its own, sanitised, line)."""
    return getattr(stream, "unsanitised", stream)


class TerminalProgress:
    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = raw_stream(stream or sys.stderr)
        self.enabled = hasattr(self.stream, "isatty") and self.stream.isatty()
        self._last_draw = 0.0
        self._last_phase = ""

    def __call__(self, p: Progress) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        if p.phase == self._last_phase and now - self._last_draw < 0.1:
            return
        if self._last_phase and p.phase != self._last_phase:
            self.stream.write("\n")
        self._last_phase, self._last_draw = p.phase, now
        self._draw(p)

    def _draw(self, p: Progress) -> None:
        import shutil  # progress is drawn by indexing commands only

        width = shutil.get_terminal_size((100, 20)).columns
        head = f"{p.phase:<10} {p.source}"
        if p.total:
            frac = min(1.0, p.done / p.total)
            bar = "#" * int(frac * 20)
            eta = (p.total - p.done) / p.rate if p.rate > 0 else 0
            body = f"[{bar:<20}] {p.done}/{p.total} {p.unit} {p.rate:5.1f}/s ETA {_duration(eta)}"
        else:
            body = f"{p.done} {p.unit} {p.rate:6.1f}/s"
        line = visible(f"{head}  {body}  {p.current}", one_line=True)
        self.stream.write("\r" + line[: width - 1].ljust(width - 1))
        self.stream.flush()

    def finish(self) -> None:
        if self.enabled and self._last_phase:
            self.stream.write("\n")
            self.stream.flush()
            self._last_phase = ""


def _duration(seconds: float) -> str:
    seconds = int(seconds)
    if seconds >= 3600:
        return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"
    return f"{seconds // 60}m{seconds % 60:02d}s"
