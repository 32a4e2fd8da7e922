"""`kenning mcp` as a bridge: the assistant's stdio relayed to the service's MCP session.

When a service runs for the store, `kenning mcp` sends one "mcp" request and then
copies bytes: stdin to the socket, the socket to stdout, until either side closes.
The MCP session itself (the SDK, the tools, the model, the watcher that keeps the
index fresh) lives in the service (mcpserver.transport), so the bridge imports no SDK
and answers are hybrid from the first request.  Standard library only.
"""

from __future__ import annotations

import os
import socket
import sys
import threading

from kenning import TYPE_CHECKING
from kenning.serve import protocol

# Names for the type checker only: typing and collections.abc cost a client's start-up.
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from typing import Any

CHUNK = 65536


def mcp_request(
    argv: Sequence[str], store: str, model: str | None, environ: Mapping[str, str]
) -> dict[str, Any] | None:
    """The "mcp" request for `kenning mcp [--max-bytes N] [--allow-writes]`; None for any other options."""
    from kenning import __version__
    from kenning.serve.client import TERMINAL_VARIABLES

    max_bytes: int | None = None
    allow_writes = False
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg == "--allow-writes":
            allow_writes = True
        elif arg == "--max-bytes" and i + 1 < len(argv):
            i += 1
            arg = "--max-bytes=" + argv[i]
        if arg.startswith("--max-bytes="):
            try:
                max_bytes = int(arg.split("=", 1)[1])
            except ValueError:
                return None  # the CLI words the error
        elif arg != "--allow-writes":
            return None  # --print-config, --http, --help...: the CLI's
        i += 1
    env = {k: v for k, v in environ.items() if k.startswith("KENNING_") or k in TERMINAL_VARIABLES}
    request: dict[str, Any] = {"op": "mcp", "version": __version__, "store": store, "env": env, "model": model}
    request["allow_writes"] = allow_writes
    if max_bytes is not None:
        request["max_bytes"] = max_bytes
    return request


def relay(sock: socket.socket, first: bytes = b"", stdin_fd: int = 0, stdout_fd: int = 1) -> int:
    """Copy stdin to sock and sock to stdout until the service ends the session."""

    def pump_in() -> None:
        try:
            while True:
                data = os.read(stdin_fd, CHUNK)
                if not data:
                    break
                sock.sendall(data)
        except OSError:
            pass
        finally:
            try:
                sock.shutdown(socket.SHUT_WR)  # the assistant is done: the session ends
            except OSError:
                pass

    threading.Thread(target=pump_in, name="kenning-bridge-in", daemon=True).start()
    try:
        if first:
            _write_all(stdout_fd, first)
        sock.settimeout(None)
        while True:
            data = sock.recv(CHUNK)
            if not data:
                return 0
            _write_all(stdout_fd, data)
    except OSError:
        return 0  # the assistant or the service went away: nothing more to say to either
    finally:
        sock.close()


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def run(argv: Sequence[str], store: str, model: str | None, environ: Mapping[str, str]) -> int | None:
    """Bridge to the service when it takes the session; None: run `kenning mcp` in-process."""
    from kenning.serve.client import connect

    if sys.stdin is None or sys.stdin.isatty():
        return None  # started by hand: the in-process server says what it is waiting for
    request = mcp_request(argv, store, model, environ)
    if request is None:
        return None
    sock = connect(store, environ)
    if sock is None:
        return None
    try:
        sock.sendall(protocol.encode(request))
        reader = protocol.LineReader(sock)
        line = reader.read_line(protocol.MAX_REQUEST_BYTES, protocol.REQUEST_READ_SECONDS + 5)
        answer = protocol.decode(line) if line else None
    except (OSError, protocol.ProtocolError):
        sock.close()
        return None
    if not answer or not answer.get("ok"):
        sock.close()
        return None
    return relay(sock, reader.take_buffered())
