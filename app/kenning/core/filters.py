"""Which chunks a search may return, as plain data.

Search builds a ChunkFilter from what the user typed; each storage backend turns it
into its own query language, and every retriever applies it inside its own query,
before ranking, so a matching chunk can win however many non-matching chunks would
outscore it.  Chunks of disabled sources are never returned.
"""

from __future__ import annotations

from kenning import TYPE_CHECKING
from kenning.core.records import Record

if TYPE_CHECKING:
    from typing import Literal

    TestFiles = Literal["excluded", "only", "included"]


class ChunkFilter(Record, frozen=True):
    """Which chunks a search may return (every field empty: all of them)."""

    sources: tuple[str, ...] = ()  # source names: any of them
    exts: tuple[str, ...] = ()  # file extensions, lowercase, without the dot: any of them
    tags: tuple[str, ...] = ()  # front-matter tags: any of them
    # Any of: a glob ("*?[") matches the whole relative path or any tail of it (after a
    # "/"); other text is a substring of the relative path.  A leading "./" is ignored.
    paths: tuple[str, ...] = ()
    test_files: TestFiles = "excluded"  # tests and test data are left out unless asked for
    after: float | None = None  # the document's date (updated, else created, else mtime) >= after
    before: float | None = None  # ... <= before
    # Required: a chunk qualifies when the word index finds each phrase's words side by
    # side in it (a one-word phrase: that word).
    phrases: tuple[tuple[str, ...], ...] = ()
    excluded: tuple[str, ...] = ()  # words: chunks the word index finds any of them in are left out
    except_document: int | None = None  # this document's chunks are left out (documents like it)
