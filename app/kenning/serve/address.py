"""Where a store's service listens: a Unix domain socket in the user's runtime folder.

The folder is `$XDG_RUNTIME_DIR/kenning` (a per-user tmpfs on systemd systems), else
`$TMPDIR/kenning-UID` or `/tmp/kenning-UID`; it is created 0700 and used only while it
is a real folder (not a link) owned by this user that nobody else can enter.  Each store
has one socket and one lock file there, named by a digest of the store's real path.

Standard library only (the thin client imports this), and no pathlib: a client that
finds a service should cost little more than the interpreter.
"""

from __future__ import annotations

import os
import zlib

from kenning import TYPE_CHECKING

# Names for the type checker only: typing and collections.abc cost a client's start-up.
if TYPE_CHECKING:
    from collections.abc import Mapping

STORE_FILENAME = "kenning.db"  # storage.paths.STORE_FILENAME (a test holds them equal)
SOCKET_SUFFIX = ".sock"
LOCK_SUFFIX = ".lock"
PRIVATE_DIR_MODE = 0o700
# sun_path holds 108 bytes on Linux and 104 on macOS (with the terminating NUL).
MAX_SOCKET_PATH = 103


class AddressError(Exception):
    """The runtime folder cannot be used safely; the text says why, for the user."""


class Address:
    """The socket, lock file and runtime folder of one store's service."""

    def __init__(self, store: str, folder: str) -> None:
        self.store_path = store  # the store's real path
        self.folder = folder
        key = store_key(store)
        self.socket = os.path.join(folder, key + SOCKET_SUFFIX)
        self.lock = os.path.join(folder, key + LOCK_SUFFIX)

    def __repr__(self) -> str:
        return f"Address({self.store_path!r}, socket={self.socket!r})"


def store_key(store: str) -> str:
    """A stable name for a store: 64 bits of digest of its real path (zlib's checksums:
    hashlib would load OpenSSL).  The service checks the store of every request too."""
    data = os.path.realpath(store).encode("utf-8", "surrogateescape")
    return f"{zlib.crc32(data):08x}{zlib.adler32(data):08x}"


def runtime_dir(environ: Mapping[str, str] | None = None) -> str:
    env = os.environ if environ is None else environ
    base = env.get("XDG_RUNTIME_DIR", "")
    if base and os.path.isabs(base):
        return os.path.join(base, "kenning")
    tmp = env.get("TMPDIR", "")
    tmp = tmp if tmp and os.path.isabs(tmp) else "/tmp"
    return os.path.join(tmp, f"kenning-{os.getuid()}")


def default_store(environ: Mapping[str, str] | None = None) -> str:
    """The store a command without --store uses: storage.paths.default_store_path()
    without pathlib (tests/serve/test_address.py holds the two equal)."""
    env = os.environ if environ is None else environ
    home = env.get("KENNING_HOME", "")
    if home:
        return os.path.join(os.path.expanduser(home), STORE_FILENAME)
    from platformdirs import user_data_dir

    return os.path.join(user_data_dir("kenning", appauthor=False), STORE_FILENAME)


def address_for(store: str, environ: Mapping[str, str] | None = None) -> Address:
    return Address(os.path.realpath(store), runtime_dir(environ))


def private_dir_problem(folder: str) -> str | None:
    """Why folder must not hold a socket (None: it is this user's alone)."""
    try:
        info = os.lstat(folder)
    except FileNotFoundError:
        return f"{folder} does not exist"
    except OSError as exc:
        return f"{folder} cannot be read ({exc.strerror})"
    import stat

    if not stat.S_ISDIR(info.st_mode):
        return f"{folder} is not a folder"
    if info.st_uid != os.getuid():
        return f"{folder} belongs to another user"
    if info.st_mode & 0o077:
        return f"{folder} can be entered by other users (mode {stat.S_IMODE(info.st_mode):o})"
    return None


def make_private_dir(folder: str) -> None:
    """Create the runtime folder 0700 (its parent must exist) and check it."""
    try:
        os.mkdir(folder, PRIVATE_DIR_MODE)
        os.chmod(folder, PRIVATE_DIR_MODE)  # mkdir's mode passes through the umask
    except FileExistsError:
        pass
    except OSError as exc:
        raise AddressError(f"Cannot create the service folder {folder}: {exc.strerror}") from exc
    problem = private_dir_problem(folder)
    if problem:
        raise AddressError(f"The service folder is not private: {problem}. Remove it, or set XDG_RUNTIME_DIR.")


def check_socket_path(address: Address) -> None:
    if len(os.fsencode(address.socket)) > MAX_SOCKET_PATH:
        raise AddressError(
            f"The service socket path {address.socket} is too long for this system "
            f"({MAX_SOCKET_PATH} bytes at most): set XDG_RUNTIME_DIR to a shorter folder."
        )
