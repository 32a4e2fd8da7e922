"""The one place that connects to a PostgreSQL team store.

Connection details are libpq's own (psycopg hands the string to libpq): a URL
(`postgresql://user@host/db?sslmode=verify-full`), a service name (`service=team` or
`PGSERVICE`, read from the service file), and the password from `~/.pgpass`
(`PGPASSFILE`) or the URL.  Kenning keeps the string only in memory and never writes
it, nor its password, anywhere: settings hold what the user typed only when it has no
password (workspace), and messages and logs name the store by `label()`, which leaves
the password out.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

import psycopg
from psycopg import conninfo as libpq

from kenning import TYPE_CHECKING
from kenning.core.errors import StoreError

if TYPE_CHECKING:
    from kenning.storage.api import FailureKind

Row = TypeVar("Row")
SCHEMA = "kenning"
CONNECT_TIMEOUT_SECONDS = 10
BUSY_TIMEOUT_MS = 15_000  # as the SQLite store's
URL_SCHEMES = ("postgresql://", "postgres://")
LOST_WHILE_INDEXING = (
    "The connection to the team store {store} was lost while indexing; "
    "what was committed is kept: run the index again to continue."
)


def is_postgres_target(target: str) -> bool:
    """Whether a --store value names a PostgreSQL store rather than a file."""
    text = target.strip()
    return text.startswith(URL_SCHEMES) or text.startswith("service=") or text == "postgresql:"


def without_password(target: str) -> str:
    """The connection string with any password taken out (what may be shown or saved)."""
    try:
        params = libpq.conninfo_to_dict(target)
    except psycopg.ProgrammingError:
        return "(a connection string that does not parse)"
    if "password" not in params:
        return target
    params.pop("password")
    if target.strip().startswith(URL_SCHEMES):
        return _url(params)
    return libpq.make_conninfo("", **{k: str(v) for k, v in params.items()})


def _url(params: dict[str, Any]) -> str:
    from urllib.parse import quote, urlencode

    user = params.pop("user", None)
    host = params.pop("host", "")
    port = params.pop("port", None)
    dbname = params.pop("dbname", "")
    netloc = (quote(str(user), safe="") + "@" if user else "") + ("" if host.startswith("/") else host)
    if port:
        netloc += f":{port}"
    if host.startswith("/"):
        params["host"] = host
    query = urlencode({k: str(v) for k, v in params.items()})
    return f"postgresql://{netloc}/{quote(str(dbname), safe='')}" + (f"?{query}" if query else "")


def label(target: str) -> str:
    """A short name for messages: user@host/database (never the password)."""
    try:
        params = libpq.conninfo_to_dict(target)
    except psycopg.ProgrammingError:
        return "PostgreSQL store"
    if "service" in params and "host" not in params:
        return f"service {params['service']}"
    host = str(params.get("host") or "localhost")
    where = "local socket" if host.startswith("/") else host
    user = f"{params['user']}@" if params.get("user") else ""
    return f"{user}{where}/{params.get('dbname', '')}".rstrip("/")


def short_label(target: str) -> str:
    """The name a team store's hits carry: its database (or service) name."""
    try:
        params = libpq.conninfo_to_dict(target)
    except psycopg.ProgrammingError:
        return "team"
    return str(params.get("dbname") or params.get("service") or "team")


def describe_connect_failure(target: str, exc: BaseException) -> str:
    """What a user can act on when the server cannot be reached or refuses us."""
    name = label(target)
    text = _first_line(exc)
    if isinstance(exc, psycopg.OperationalError):
        lowered = text.lower()
        if "password" in lowered or "authentication" in lowered:
            return (
                f"The team store {name} refused the login ({text}). Check the user and its password "
                "(in ~/.pgpass, or PGPASSWORD); Kenning never stores passwords."
            )
        if "does not exist" in lowered:
            return f"The team store {name} is not there ({text}). Check the database name."
        return (
            f"Cannot reach the team store {name} ({text}). Is the server running and reachable? "
            "Your personal store still works."
        )
    return f"Cannot use the team store {name}: {text}"


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return "".join(ch for ch in (text[0] if text else type(exc).__name__) if ch.isprintable())


def clean_str(value: str) -> str:
    """NUL and lone surrogates as U+FFFD (see _clean)."""
    cleaned: str = _clean(value)
    return cleaned


def _clean(value: Any) -> Any:
    """A parameter PostgreSQL can take: text holds no NUL and only valid UTF-8, so NUL
    and lone surrogates (a hostile query, a damaged file name) become U+FFFD, as the
    write side stores them; lists are cleaned element by element."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:  # lone surrogates
            value = value.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
        return value.replace("\x00", "\ufffd") if "\x00" in value else value
    if isinstance(value, list):
        return [_clean(v) for v in value]
    return value


def clean_params(params: Any) -> Any:
    if not params:
        return None
    return tuple(_clean(p) for p in params)


class PgStore:
    """One connection to a team store in PostgreSQL (schema `kenning`).

    The same shape as the SQLite Store: atomic() for transactions (nested uses are
    savepoints), version() as the change token, close().  Statements use psycopg's
    `%s` placeholders; values are always parameters.
    """

    kind = "postgresql"
    vec_available = True
    vec_error: str | None = None

    def __init__(self, target: str, *, connect_timeout: int = CONNECT_TIMEOUT_SECONDS) -> None:
        self.target = target
        self.path = label(target)  # what messages name the store by
        self._lock = threading.RLock()
        self._timeout = connect_timeout
        self._closed = False
        # Session-level state a new connection would not have (the indexing lock): while
        # it is held, a lost connection ends the work instead of reconnecting under it.
        self.session_locks = 0
        self._depth = 0  # transactions (atomic, reading) open on this connection
        self.last_version: int | None = None  # the change token as version() last read it
        self.session_ef_search: tuple[object, int] | None = None  # (connection, hnsw.ef_search it was set to)
        self.held_counts: Any = None  # lexical.HeldCounts: the words' counts last read, at their change token
        self.conn = self._connect()
        from kenning.storage.postgres.words import Words

        self.words = Words()

    def _connect(self) -> psycopg.Connection[tuple[Any, ...]]:
        try:
            return psycopg.connect(
                self.target,
                autocommit=True,
                connect_timeout=self._timeout,
                application_name="kenning",
                options=f"-c search_path={SCHEMA},public",
            )
        except psycopg.Error as exc:
            raise StoreError(describe_connect_failure(self.target, exc)) from None

    def _usable(self) -> None:
        """Reconnect when the server dropped the connection (it restarted, the network
        came back) and nothing session-bound is lost by it; else say the store is gone."""
        if not (self.conn.closed or self.conn.broken):
            return
        if self._closed:
            raise StoreError(f"The team store {self.path} was closed.")
        if self.session_locks:
            raise StoreError(LOST_WHILE_INDEXING.format(store=self.path))
        self.conn = self._connect()

    def _idle(self) -> bool:
        """No transaction of ours is open (whatever state a dropped connection reports)."""
        return self._depth == 0

    def idle(self) -> bool:
        """No transaction is open on this connection (another connection then reads all
        it wrote).  Without the lock: a statement running on another thread is no reason to wait."""
        return self._idle()

    def label(self) -> str:
        return label(self.target)

    @contextlib.contextmanager
    def atomic(self, *, wait_ms: int | None = None) -> Iterator[None]:
        """A write transaction; nested uses are savepoints (psycopg's Transaction).

        The outermost level takes the store's write lock at once (as SQLite's BEGIN
        IMMEDIATE), waiting wait_ms at most (None: BUSY_TIMEOUT_MS), then fails with
        the server's lock_not_available, a "busy" failure (storage.failure_kind)."""
        with self._lock, self._guard():
            outermost = self._idle()
            if outermost:
                self._usable()
            with self.conn.transaction(), self._within():
                if outermost:
                    self._take_write_lock(BUSY_TIMEOUT_MS if wait_ms is None else wait_ms)
                yield

    def _take_write_lock(self, wait_ms: int) -> None:
        from kenning.storage.postgres.schema import LOCK_SPACE, WRITE_LOCK

        self.conn.execute("SELECT set_config('lock_timeout', %s, true)", (f"{max(int(wait_ms), 1)}ms",))
        self.conn.execute("SELECT pg_advisory_xact_lock(%s, %s)", (LOCK_SPACE, WRITE_LOCK))
        self.conn.execute("SELECT set_config('lock_timeout', '0', true)")

    @contextlib.contextmanager
    def reading(self) -> Iterator[None]:
        """A transaction that only reads (several statements, one snapshot; no lock)."""
        with self._lock, self._guard():
            if self._idle():
                self._usable()
            with self.conn.transaction(), self._within():
                yield

    @contextlib.contextmanager
    def _within(self) -> Iterator[None]:
        self._depth += 1
        try:
            yield
        finally:
            self._depth -= 1

    @contextlib.contextmanager
    def _guard(self) -> Iterator[None]:
        try:
            yield
        except psycopg.OperationalError as exc:
            # A lost connection (no SQLSTATE from a server) is said plainly; a lock timeout
            # or a cancelled statement stays the server's error (storage.failure_kind: busy).
            if exc.sqlstate is None or self.conn.broken:
                if self.session_locks:
                    raise StoreError(LOST_WHILE_INDEXING.format(store=self.path)) from exc
                raise StoreError(describe_connect_failure(self.target, exc)) from exc
            raise

    def query(self, sql: str, params: Any = (), *, binary: bool = False) -> tuple[list[str], list[tuple[Any, ...]]]:
        """(column names, rows) of one statement.  Outside a transaction, a connection the
        server dropped since the last statement (a restart) is made anew and the
        statement sent once more; binary: values in PostgreSQL's binary form (arrays of
        floats without text parsing)."""
        with self._lock, self._guard():
            idle = self._idle()
            if idle:
                self._usable()
            try:
                cur = self.conn.execute(sql, clean_params(params), prepare=False, binary=binary)
            except psycopg.OperationalError:
                if not (idle and self.conn.broken):
                    raise
                self._usable()  # says so when the indexing lock went with the connection
                cur = self.conn.execute(sql, clean_params(params), prepare=False, binary=binary)
            if not cur.description:
                return [], []
            return [d.name for d in cur.description], list(cur.fetchall())

    def execute(self, sql: str, params: Any = ()) -> list[tuple[Any, ...]]:
        return self.query(sql, params)[1]

    def executemany(self, sql: str, rows: Any) -> None:
        with self._lock, self._guard(), self.conn.cursor() as cur:
            cur.executemany(sql, rows)

    def scalar(self, sql: str, params: Any = ()) -> Any:
        rows = self.execute(sql, params)
        return rows[0][0] if rows else None

    def fetch(self, row_type: Callable[..., Row], sql: str, params: Any = ()) -> list[Row]:
        """Rows as row_type(**columns), each column passed by its name."""
        names, rows = self.query(sql, params)
        return [row_type(**dict(zip(names, values))) for values in rows]

    def version(self) -> int:
        """The change token: a counter every writing statement bumps (schema triggers),
        read from the store, so another machine's commit is seen too (and kept as
        last_version: what was read once is still true while the token reads the same)."""
        self.last_version = int(self.scalar("SELECT generation FROM store_state WHERE id = 1") or 0)
        return self.last_version

    def close(self) -> None:
        with self._lock:
            self._closed = True
            self.conn.close()

    def __enter__(self) -> PgStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def pg_failure_kind(exc: BaseException) -> FailureKind | None:
    """What a PostgreSQL error means for the user (kenning.storage.failure_kind), None: not one."""
    if not isinstance(exc, psycopg.Error):
        return None
    errors = psycopg.errors
    if isinstance(exc, (errors.InsufficientPrivilege, errors.ReadOnlySqlTransaction)):
        return "permission"  # a reader's role, or a read replica
    if isinstance(exc, (errors.DiskFull, errors.OutOfMemory)):
        return "full"
    if isinstance(exc, (errors.LockNotAvailable, errors.QueryCanceled, errors.DeadlockDetected)):
        return "busy"
    if isinstance(exc, psycopg.OperationalError):
        return "io"  # the connection failed
    return "unusable"
