"""The thin client: a command the service answers is sent to it, if one runs.

`kenning search`, `status`, `tags` and `links` first look for the service of their store (the
launcher calls `run` before importing anything else of Kenning).  When one answers,
its output is written out exactly as it came and the command is done; when none runs,
or it declines (another Kenning version, another store or model), `run` returns None
and the command runs in this process as it always did.  Nothing here starts a
service: scripts never get one they did not ask for.

What is sent: the arguments, the store's absolute path, the client's folder (a relative
--store is named from there), whether stdout and stderr are terminals, and the environment variables a command reads (KENNING_*, NO_COLOR,
COLUMNS, LINES, TERM).  Standard library only: no kenning.search, no numpy, no
fastembed, not even pathlib.
"""

from __future__ import annotations

import os
import sys

from kenning import TYPE_CHECKING

# Names for the type checker only: typing and collections.abc cost a client's start-up.
if TYPE_CHECKING:
    import socket
    from collections.abc import Mapping, Sequence
    from typing import Any

SERVED_COMMANDS = ("search", "status", "tags", "links")  # read the store only
BRIDGED_COMMAND = "mcp"  # relayed to the service's MCP session (serve.bridge)
IN_PROCESS = ("--no-service", "-h", "--help")  # after the command: these run here
TERMINAL_VARIABLES = ("NO_COLOR", "COLUMNS", "LINES", "TERM")
CONNECT_SECONDS = 1.0
ANSWER_MARGIN_SECONDS = 10.0  # beyond the service's own limit on a command


def split_argv(argv: Sequence[str]) -> tuple[str | None, str | None, int] | None:
    """(--store, --model, the command's index) for a command the service may answer, or None."""
    store = model = None
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg in ("--store", "--model"):
            if i + 1 >= len(argv):
                return None
            if arg == "--store":
                store = argv[i + 1]
            else:
                model = argv[i + 1]
            i += 2
        elif arg.startswith("--store="):
            store = arg[len("--store=") :]
            i += 1
        elif arg.startswith("--model="):
            model = arg[len("--model=") :]
            i += 1
        elif arg.startswith("-"):
            return None  # -v, --version, --help, a typo: the CLI itself says what they do
        else:
            break
    if i >= len(argv) or argv[i] not in (*SERVED_COMMANDS, BRIDGED_COMMAND):
        return None
    rest = argv[i + 1 :]
    if "--" in rest:
        rest = rest[: rest.index("--")]
    if any(arg in IN_PROCESS for arg in rest):
        return None
    return store, model, i


def request_for(argv: Sequence[str], store: str, environ: Mapping[str, str], tty: tuple[bool, bool]) -> dict[str, Any]:
    from kenning import __version__

    env = {k: v for k, v in environ.items() if k.startswith("KENNING_") or k in TERMINAL_VARIABLES}
    try:
        cwd: str | None = os.getcwd()  # where a relative --store (or KENNING_HOME) is resolved
    except OSError:
        cwd = None  # a folder removed under the shell: the service then declines a relative name
    request = {"op": "cli", "version": __version__, "store": store, "argv": list(argv), "env": env, "tty": list(tty)}
    return {**request, "cwd": cwd}


def run(argv: Sequence[str], environ: Mapping[str, str] | None = None) -> int | None:
    """The command's exit code when the service answered it; None: run it in this process."""
    if os.name != "posix":
        return None  # no Unix sockets with peer credentials: the service never runs here
    env = os.environ if environ is None else environ
    found = split_argv(argv)
    if found is None:
        return None  # --no-service, --help, a command run here: no socket to look for
    from kenning.serve import address as addresses

    given, model, at = found
    try:
        store = os.path.abspath(given if given else addresses.default_store(env))
    except Exception:
        return None  # whatever the default's lookup tripped on, the CLI will say it better
    if not os.path.exists(addresses.address_for(store, env).socket):
        return None  # no service: nothing more to import before the command runs here
    if argv[at] == BRIDGED_COMMAND:
        from kenning.serve import bridge

        return bridge.run(argv[at + 1 :], store, model, env)
    answer = ask(store, request_for(argv, store, env, (_isatty(sys.stdout), _isatty(sys.stderr))), env)
    if answer is None or not answer.get("ok"):
        return None
    return replay(answer.get("output") or [], answer.get("exit", 0))


def connect(store: str, environ: Mapping[str, str] | None = None) -> socket.socket | None:
    """A connection to store's service, checked to be this user's; None when none answers."""
    import socket

    from kenning.serve import address as addresses
    from kenning.serve.peer import peer_uid

    address = addresses.address_for(store, environ)
    if addresses.private_dir_problem(address.folder):
        return None  # missing, or not private: never trust a socket there
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.settimeout(CONNECT_SECONDS)
        sock.connect(address.socket)
        if peer_uid(sock) != os.getuid():
            sock.close()
            return None
    except OSError:
        sock.close()
        return None
    return sock


def ask(store: str, request: dict[str, Any], environ: Mapping[str, str] | None = None) -> dict[str, Any] | None:
    """One request, one answer; None when no service answers properly."""
    from kenning.serve import protocol

    sock = connect(store, environ)
    if sock is None:
        return None
    with sock:
        try:
            sock.sendall(protocol.encode(request))
            line = protocol.LineReader(sock).read_line(
                protocol.MAX_RESPONSE_BYTES, protocol.COMMAND_SECONDS + ANSWER_MARGIN_SECONDS
            )
        except (OSError, protocol.ProtocolError):
            return None
    if not line:
        return None
    try:
        return protocol.decode(line)
    except protocol.ProtocolError:
        return None


def replay(output: list[Any], code: Any) -> int:
    """Write what the command wrote, in order, to this process's stdout and stderr."""
    from kenning.serve import protocol

    streams = {protocol.STDOUT: sys.stdout, protocol.STDERR: sys.stderr}
    try:
        for item in output:
            stream = streams.get(item[0])
            if stream is not None and isinstance(item[1], str):
                _write(stream, item[1])
        sys.stdout.flush()
        sys.stderr.flush()
    except BrokenPipeError:
        _silence(sys.stdout)
        return 141  # as the in-process command: 128 + SIGPIPE
    except OSError as exc:
        _silence(sys.stdout)
        print(f"kenning: cannot write the output: {exc.strerror or exc}", file=sys.stderr)
        return 1
    return code if isinstance(code, int) else 1


def _write(stream: Any, text: str) -> None:
    try:
        stream.write(text)
    except UnicodeEncodeError:  # what cli.terminal.SafeStream does in-process
        encoding = getattr(stream, "encoding", None) or "ascii"
        stream.write(text.encode(encoding, "replace").decode(encoding))


def _isatty(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


def _silence(stream: Any) -> None:
    try:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, stream.fileno())
        os.close(null)
    except (OSError, AttributeError, ValueError):
        pass
