"""The one place that opens SQLite: binding choice, pragmas, locking.

Kenning uses apsw rather than the standard sqlite3 module: its wheels for Linux, macOS
and Windows bundle a current SQLite with FTS5 and the trigram tokenizer, whatever
SQLite the Python was built with.  No extension is loaded: nearest-vector search is
Kenning's own scan (storage/vector_scan.py; sqlite-vec measured 4-200x slower for what
it must answer, docs/architecture.md §10).
"""

from __future__ import annotations

import contextlib
import functools
import os
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import apsw

from kenning import TYPE_CHECKING
from kenning.core import records
from kenning.core.errors import StoreError, StoreUnusable
from kenning.core.fsnames import NOT_TEXT_ADVICE, not_text, storable_name
from kenning.core.owndirs import private_dir, private_file_fd, tighten_own_dir
from kenning.storage.paths import is_kenning_home

if TYPE_CHECKING:
    from typing import Any, TypeVar

    from kenning.storage.api import FailureKind

    Row = TypeVar("Row")

BUSY_TIMEOUT_MS = 15_000


def _secure_parent(path: Path) -> None:
    """The store holds private notes: its folder is created user-only (0700).

    Kenning's own home may exist already, made by whatever ran first with the
    umask's mode: it is tightened too.  A folder the user chose with --store is left alone.
    """
    parent = path.parent
    if not parent.exists():
        private_dir(parent)
    elif is_kenning_home(parent):
        tighten_own_dir(parent)


def _touch_private(path: Path) -> None:
    """Create the database file 0600 before SQLite does (SQLite would use the umask)."""
    if not path.exists():
        os.close(private_file_fd(path, os.O_WRONLY))


class Store:
    """One connection to the store, with its pragmas applied.

    Every write goes through ``atomic()``: nested uses become savepoints, so a
    function that is atomic on its own stays correct inside a larger transaction.
    """

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        self._lock = threading.RLock()
        if not_text(str(self.path)):  # SQLite takes its file name as UTF-8
            raise StoreError(f"Cannot open the store {storable_name(str(self.path))}: {NOT_TEXT_ADVICE}.")
        if str(self.path) != ":memory:":
            try:
                _secure_parent(self.path)
                _touch_private(self.path)
            except OSError as exc:  # a file where the folder should be, no permission...
                raise StoreError(f"Cannot create the store {self.path}: {exc}") from exc
        try:
            self.conn = apsw.Connection(str(self.path))
        except apsw.Error as exc:
            raise StoreError(f"Cannot open the store {self.path}: {exc}") from exc
        self.conn.set_busy_timeout(BUSY_TIMEOUT_MS)
        try:
            self._apply_pragmas()
        except StoreError:
            self.conn.close()
            raise

    def _apply_pragmas(self) -> None:
        try:
            self.conn.execute("PRAGMA journal_mode=WAL")
            self.conn.execute("PRAGMA synchronous=NORMAL")
            self.conn.execute("PRAGMA foreign_keys=ON")
            self.conn.execute("PRAGMA temp_store=MEMORY")
            self.conn.execute("PRAGMA cache_size=-65536")
        except apsw.Error as exc:
            raise unusable(self.path, exc) from exc

    @contextlib.contextmanager
    def atomic(self, *, wait_ms: int | None = None) -> Iterator[None]:
        """A transaction; nested uses become savepoints.

        The outermost level starts with BEGIN IMMEDIATE, taking the write lock up
        front.  A deferred transaction (what a bare SAVEPOINT starts) that reads
        first and writes later fails at once with SQLITE_BUSY, without the busy
        timeout, when another connection committed in between: the indexer then
        reported "database is locked" for every file of a batch whenever the GUI
        or CLI saved a setting or added a source while it ran.

        wait_ms: how long to wait for another connection's write lock before
        apsw.BusyError, for a write that is worth less than waiting (a cache); None:
        BUSY_TIMEOUT_MS as it is when the transaction starts (read then, not when this
        method was defined, so the timeout is one setting).
        """
        with self._lock:
            if self.conn.in_transaction:
                with self.conn:  # apsw: SAVEPOINT / RELEASE / ROLLBACK TO
                    yield
                return
            self._begin(wait_ms)
            try:
                yield
            except BaseException:
                self._rollback()
                raise
            try:
                self.conn.execute("COMMIT")
            except BaseException:
                self._rollback()
                raise

    def _begin(self, wait_ms: int | None) -> None:
        if wait_ms is None or wait_ms == BUSY_TIMEOUT_MS:
            self.conn.execute("BEGIN IMMEDIATE")
            return
        # Safe to change for one statement: every use of the connection holds self._lock.
        self.conn.set_busy_timeout(wait_ms)
        try:
            self.conn.execute("BEGIN IMMEDIATE")
        finally:
            self.conn.set_busy_timeout(BUSY_TIMEOUT_MS)

    def _rollback(self) -> None:
        if self.conn.in_transaction:
            self.conn.execute("ROLLBACK")

    def execute(self, sql: str, params: Any = ()) -> list[tuple[Any, ...]]:
        with self._lock:
            return list(self.conn.execute(sql, params))

    def executemany(self, sql: str, rows: Any) -> None:
        with self._lock:
            self.conn.executemany(sql, rows)

    def scalar(self, sql: str, params: Any = ()) -> Any:
        rows = self.execute(sql, params)
        return rows[0][0] if rows else None

    def fetch(self, row_type: Callable[..., Row], sql: str, params: Any = ()) -> list[Row]:
        """Rows as row_type(**columns): each column is passed by its name (or alias),
        so a reordered SELECT can never put a value in the wrong field.  When the
        columns are the row type's fields in order, they are passed by position (the
        same values; building a dict per row cost a keyword list of 2,000 rows ~2 ms)."""
        with self._lock:
            cursor = self.conn.cursor()
            make: list[Callable[..., Row]] = []

            def named(cur: apsw.Cursor, values: tuple[Any, ...]) -> Row:
                if not make:
                    names = [column for column, _ in cur.get_description()]
                    if tuple(names) == _field_names(row_type):
                        make.append(row_type)
                    else:
                        make.append(lambda *row: row_type(**dict(zip(names, row))))
                return make[0](*values)

            cursor.row_trace = named
            return list(cursor.execute(sql, params))

    def version(self) -> tuple[int, int]:
        """Changes whenever this or any other connection commits anything: the key of
        every cache kept over the store's contents.  Read under the store's lock, so a
        write in flight on this connection is never half-seen."""
        with self._lock:
            data_version = self.conn.execute("PRAGMA data_version").get
            return (int(data_version), self.conn.total_changes())

    def interrupt(self) -> None:
        """Abort the statement running on this connection (from any thread): it raises
        apsw.InterruptError in its caller.  The service's bound on a request's time."""
        self.conn.interrupt()

    def close(self) -> None:
        with self._lock:
            self.conn.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def sqlite_failure_kind(exc: BaseException) -> FailureKind | None:
    """What an apsw error means for the user (None: not an apsw error)."""
    if not isinstance(exc, apsw.Error):
        return None
    if isinstance(exc, (apsw.BusyError, apsw.LockedError)):
        return "busy"
    if isinstance(exc, (apsw.CorruptError, apsw.NotADBError)):
        return "damaged"
    if isinstance(exc, apsw.FullError):
        return "full"
    if isinstance(exc, apsw.IOError):
        return "io"
    if isinstance(exc, (apsw.ReadOnlyError, apsw.CantOpenError, apsw.PermissionsError)):
        return "permission"
    return "unusable"


def unusable(path: Path, exc: apsw.Error) -> StoreUnusable:
    """The error a caller gets for a store SQLite refuses (workspace.messages words it)."""
    return StoreUnusable(str(path), sqlite_failure_kind(exc) or "unusable", str(exc))


@functools.lru_cache(maxsize=256)
def _field_names(row_type: Callable[..., Any]) -> tuple[str, ...]:
    """A dataclass's or named tuple's fields in order (() for any other callable)."""
    if records.is_dataclass(row_type):
        return tuple(f.name for f in records.fields(row_type) if f.init)
    return tuple(getattr(row_type, "_fields", ()))
