"""Long id lists in `IN (…)` clauses, cut into slices SQLite accepts."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from kenning import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import TypeVar

    Value = TypeVar("Value")

IN_BATCH = 500  # far below SQLite's bound-parameter limit, and small statements cache well


def in_batches(values: Sequence[Value], size: int = IN_BATCH) -> Iterator[tuple[Sequence[Value], str]]:
    """(slice, "?,?,…") for each slice of at most size values, in order; nothing for no values."""
    for start in range(0, len(values), size):
        part = values[start : start + size]
        yield part, ",".join("?" * len(part))
