"""Progress on a terminal: one rewritten line with rate and ETA; silent when piped."""

from __future__ import annotations

import shutil
import sys
import time

from kenning.core.progress import Progress


class TerminalProgress:
    def __init__(self, stream=None) -> None:
        self.stream = stream or sys.stderr
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
        width = shutil.get_terminal_size((100, 20)).columns
        head = f"{p.phase:<10} {p.source}"
        if p.total:
            frac = min(1.0, p.done / p.total)
            bar = "#" * int(frac * 20)
            eta = (p.total - p.done) / p.rate if p.rate > 0 else 0
            body = f"[{bar:<20}] {p.done}/{p.total} {p.unit} {p.rate:5.1f}/s ETA {_duration(eta)}"
        else:
            body = f"{p.done} {p.unit} {p.rate:6.1f}/s"
        line = f"{head}  {body}  {p.current}"
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
