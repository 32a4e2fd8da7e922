"""Progress reports and cooperative cancellation, free of any UI toolkit."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field

from kenning.core.errors import Cancelled


@dataclass(frozen=True)
class Progress:
    """One progress report.

    phase is one of "scanning", "text", "embeddings", "removing", "git".
    total is None while unknown.
    """

    phase: str
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


@dataclass
class CancelToken:
    """Set from any thread; long loops check it between units of work."""

    _event: threading.Event = field(default_factory=threading.Event)

    def cancel(self) -> None:
        self._event.set()

    @property
    def cancelled(self) -> bool:
        return self._event.is_set()

    def raise_if_cancelled(self) -> None:
        if self._event.is_set():
            raise Cancelled("cancelled")
