"""The listening side: one service per store, its socket, its lock, its connections.

- **One per store.**  The service holds an OS lock on `<key>.lock` in the runtime folder
  for its whole life (the kernel drops it when the process dies, however it dies).  A
  second service for the same store finds the lock taken and refuses to start.
- **No stale socket.**  Only the lock's holder may bind: a socket file left by a
  service that was killed is removed by the next one before it binds, and a service
  removes its own socket when it stops (only if the file is still its own).
- **This user only.**  The folder is 0700 and the socket 0600, so the kernel refuses
  other users; each connection's peer uid (SO_PEERCRED) is checked again, and a
  connection from another uid is answered with a refusal and closed.
- **Bounded.**  A request line is at most MAX_REQUEST_BYTES and must arrive within
  REQUEST_READ_SECONDS; at most MAX_CONNECTIONS are served at once (the rest get
  "busy"); what a request may do is the handler's: the service answers only the ops it
  was given, for its own store.
- **Idle exit.**  With no connection open and none for `idle_seconds`, it stops.
"""

from __future__ import annotations

import contextlib
import os
import socket
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from kenning import serve
from kenning.core.errors import KenningError
from kenning.core.logger import get_logger
from kenning.serve import address as addresses
from kenning.serve import protocol
from kenning.serve.peer import peer_uid, supported

log = get_logger(__name__)

MAX_CONNECTIONS = 32
ACCEPT_POLL_SECONDS = 0.5  # how often the accept loop looks at the idle clock and the stop flag
DEFAULT_IDLE_MINUTES = serve.DEFAULT_IDLE_MINUTES


class ServiceError(KenningError):
    """The service cannot start (another runs, the runtime folder is unsafe...)."""


class ServiceRunning(ServiceError):
    def __init__(self, store: str, pid: int | None) -> None:
        self.pid = pid
        who = f" (pid {pid})" if pid else ""
        super().__init__(
            f"A Kenning service is already running for {store}{who}; "
            "`kenning serve --stop` stops it, `kenning serve --status` describes it."
        )


class Channel:
    """One client connection, handed to the handler of its request."""

    def __init__(self, sock: socket.socket, reader: protocol.LineReader, peer_pid: int | None = None) -> None:
        self.sock = sock
        self.reader = reader
        self.peer_pid = peer_pid

    def send(self, message: dict[str, Any]) -> None:
        self.sock.sendall(protocol.encode(message))


Handler = Callable[[dict[str, Any], Channel], None]


class _Lock:
    """The service's OS lock, held for its life; the file says the holder's pid."""

    def __init__(self, path: str, store: str) -> None:
        import fcntl

        self.path = path
        self.fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            pid = _read_pid(self.fd)
            os.close(self.fd)
            raise ServiceRunning(store, pid) from None
        os.ftruncate(self.fd, 0)
        os.write(self.fd, str(os.getpid()).encode())

    def release(self) -> None:
        os.close(self.fd)  # closing the only descriptor drops the flock


def _read_pid(fd: int) -> int | None:
    try:
        text = os.pread(fd, 32, 0).decode().strip()
        return int(text) if text else None
    except (OSError, ValueError):
        return None


def running_pid(store: str) -> int | None:
    """The pid of the service running for store, if one holds its lock."""
    import fcntl

    address = addresses.address_for(store)
    try:
        fd = os.open(address.lock, os.O_RDONLY)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError:
        return _read_pid(fd)  # held: a service runs
    finally:
        os.close(fd)
    return None


class Service:
    """Listens for one store; `serve()` blocks until stopped or idle."""

    def __init__(
        self,
        store: str | os.PathLike[str],
        handlers: Mapping[str, Handler],
        *,
        idle_seconds: float | None = DEFAULT_IDLE_MINUTES * 60,
        describe: Callable[[], dict[str, Any]] = dict,
        environ: Mapping[str, str] | None = None,
        max_connections: int = MAX_CONNECTIONS,
    ) -> None:
        if not supported():
            raise ServiceError("The Kenning service needs Unix domain sockets with peer credentials (Linux, macOS).")
        self.address = addresses.address_for(os.fspath(store), environ)
        self.handlers = dict(handlers)
        self.idle_seconds = idle_seconds
        self.describe = describe
        self.started_at = 0.0
        self._slots = threading.BoundedSemaphore(max_connections)
        self._stop = threading.Event()
        self._active = 0
        self._last_activity = time.monotonic()
        self._activity_lock = threading.Lock()
        self._sock: socket.socket | None = None
        self._socket_inode: tuple[int, int] | None = None
        self._lock: _Lock | None = None

    # -- life ------------------------------------------------------------------------

    def start(self) -> Service:
        """Take the lock and bind the socket (ServiceRunning when another service has them)."""
        addresses.make_private_dir(self.address.folder)
        addresses.check_socket_path(self.address)
        self._lock = _Lock(self.address.lock, self.address.store_path)
        try:
            self._bind()
        except BaseException:
            self._lock.release()
            self._lock = None
            raise
        self.started_at = time.time()
        self._touch()
        log.info("service listening on %s for %s", self.address.socket, self.address.store_path)
        return self

    def _bind(self) -> None:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.address.socket)  # left by a service that died: we hold the lock now
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        previous = os.umask(0o177)  # the socket is born 0600: no window where it is wider
        try:
            sock.bind(self.address.socket)
        except OSError as exc:
            sock.close()
            raise ServiceError(f"Cannot listen on {self.address.socket}: {exc.strerror}") from exc
        finally:
            os.umask(previous)
        os.chmod(self.address.socket, 0o600)
        info = os.stat(self.address.socket)
        self._socket_inode = (info.st_dev, info.st_ino)
        sock.listen(64)
        sock.settimeout(ACCEPT_POLL_SECONDS)
        self._sock = sock

    def serve(self) -> None:
        """Accept connections until stop() or the idle time passes."""
        assert self._sock is not None, "start() first"
        try:
            while not self._stop.is_set():
                if self._idle_expired():
                    log.info("service idle for %.0f s: stopping", self.idle_seconds or 0)
                    break
                try:
                    conn, _ = self._sock.accept()
                except TimeoutError:
                    continue
                except OSError:
                    if self._stop.is_set():
                        break
                    raise
                self._dispatch(conn)
        finally:
            self.close()

    def stop(self) -> None:
        self._stop.set()

    @property
    def stopping(self) -> bool:
        return self._stop.is_set()

    def close(self) -> None:
        """Remove the socket (if still ours), then drop the lock: in this order, so a
        service starting meanwhile never has its new socket removed by this one."""
        self._stop.set()
        if self._sock is not None:
            self._sock.close()
            self._sock = None
            with contextlib.suppress(OSError):
                info = os.stat(self.address.socket)
                if (info.st_dev, info.st_ino) == self._socket_inode:
                    os.unlink(self.address.socket)
        if self._lock is not None:
            self._lock.release()
            self._lock = None

    # -- activity (the idle clock) ---------------------------------------------------

    def _touch(self) -> None:
        self._last_activity = time.monotonic()

    @contextlib.contextmanager
    def busy(self) -> Iterator[None]:
        """Counts as activity while held (a connection being served, an MCP session open)."""
        with self._activity_lock:
            self._active += 1
            self._touch()
        try:
            yield
        finally:
            with self._activity_lock:
                self._active -= 1
                self._touch()

    def _idle_expired(self) -> bool:
        if self.idle_seconds is None or self.idle_seconds <= 0:
            return False
        with self._activity_lock:
            return self._active == 0 and time.monotonic() - self._last_activity >= self.idle_seconds

    # -- connections -----------------------------------------------------------------

    def _dispatch(self, conn: socket.socket) -> None:
        if not self._slots.acquire(blocking=False):
            _refuse(conn, "the service is busy (too many connections); try again")
            return
        thread = threading.Thread(
            target=self._serve_connection, args=(conn,), name="kenning-service-client", daemon=True
        )
        try:
            thread.start()
        except BaseException:
            self._slots.release()
            conn.close()
            raise

    def _serve_connection(self, conn: socket.socket) -> None:
        try:
            with conn, self.busy():
                uid = peer_uid(conn)
                if uid != os.getuid():
                    log.warning("refused a connection from uid %s (this service is uid %d's)", uid, os.getuid())
                    _refuse(conn, "this service belongs to another user")
                    return
                self._answer(conn)
        except OSError as exc:  # the client went away mid-answer
            log.debug("connection ended: %s", exc)
        except Exception:
            log.exception("the service failed on a request")
        finally:
            self._slots.release()

    def _answer(self, conn: socket.socket) -> None:
        reader = protocol.LineReader(conn)
        channel = Channel(conn, reader)
        try:
            line = reader.read_line(protocol.MAX_REQUEST_BYTES, protocol.REQUEST_READ_SECONDS)
            if not line:
                return
            request = protocol.decode(line)
        except protocol.ProtocolError as exc:
            channel.send({"ok": False, "error": f"bad request: {exc}"})
            return
        conn.settimeout(None)
        if request.get("kenning") != protocol.PROTOCOL:
            channel.send({"ok": False, "fallback": True, "error": "another protocol version"})
            return
        op = request.get("op")
        if op == "ping":
            channel.send({"ok": True, **self._description()})
        elif op == "stop":
            channel.send({"ok": True, "pid": os.getpid()})
            log.info("service asked to stop")
            self.stop()
        elif isinstance(op, str) and op in self.handlers:
            self.handlers[op](request, channel)
        else:
            channel.send({"ok": False, "fallback": True, "error": f"this service does not answer {op!r}"})

    def _description(self) -> dict[str, Any]:
        from kenning import __version__

        return {
            "pid": os.getpid(),
            "store": self.address.store_path,
            "version": __version__,
            "started": self.started_at,
            "idle_timeout": self.idle_seconds,
            "ops": sorted(self.handlers),
            **self.describe(),
        }


def _refuse(conn: socket.socket, why: str) -> None:
    with contextlib.suppress(OSError):
        conn.sendall(protocol.encode({"ok": False, "error": why}))
    conn.close()
