"""The MCP server's tools served from the service: over its socket, and over HTTP.

- **Socket sessions** (`kenning mcp` when a service runs): the bridge process relays
  its stdin and stdout to the service's socket byte for byte (serve.bridge); here,
  in the service, each connection is one MCP session of the same server that
  `kenning mcp` runs in-process (server.build_server over a KenningService), framed
  as the stdio transport frames it (one JSON-RPC message a line, at most
  MAX_MCP_MESSAGE_BYTES).  The tools' definitions and answers exist once, in
  server.py and service.py.
- **HTTP** (`kenning mcp --http PORT`, `kenning serve --http PORT`): the SDK's
  streamable HTTP transport on a loopback address only, every request carrying the
  install's token (`Authorization: Bearer TOKEN`; the token lives in a 0600 file in
  Kenning's home), Host and Origin checked against the loopback names (DNS rebinding).

Every session shares the service's Workspace, lock, engines and loaded model, so the
first answer is as fast and as hybrid as the hundredth, and fresh (the service's watcher).
"""

from __future__ import annotations

import hmac
import ipaddress
import json
import os
import secrets
import socket
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kenning import __version__
from kenning.core.errors import KenningError
from kenning.core.logger import get_logger
from kenning.mcpserver.options import DEFAULT_MAX_BYTES
from kenning.serve import protocol
from kenning.workspace import kenning_home

if TYPE_CHECKING:
    from collections.abc import Callable

    from kenning.mcpserver.service import KenningService
    from kenning.serve.server import Channel, Handler
    from kenning.serve.warm import Warm

log = get_logger(__name__)

# The service imports the MCP SDK on several threads: the warm-up, each session, and the
# HTTP endpoint's start in the main thread (the SDK imports more modules lazily while a
# server is built).  Two threads importing the same package's modules at once can end in
# importlib's _DeadlockError, which ended the service when `--http` started while the
# warm-up ran; so importing and building take turns under this lock.
_SDK_TURN = threading.Lock()

TOKEN_FILE = "mcp-http-token"
HTTP_PATH = "/mcp"


# -- sessions over the service's socket ---------------------------------------------


def service_for(
    warm: Warm, record: Callable[..., dict[str, Any]], max_bytes: int, allow_writes: bool
) -> KenningService:
    """The tools' behaviour over the service's warm state, one per (cap, writes) pair, kept."""
    from kenning.mcpserver.service import KenningService

    key = (max_bytes, allow_writes)
    with warm.lock:
        if key not in warm.mcp_services:
            warm.mcp_services[key] = KenningService(
                warm.workspace,
                record,
                max_bytes=max_bytes,
                allow_writes=allow_writes,
                background_model=warm.model,
                lock=warm.lock,
                searcher=warm.searcher,
                keeper=warm.keeper,
            )
        service: KenningService = warm.mcp_services[key]
        return service


def socket_handler(warm: Warm, record: Callable[..., dict[str, Any]]) -> Handler:
    """The service's "mcp" op: this connection becomes one MCP session.  The SDK and the
    tools are made ready now, in the background, so the first session answers as fast as
    the next (measured: 2.5-3.2 s for the first against 0.4 s, at load 11)."""
    warm_up = threading.Thread(target=prepare_sessions, args=(warm, record), name="kenning-mcp-warm-up", daemon=True)
    warm.background.append(warm_up)  # the service's exit waits for it (serve.warm.FINISH_SECONDS)
    warm_up.start()

    def handle(request: dict[str, Any], channel: Channel) -> None:
        refusal = _refusal(request, warm)
        if refusal:
            channel.send({"ok": False, "fallback": True, "error": refusal})
            return
        max_bytes = request.get("max_bytes")
        service = service_for(
            warm,
            record,
            max_bytes if isinstance(max_bytes, int) else DEFAULT_MAX_BYTES,
            request.get("allow_writes") is True,
        )
        channel.send({"ok": True})
        run_session(service, channel)

    return handle


def prepare_sessions(warm: Warm, record: Callable[..., dict[str, Any]]) -> None:
    """Import the SDK, make the default sessions' KenningService and build its tools
    once; warm.mcp_ready is set when done (or when that failed: a session then says why)."""
    try:
        with _SDK_TURN:
            from mcp.server.stdio import stdio_server  # noqa: F401  (what run_session imports)

            from kenning.mcpserver.server import build_server

            build_server(service_for(warm, record, DEFAULT_MAX_BYTES, False))
    except Exception:
        log.warning("MCP sessions could not be prepared", exc_info=True)
    finally:
        warm.mcp_ready.set()


def _refusal(request: dict[str, Any], warm: Warm) -> str | None:
    env = request.get("env")
    store = request.get("store")
    if request.get("version") != __version__:
        return f"the service is Kenning {__version__}"
    if not isinstance(env, dict) or not isinstance(store, str):
        return "bad request"
    if os.path.realpath(store) != os.path.realpath(warm.store_path):
        return "another store"
    if env.get("KENNING_HOME") != warm.environ.get("KENNING_HOME"):
        return "another KENNING_HOME"
    flag = request.get("model")
    wanted = warm.model_name_for(
        {k: v for k, v in env.items() if isinstance(v, str)}, flag if isinstance(flag, str) else None
    )
    if wanted != warm.model_name:
        return f"the model {wanted} (the service runs {warm.model_name})"
    return None


class _Lines:
    """The connection's lines as the stdio transport reads stdin (an async iterator)."""

    def __init__(self, reader: protocol.LineReader) -> None:
        self.reader = reader

    def __aiter__(self) -> _Lines:
        return self

    async def __anext__(self) -> str:
        import anyio

        line = await anyio.to_thread.run_sync(self.reader.read_line, protocol.MAX_MCP_MESSAGE_BYTES, None)
        if not line:
            raise StopAsyncIteration
        return line.decode("utf-8", "replace") + "\n"


class _Writer:
    """The connection as the stdio transport writes stdout."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock

    async def write(self, text: str) -> None:
        import anyio

        await anyio.to_thread.run_sync(self.sock.sendall, text.encode("utf-8"))

    async def flush(self) -> None:
        pass


def run_session(service: KenningService, channel: Channel) -> None:
    """Serve one MCP session on this connection until the bridge closes it."""
    with _SDK_TURN:
        import anyio
        from mcp.server.stdio import stdio_server

        from kenning.mcpserver.server import build_server

        server = build_server(service)
    lowlevel = server._lowlevel_server  # the SDK runs an MCPServer over given streams only through it

    async def serve() -> None:
        async with stdio_server(stdin=_Lines(channel.reader), stdout=_Writer(channel.sock)) as (read, write):  # type: ignore[arg-type]
            await lowlevel.run(read, write, lowlevel.create_initialization_options())

    try:
        anyio.run(serve)
    except Exception as exc:  # the bridge went away, or sent a line over the bound
        log.info("MCP session ended: %r", exc)


# -- streamable HTTP on loopback -----------------------------------------------------


class Endpoint:
    def __init__(self, host: str, port: int) -> None:
        self.host = host
        self.port = port


def parse_endpoint(text: str) -> Endpoint:
    """`PORT` or `HOST:PORT`; HOST must be a loopback address (127.0.0.1, ::1, localhost)."""
    host, _, port_text = text.strip().rpartition(":")
    host = host.strip("[]") or "127.0.0.1"
    if host == "localhost":
        host = "127.0.0.1"
    try:
        port = int(port_text)
    except ValueError:
        raise KenningError(f"--http takes a port or HOST:PORT, not {text!r}.") from None
    if not 0 <= port <= 65535:
        raise KenningError(f"--http: {port} is not a port number.")
    try:
        loopback = ipaddress.ip_address(host).is_loopback
    except ValueError:
        loopback = False
    if not loopback:
        raise KenningError(
            f"Kenning serves MCP over HTTP on this machine's loopback address only (127.0.0.1 or ::1), not {host}: "
            "its answers are your notes."
        )
    return Endpoint(host, port)


def print_http_config(store: Path, endpoint: str | None, write: Callable[[str], None] = print) -> None:
    """The URL and header an HTTP client needs: the running service's URL, or --http's."""
    from kenning.mcpserver.options import DEFAULT_HTTP_PORT
    from kenning.serve import client

    answer = client.ask(str(store), {"op": "ping"}) or {}
    url = answer.get("http")
    if not url:
        place = parse_endpoint(endpoint or str(DEFAULT_HTTP_PORT))
        host = f"[{place.host}]" if ":" in place.host else place.host
        url = f"http://{host}:{place.port}{HTTP_PATH}"
    config = {
        "mcpServers": {"kenning": {"type": "http", "url": url, "headers": {"Authorization": f"Bearer {http_token()}"}}}
    }
    write(json.dumps(config, indent=2))
    if not answer.get("http"):
        import sys

        print(
            f"kenning: nothing serves this URL yet: `kenning mcp --http {endpoint or DEFAULT_HTTP_PORT}` "
            "(or `kenning serve --http ...`) does.",
            file=sys.stderr,
        )


def token_path() -> Path:
    return kenning_home() / TOKEN_FILE


def http_token(*, create: bool = True) -> str | None:
    """The install's token (made on first use, 0600), or None when there is none yet."""
    path = token_path()
    try:
        token = path.read_text(encoding="ascii").strip()
        if token:
            return token
    except (OSError, UnicodeDecodeError):
        pass
    if not create:
        return None
    token = secrets.token_urlsafe(32)
    os.makedirs(path.parent, mode=0o700, exist_ok=True)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:  # another process made it meanwhile, or it is empty
        again = http_token(create=False)
        if again is None:
            raise KenningError(
                f"The MCP token file {path} is empty or unreadable: delete it to make a new token."
            ) from None
        return again
    with os.fdopen(fd, "w", encoding="ascii") as handle:
        handle.write(token + "\n")
    return token


class RequireToken:
    """ASGI middleware: every HTTP request must carry `Authorization: Bearer <token>`."""

    def __init__(self, app: Any, token: str) -> None:
        self.app = app
        self.expected = f"Bearer {token}".encode()

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            await self.app(scope, receive, send)
            return
        given = b""
        for name, value in scope.get("headers") or ():
            if name.lower() == b"authorization":
                given = value
        if scope["type"] != "http" or not hmac.compare_digest(given, self.expected):
            await _deny(scope, send)
            return
        await self.app(scope, receive, send)


async def _deny(scope: dict[str, Any], send: Any) -> None:
    if scope["type"] != "http":
        await send({"type": "websocket.close", "code": 1008})
        return
    body = json.dumps(
        {"error": "unauthorized", "detail": "send the token of `kenning mcp --print-config http` as a Bearer token"}
    ).encode()
    await send(
        {
            "type": "http.response.start",
            "status": 401,
            "headers": [
                (b"content-type", b"application/json"),
                (b"www-authenticate", b'Bearer realm="kenning"'),
                (b"content-length", str(len(body)).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


class HttpServer:
    """uvicorn on a thread of the service, on a socket bound before it starts."""

    def __init__(self, app: Any, sock: socket.socket, host: str) -> None:
        import uvicorn

        self.sock = sock
        self.port = sock.getsockname()[1]
        self.host = host
        self.server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
        self.thread = threading.Thread(target=self._run, name="kenning-mcp-http", daemon=True)

    def _run(self) -> None:
        import asyncio

        asyncio.run(self.server.serve(sockets=[self.sock]))

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}{HTTP_PATH}"

    def start(self, timeout: float = 30.0) -> HttpServer:
        self.thread.start()
        import time

        deadline = time.monotonic() + timeout
        while not self.server.started and self.thread.is_alive() and time.monotonic() < deadline:
            time.sleep(0.02)
        if not self.server.started:
            raise KenningError(f"The MCP HTTP endpoint on port {self.port} did not start.")
        return self

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(10)
        self.sock.close()


def start_http(warm: Warm, endpoint: Endpoint, record: Callable[..., dict[str, Any]]) -> HttpServer:
    """Serve the MCP tools over streamable HTTP from the service (loopback, token required)."""
    with _SDK_TURN:
        return _start_http(warm, endpoint, record)


def _start_http(warm: Warm, endpoint: Endpoint, record: Callable[..., dict[str, Any]]) -> HttpServer:
    from mcp.server.transport_security import TransportSecuritySettings

    from kenning.mcpserver.server import build_server

    family = socket.AF_INET6 if ":" in endpoint.host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((endpoint.host, endpoint.port))
    except OSError as exc:
        sock.close()
        raise KenningError(f"Cannot serve MCP over HTTP on {endpoint.host}:{endpoint.port}: {exc.strerror}") from exc
    sock.listen(64)
    port = sock.getsockname()[1]
    token = http_token()
    assert token is not None
    names = [f"{endpoint.host}:{port}", f"localhost:{port}", f"[{endpoint.host}]:{port}"]
    security = TransportSecuritySettings(allowed_hosts=names, allowed_origins=[f"http://{name}" for name in names])
    service = service_for(warm, record, DEFAULT_MAX_BYTES, False)
    app = build_server(service).streamable_http_app(
        streamable_http_path=HTTP_PATH, transport_security=security, host=endpoint.host
    )
    return HttpServer(RequireToken(app, token), sock, endpoint.host).start()
