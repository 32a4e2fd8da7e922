"""Query vectors remembered across processes, so a repeated search needs no model.

A command-line search is one process per query, and loading the model costs far more
than the search itself.  The vector of each query the model embedded is kept here,
keyed by the embedder's fingerprint (another model, or another version of the same
one, never reads it) and by the exact text the model was given.  The table holds the
`cap` most recently used queries (search.remembered.CAP); the least recently used are
dropped.

It is a cache: reading it never fails a search (a store made before it, a damaged
row: a miss), and writing it is best effort (a store busy with an indexer waits
WRITE_WAIT_MS at most, a read-only store is not written).  Vectors are stored as
float32, so a remembered vector is exactly the one the model gave.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import apsw

from kenning import TYPE_CHECKING
from kenning.storage.connection import Store
from kenning.storage.damaged import skipped_row

if TYPE_CHECKING:  # numpy is imported where vectors are read or written
    import numpy as np

WRITE_WAIT_MS = 50  # for another process's write lock; then the vectors stay unsaved


# The table (migration m008 of the SQLite store; also a team store's local memory, see
# storage/postgres/store.py): a rowid table, so a 1.5 KB vector fits in its row's page.
TABLE_DDL = """
CREATE TABLE IF NOT EXISTS query_vectors (
    id INTEGER PRIMARY KEY,
    fingerprint TEXT NOT NULL,
    text TEXT NOT NULL,
    vector BLOB NOT NULL,
    used_at REAL NOT NULL,
    UNIQUE (fingerprint, text)
);
CREATE INDEX IF NOT EXISTS query_vectors_by_use ON query_vectors (used_at);
"""


def recall(store: Store, fingerprint: str, text: str, dim: int) -> tuple[np.ndarray, float] | None:
    """(the vector, when it was last used) for text under fingerprint, or None."""
    import numpy as np

    try:
        rows = store.execute(
            "SELECT vector, used_at FROM query_vectors WHERE fingerprint = ? AND text = ?", (fingerprint, text)
        )
    except apsw.SQLError:  # no such table: the store is older than this cache and could not be upgraded
        return None
    except UnicodeDecodeError:  # the vector stored as text that is not even UTF-8
        skipped_row("remembered query vector", "text that is not UTF-8 where a vector belongs")
        return None
    if not rows:
        return None
    blob, used_at = rows[0]
    # A damaged row is a miss: the query is embedded again and its row written anew.
    if not isinstance(blob, bytes) or len(blob) != dim * 4 or not isinstance(used_at, (int, float)):
        skipped_row("remembered query vector", f"a {type(blob).__name__} of {len(blob)} where {dim * 4} bytes belong")
        return None
    vector = np.frombuffer(blob, dtype=np.float32).copy()
    if not np.isfinite(vector).all():
        skipped_row("remembered query vector", "NaN or infinite coordinates")
        return None
    return vector, float(used_at)


def remember(
    store: Store,
    fingerprint: str,
    new: Mapping[str, np.ndarray],
    used: Iterable[str],
    *,
    now: float,
    cap: int,
) -> bool:
    """Store the new vectors and mark the used ones as used now; drop the least recently
    used beyond cap.  False when the store could not be written (busy, read-only, full)."""
    import numpy as np

    rows = [(fingerprint, text, np.asarray(vec, dtype=np.float32).tobytes(), now) for text, vec in new.items()]
    touched = [(now, fingerprint, text) for text in used]
    if not rows and not touched:
        return True
    try:
        with store.atomic(wait_ms=WRITE_WAIT_MS):
            if rows:
                store.executemany(
                    "INSERT INTO query_vectors (fingerprint, text, vector, used_at) VALUES (?, ?, ?, ?) "
                    "ON CONFLICT (fingerprint, text) DO UPDATE SET vector = excluded.vector, used_at = excluded.used_at",
                    rows,
                )
            if touched:
                store.executemany("UPDATE query_vectors SET used_at = ? WHERE fingerprint = ? AND text = ?", touched)
            store.execute(
                "DELETE FROM query_vectors WHERE id IN "
                "(SELECT id FROM query_vectors ORDER BY used_at DESC, id DESC LIMIT -1 OFFSET ?)",
                (cap,),
            )
    except apsw.Error:  # busy, read-only, full disk, an older store: the search was answered all the same
        return False
    return True


def count(store: Store) -> int:
    return int(store.scalar("SELECT count(*) FROM query_vectors"))
