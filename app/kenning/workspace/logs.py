"""The log file: what went wrong, with tracebacks, where a user (or a bug report) finds it.

The file is ``kenning.log`` in the platform's log folder (platformdirs
``user_log_dir``: ``~/.local/state/kenning/log`` on Linux, ``~/Library/Logs/kenning``
on macOS, ``%LOCALAPPDATA%\\kenning\\Logs`` on Windows), or ``$KENNING_HOME/logs``
when KENNING_HOME is set, so a test or a portable install keeps everything in one
folder.  It rotates at LOG_BYTES, keeping LOG_BACKUPS old files.  `kenning status`
and the app's About box show its path.

Every process logs to it: the CLI, the app and the app's indexing process.  Rotation
is decided by each process on its own, so when two rotate at the same moment a few
lines may end up in the older file: the log is for diagnosis, not an audit trail.
"""

from __future__ import annotations

import io
import logging
import logging.handlers
import os
import sys
from pathlib import Path

from kenning.storage.paths import private_dir, private_file_fd

LOG_NAME = "kenning.log"
LOG_BYTES = 1_000_000
LOG_BACKUPS = 3
FORMAT = "%(asctime)s %(process)d %(threadName)s %(levelname)s %(name)s: %(message)s"

_ROOT = "kenning"
_handlers: dict[str, logging.Handler] = {}


def log_dir() -> Path:
    override = os.environ.get("KENNING_HOME")
    if override:
        return Path(override).expanduser() / "logs"
    from platformdirs import user_log_path

    return user_log_path("kenning", appauthor=False)


def log_file() -> Path | None:
    """The file this process logs to (None when it could not be opened)."""
    handler = _handlers.get("file")
    if isinstance(handler, logging.FileHandler):
        return Path(handler.baseFilename)
    return log_dir() / LOG_NAME if not _handlers else None


def configured() -> bool:
    return bool(_handlers)


def setup_logging(*, verbose: bool = False, console: bool = False) -> Path | None:
    """Send Kenning's log records to the rotating file (and stderr when asked).

    verbose: debug records too, and every record echoed to stderr (`kenning --verbose`).
    Safe to call again (the GUI's indexing process, tests): handlers are replaced.
    Returns the log file's path, or None when no file could be opened (read-only home):
    logging then goes nowhere rather than stopping Kenning.
    """
    logger = logging.getLogger(_ROOT)
    for handler in _handlers.values():
        logger.removeHandler(handler)
        handler.close()
    _handlers.clear()
    logger.setLevel(logging.DEBUG if verbose else logging.INFO)
    logger.propagate = False  # the application's records are ours; no duplicate on the root logger
    path = _open_file_handler()
    if console or verbose:
        stream = logging.StreamHandler(sys.stderr)
        stream.setLevel(logging.DEBUG if verbose else logging.WARNING)
        stream.setFormatter(logging.Formatter("kenning: %(levelname)s %(name)s: %(message)s"))
        _handlers["console"] = stream
        logger.addHandler(stream)
    if not _handlers:
        _handlers["null"] = logging.NullHandler()
        logger.addHandler(_handlers["null"])
    if verbose:  # the README promises `kenning --verbose` names the log file
        logger.debug("log file: %s", path or "none (the log folder cannot be created)")
    return path


class PrivateRotatingFileHandler(logging.handlers.RotatingFileHandler):
    """A rotating log whose every file is user-only (0600): the log names private files
    and queries, and the stock handler creates each new file after a rotation with the
    umask's mode (0664 under umask 002)."""

    def _open(self) -> io.TextIOWrapper:
        fd = private_file_fd(self.baseFilename, os.O_WRONLY | os.O_APPEND)
        stream = os.fdopen(fd, "a", encoding=self.encoding, errors=self.errors)
        assert isinstance(stream, io.TextIOWrapper)  # what open() gives FileHandler too
        return stream


def _open_file_handler() -> Path | None:
    folder = log_dir()
    try:
        private_dir(folder)  # every folder created here is 0700, whatever the umask
        path = folder / LOG_NAME
        handler = PrivateRotatingFileHandler(path, maxBytes=LOG_BYTES, backupCount=LOG_BACKUPS, encoding="utf-8")
    except OSError:
        return None
    handler.setFormatter(logging.Formatter(FORMAT))
    _handlers["file"] = handler
    logging.getLogger(_ROOT).addHandler(handler)
    return path
