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
and pickle) costs about 10 ms of a command that should answer at once.  For the same
reason `logging` itself is imported, and the handlers made, only when a record is kept
(core.logger; this module imports no logging, `loghandlers` does).  The CLI also
leaves finding the folder (platformdirs, with tempfile: ~5% of a lexical search) and
making it to that moment, or to whoever asks where the file is (`log_file`).
"""

from __future__ import annotations

import os
from pathlib import Path

from kenning import TYPE_CHECKING
from kenning.core import logger
from kenning.core.owndirs import private_dir

if TYPE_CHECKING:
    from typing import Any

LOG_NAME = "kenning.log"
LOG_BYTES = 1_000_000
LOG_BACKUPS = 3
FORMAT = "%(asctime)s %(process)d %(threadName)s %(levelname)s %(name)s: %(message)s"

ROOT = "kenning"
_handlers: dict[str, Any] = {}  # the handlers loghandlers.configure gave Kenning's logger, by role


class LogPlace:
    """Where one configuration's log file goes: found (log_dir) and made user-only on
    first use, by the first record or by whoever asks (log_file)."""

    def __init__(self) -> None:
        self._path: Path | None = None
        self.failed = False  # the folder could not be made or the file opened: records go nowhere

    @property
    def path(self) -> Path:
        if self._path is None:
            folder = log_dir()
            try:
                private_dir(folder)  # every folder created here is 0700, whatever the umask
            except OSError:
                self.failed = True
            self._path = folder / LOG_NAME
        return self._path


_place: LogPlace | None = None  # start_logging's, once called


def log_dir() -> Path:
    override = os.environ.get("KENNING_HOME")
    if override:
        return Path(override).expanduser() / "logs"
    from platformdirs import user_log_path

    return user_log_path("kenning", appauthor=False)


def log_file() -> Path | None:
    """The file this process logs to (None when it could not be opened)."""
    if _place is None:
        return log_dir() / LOG_NAME
    path = _place.path
    return None if _place.failed else path


def configured() -> bool:
    return _place is not None


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
    The handlers are made when logging is imported (now, if it is: core.logger).
    """
    global _place
    place = _place = LogPlace()
    logger.drop_below(logger.DEBUG if verbose else logger.INFO)  # the level configure gives Kenning's logger

    def make_handlers() -> None:
        from kenning.workspace.loghandlers import configure

        configure(place, _handlers, verbose=verbose, console=console)

    logger.configure_when_loaded(make_handlers)
    if verbose:  # the README promises `kenning --verbose` names the log file
        logger.get_logger(ROOT).debug("log file: %s", log_file() or "none (the log folder cannot be created)")
