"""The handlers of Kenning's logger, made when logging is first needed (workspace.logs)."""

from __future__ import annotations

import logging
import sys
from typing import TYPE_CHECKING, Any

from kenning.core.controls import visible
from kenning.workspace import logs

if TYPE_CHECKING:
    from kenning.workspace.logfile import PrivateRotatingFileHandler


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


def configure(place: logs.LogPlace, handlers: dict[str, logging.Handler], *, verbose: bool, console: bool) -> None:
    """Kenning's logger with the file's handler at place (and stderr's): handlers
    (workspace.logs' own) holds them, and the ones it held before are closed."""
    logger = logging.getLogger(logs.ROOT)
    for handler in handlers.values():
        logger.removeHandler(handler)
        handler.close()
    handlers.clear()
    logger.setLevel(logging.DEBUG if verbose else logging.INFO)
    logger.propagate = False  # the application's records are ours; no duplicate on the root logger
    file_handler = LogFileHandler(place)
    file_handler.setFormatter(SafeFormatter(logs.FORMAT))
    handlers["file"] = file_handler
    logger.addHandler(file_handler)
    if console or verbose:
        stream = logging.StreamHandler(sys.stderr)
        stream.setLevel(logging.DEBUG if verbose else logging.WARNING)
        stream.setFormatter(SafeFormatter("kenning: %(levelname)s %(name)s: %(message)s"))
        handlers["console"] = stream
        logger.addHandler(stream)


class LogFileHandler(logging.Handler):
    """Writes to the rotating log file, opening it on the first record it is given."""

    def __init__(self, place: logs.LogPlace) -> None:
        super().__init__()
        self.place = place
        self._file: PrivateRotatingFileHandler | None = None

    def emit(self, record: logging.LogRecord) -> None:
        if self._file is None and not self.place.failed:
            self._file = self._open()
        if self._file is not None:
            self._file.emit(record)

    def _open(self) -> PrivateRotatingFileHandler | None:
        from kenning.workspace.logfile import PrivateRotatingFileHandler

        path = self.place.path
        if self.place.failed:
            return None
        try:
            # backslashreplace: a message may quote a path holding an undecodable byte
            # (a surrogate escape); it is written escaped, never a logging traceback
            handler = PrivateRotatingFileHandler(
                path, maxBytes=logs.LOG_BYTES, backupCount=logs.LOG_BACKUPS, encoding="utf-8", errors="backslashreplace"
            )
        except OSError:
            self.place.failed = True  # a log that cannot be written must not stop Kenning
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
