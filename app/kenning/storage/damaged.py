"""A damaged row is skipped, never the end of a search, and said once per process.

A row of a derived table (a remembered query vector, a chunk's stored vector or sign
code) can be damaged by hand, by a disk, or by another program writing the file:
text where a blob belongs, a vector of the wrong length or holding NaN.  The reader
treats such a row as absent (a cache miss, a chunk without a vector) and the log says
so once per kind, not once per search.
"""

from __future__ import annotations

from kenning.core.logger import get_logger

log = get_logger(__name__)
_said: set[str] = set()

ADVICE = "skipped; rebuilding the store from its sources repairs it if it keeps happening"


def skipped_row(what: str, detail: str) -> None:
    """Say once per process that a damaged row of `what` was skipped."""
    if what in _said:
        return
    _said.add(what)
    log.warning("a damaged %s in the store (%s): %s", what, detail, ADVICE)
