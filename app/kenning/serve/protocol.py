"""The service's protocol: one JSON object per line, UTF-8, over the Unix socket.

A client sends one request line and reads one response line:

    {"kenning": 1, "op": "ping"}
    -> {"kenning": 1, "ok": true, "pid": 1234, "store": "/home/me/.local/share/kenning/kenning.db",
        "version": "0.1.0", "model": "default", "model_state": "ready", "idle_timeout": 1800, ...}

    {"kenning": 1, "op": "cli", "version": "0.1.0", "store": "/abs/store.db",
     "argv": ["search", "--mode", "lexical", "socket"], "env": {"NO_COLOR": "1"},
     "tty": [true, false], "cwd": "/home/me/project"}
    -> {"kenning": 1, "ok": true, "exit": 0, "output": [[1, "text for stdout"], [2, "text for stderr"]]}

    {"kenning": 1, "op": "mcp", "max_bytes": 24000, "allow_writes": false}
    -> {"kenning": 1, "ok": true}, then the connection carries MCP's own JSON-RPC
       lines (the stdio transport's framing) both ways until either side closes it.

    {"kenning": 1, "op": "stop"} -> {"kenning": 1, "ok": true}; the service then exits.

A refusal is {"kenning": 1, "ok": false, "error": "why, for the user"}; with
"fallback": true the client runs the command in its own process instead (another
Kenning version, another store or model, a command the service does not answer).
"output" lists what the command wrote, in order, as (1 = stdout | 2 = stderr, text),
already made safe for a terminal by the service (cli.terminal).

Bounds: a request line is at most MAX_REQUEST_BYTES and must arrive within
REQUEST_READ_SECONDS of connecting; a command runs at most COMMAND_SECONDS; an MCP
message is at most MAX_MCP_MESSAGE_BYTES.  Standard library only.
"""

from __future__ import annotations

import json
import socket
import time

from kenning import TYPE_CHECKING

# Names for the type checker only: typing and collections.abc cost a client's start-up.
if TYPE_CHECKING:
    from typing import Any

PROTOCOL = 1
MAX_REQUEST_BYTES = 256 * 1024
MAX_RESPONSE_BYTES = 256 * 1024 * 1024  # what a client accepts (a search with --explain -n 1000 is a few MB)
MAX_MCP_MESSAGE_BYTES = 4 * 1024 * 1024
REQUEST_READ_SECONDS = 5.0
COMMAND_SECONDS = 120.0
STDOUT, STDERR = 1, 2


class ProtocolError(Exception):
    """A malformed, oversized or late line; the text says which."""


# A path that is not UTF-8 (a folder, the client's cwd, a hit's file) crosses the socket
# as it is: its surrogate escapes are passed through, both ends being Kenning.
_WIRE_ERRORS = "surrogatepass"


def encode(message: dict[str, Any]) -> bytes:
    text = json.dumps({"kenning": PROTOCOL, **message}, ensure_ascii=False, separators=(",", ":"))
    return text.encode("utf-8", _WIRE_ERRORS) + b"\n"


def decode(line: bytes) -> dict[str, Any]:
    try:
        message = json.loads(line.decode("utf-8", _WIRE_ERRORS))
    except (ValueError, UnicodeDecodeError) as exc:
        raise ProtocolError(f"not a JSON line ({exc})") from None
    if not isinstance(message, dict):
        raise ProtocolError("a message must be a JSON object")
    return message


class LineReader:
    """Lines from a socket, each bounded in size and in the time it may take to arrive."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self._buffer = b""

    def read_line(self, limit: int, timeout: float | None) -> bytes:
        """One line without its newline; b"" when the peer closed first."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            end = self._buffer.find(b"\n")
            if end >= 0:
                line, self._buffer = self._buffer[:end], self._buffer[end + 1 :]
                if len(line) > limit:
                    raise ProtocolError(f"a line longer than {limit} bytes")
                return line
            if len(self._buffer) > limit:
                raise ProtocolError(f"a line longer than {limit} bytes")
            if deadline is not None:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise ProtocolError(f"no complete line within {timeout:g} s")
                self.sock.settimeout(left)
            else:
                self.sock.settimeout(None)
            try:
                chunk = self.sock.recv(65536)
            except TimeoutError:
                raise ProtocolError(f"no complete line within {timeout:g} s") from None
            if not chunk:
                if self._buffer:
                    raise ProtocolError("the connection closed in the middle of a line")
                return b""
            self._buffer += chunk

    def take_buffered(self) -> bytes:
        """What arrived after the last line read (a relay passes it on first)."""
        data, self._buffer = self._buffer, b""
        return data
