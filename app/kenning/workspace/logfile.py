"""The rotating log file itself: imported when a process writes its first log record
(workspace.logs says why it waits)."""

from __future__ import annotations

import io
import logging.handlers
import os

from kenning.core.owndirs import private_file_fd


class PrivateRotatingFileHandler(logging.handlers.RotatingFileHandler):
    """A rotating log whose every file is user-only (0600): the log names private files
    and queries, and the stock handler creates each new file after a rotation with the
    umask's mode (0664 under umask 002)."""

    def _open(self) -> io.TextIOWrapper:
        fd = private_file_fd(self.baseFilename, os.O_WRONLY | os.O_APPEND)
        stream = os.fdopen(fd, "a", encoding=self.encoding, errors=self.errors)
        assert isinstance(stream, io.TextIOWrapper)  # what open() gives FileHandler too
        return stream
