"""Progress reports and cooperative cancellation, free of any UI toolkit."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import field
from typing import Literal

from kenning.core.records import Record

# scanning: walking a source; git: reading a repository's history; text: phase 1
# (reading, chunking, FTS); removing: dropping documents that are gone; embeddings: phase 2.
Phase = Literal["scanning", "git", "text", "removing", "embeddings"]


class Progress(Record, frozen=True):
    """One progress report.

    total is None while unknown.
    """

    phase: Phase
    done: int
    total: int | None = None
    current: str = ""
    errors: int = 0
    source: str = ""
    rate: float = 0.0  # items per second in this phase
    unit: str = "files"


ProgressCallback = Callable[[Progress], None]


def no_progress(_: Progress) -> None:
    """Default progress sink."""


class CancelToken(Record):
    """Set from any thread; long loops check it between units of work."""

    _event: threading.Event = field(default_factory=threading.Event)

    def cancel(self) -> None:
        self._event.set()

    @property
    def cancelled(self) -> bool:
        return self._event.is_set()
