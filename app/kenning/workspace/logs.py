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

The file is opened when the first record arrives: most commands (a search, `kenning
status`) log nothing, and the rotating handler's module (logging.handlers, with socket
and pickle) costs about 10 ms of a command that should answer at once.  The CLI also
leaves finding the folder (platformdirs, with tempfile: ~5% of a lexical search) and
making it to that moment, or to whoever asks where the file is (`log_file`).
"""

from __future__ import annotations

import logging
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kenning.core.controls import visible
from kenning.core.owndirs import private_dir

if TYPE_CHECKING:
    from kenning.workspace.logfile import PrivateRotatingFileHandler

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
    if isinstance(handler, LogFileHandler):
        path = handler.path
        return None if handler.failed else path
    return log_dir() / LOG_NAME if not _handlers else None


class SafeFormatter(logging.Formatter):
    """Records name files and sources, which may hold any character: a message is kept on
    its one line (a newline or an escape sequence in a file name is shown as `\\uXXXX`),
    a traceback keeps its own newlines, its other control characters shown the same way."""

    def formatMessage(self, record: logging.LogRecord) -> str:
        return visible(super().formatMessage(record), one_line=True)

    def formatException(self, ei: Any) -> str:  # logging types it as the exc_info tuple
        return visible(super().formatException(ei))

    def formatStack(self, stack_info: str) -> str:
        return visible(super().formatStack(stack_info))


def configured() -> bool:
    return bool(_handlers)


def setup_logging(*, verbose: bool = False, console: bool = False) -> Path | None:
    """start_logging, then the log file's path (its folder found and made now).

    Returns None when the folder cannot be created (read-only home)."""
    start_logging(verbose=verbose, console=console)
    return log_file()


def start_logging(*, verbose: bool = False, console: bool = False) -> None:
    """Send Kenning's log records to the rotating file (and stderr when asked).

    verbose: debug records too, and every record echoed to stderr (`kenning --verbose`).
    Safe to call again (the GUI's indexing process, tests): handlers are replaced.
    The file's folder is found and made on the first record (or `log_file`); when it
    cannot be (read-only home), logging goes nowhere rather than stopping Kenning.
    """
    logger = logging.getLogger(_ROOT)
    for handler in _handlers.values():
        logger.removeHandler(handler)
        handler.close()
    _handlers.clear()
    logger.setLevel(logging.DEBUG if verbose else logging.INFO)
    logger.propagate = False  # the application's records are ours; no duplicate on the root logger
    file_handler = LogFileHandler()
    file_handler.setFormatter(SafeFormatter(FORMAT))
    _handlers["file"] = file_handler
    logger.addHandler(file_handler)
    if console or verbose:
        stream = logging.StreamHandler(sys.stderr)
        stream.setLevel(logging.DEBUG if verbose else logging.WARNING)
        stream.setFormatter(SafeFormatter("kenning: %(levelname)s %(name)s: %(message)s"))
        _handlers["console"] = stream
        logger.addHandler(stream)
    if verbose:  # the README promises `kenning --verbose` names the log file
        logger.debug("log file: %s", log_file() or "none (the log folder cannot be created)")


class LogFileHandler(logging.Handler):
    """Writes to the rotating log file, opening it on the first record it is given."""

    def __init__(self) -> None:
        super().__init__()
        self._path: Path | None = None
        self._file: PrivateRotatingFileHandler | None = None
        self.failed = False  # the folder could not be made or the file opened: records go nowhere

    @property
    def path(self) -> Path:
        """The file, its folder found (log_dir) and made user-only on first use."""
        if self._path is None:
            folder = log_dir()
            try:
                private_dir(folder)  # every folder created here is 0700, whatever the umask
            except OSError:
                self.failed = True
            self._path = folder / LOG_NAME
        return self._path

    def emit(self, record: logging.LogRecord) -> None:
        if self._file is None and not self.failed:
            self._file = self._open()
        if self._file is not None:
            self._file.emit(record)

    def _open(self) -> PrivateRotatingFileHandler | None:
        from kenning.workspace.logfile import PrivateRotatingFileHandler

        path = self.path
        if self.failed:
            return None
        try:
            # backslashreplace: a message may quote a path holding an undecodable byte
            # (a surrogate escape); it is written escaped, never a logging traceback
            handler = PrivateRotatingFileHandler(
                path, maxBytes=LOG_BYTES, backupCount=LOG_BACKUPS, encoding="utf-8", errors="backslashreplace"
            )
        except OSError:
            self.failed = True  # a log that cannot be written must not stop Kenning
            return None
        handler.setFormatter(self.formatter)
        return handler

    def flush(self) -> None:
        if self._file is not None:
            self._file.flush()

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None
        super().close()
