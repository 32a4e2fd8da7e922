"""The one place that opens SQLite: binding choice, pragmas, sqlite-vec, locking.

Kenning uses apsw rather than the standard sqlite3 module.  Many Pythons (pyenv
builds, macOS's system Python) compile sqlite3 without enable_load_extension, so
sqlite-vec could never load there.  apsw ships wheels for Linux, macOS and Windows that
bundle a current SQLite (FTS5 with the trigram tokenizer included) and always allow
extension loading, so the same code path works everywhere.
"""

from __future__ import annotations

import contextlib
import os
import threading
from pathlib import Path
from typing import Any, Iterator

import apsw

from kenning.core.errors import StoreError

BUSY_TIMEOUT_MS = 15_000


def _load_sqlite_vec(conn: apsw.Connection) -> str | None:
    """Load sqlite-vec into conn; return None on success or the reason it failed."""
    try:
        import sqlite_vec
    except ImportError as exc:
        return f"sqlite-vec is not installed ({exc})"
    try:
        conn.enable_load_extension(True)
        conn.load_extension(sqlite_vec.loadable_path())
        conn.enable_load_extension(False)
    except (apsw.Error, OSError, AttributeError) as exc:
        return f"sqlite-vec could not be loaded: {exc}"
    return None


def _secure_parent(path: Path) -> None:
    """The store holds private notes: its folder is created user-only (0700)."""
    parent = path.parent
    if not parent.exists():
        parent.mkdir(parents=True, mode=0o700, exist_ok=True)


def _touch_private(path: Path) -> None:
    """Create the database file 0600 before SQLite does (SQLite would use the umask)."""
    if not path.exists():
        fd = os.open(path, os.O_CREAT | os.O_WRONLY, 0o600)
        os.close(fd)


class Store:
    """One connection to the store, with its pragmas applied and sqlite-vec loaded.

    Every write goes through ``atomic()``: nested uses become savepoints, so a
    function that is atomic on its own stays correct inside a larger transaction.
    """

    def __init__(self, path: Path | str, *, load_vec: bool = True) -> None:
        self.path = Path(path)
        self._lock = threading.RLock()
        if str(self.path) != ":memory:":
            _secure_parent(self.path)
            _touch_private(self.path)
        try:
            self.conn = apsw.Connection(str(self.path))
        except apsw.Error as exc:
            raise StoreError(f"Cannot open the store {self.path}: {exc}") from exc
        self.conn.set_busy_timeout(BUSY_TIMEOUT_MS)
        self.vec_error = _load_sqlite_vec(self.conn) if load_vec else "disabled"
        self._apply_pragmas()

    @property
    def vec_available(self) -> bool:
        return self.vec_error is None

    def _apply_pragmas(self) -> None:
        try:
            self.conn.execute("PRAGMA journal_mode=WAL")
            self.conn.execute("PRAGMA synchronous=NORMAL")
            self.conn.execute("PRAGMA foreign_keys=ON")
            self.conn.execute("PRAGMA temp_store=MEMORY")
            self.conn.execute("PRAGMA cache_size=-65536")
        except apsw.Error as exc:
            raise StoreError(describe_open_failure(self.path, exc)) from exc

    @contextlib.contextmanager
    def atomic(self) -> Iterator[None]:
        with self._lock, self.conn:
            yield

    def execute(self, sql: str, params: Any = ()) -> list[tuple]:
        with self._lock:
            return list(self.conn.execute(sql, params))

    def executemany(self, sql: str, rows: Any) -> None:
        with self._lock:
            self.conn.executemany(sql, rows)

    def scalar(self, sql: str, params: Any = ()) -> Any:
        rows = self.execute(sql, params)
        return rows[0][0] if rows else None

    def close(self) -> None:
        with self._lock:
            self.conn.close()

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def describe_open_failure(path: Path, exc: BaseException) -> str:
    """A message a user can act on, for a store SQLite refuses to read."""
    if isinstance(exc, (apsw.CorruptError, apsw.NotADBError)):
        return (
            f"The store {path} is damaged ({exc}). Run `kenning rebuild` to move it "
            "aside and index your sources again; nothing in your files is touched."
        )
    return f"Cannot use the store {path}: {exc}"
