"""Kenning's loggers: the standard library's, imported when a record is to be kept.

Every module writes `log = get_logger(__name__)` where it would write
`logging.getLogger(__name__)`; the object answers the same calls (debug, info, warning,
error, exception) by handing them to that logger.  Until then it needs
nothing: a quick command (a lexical search, `kenning status`) writes no record, and
importing `logging` alone took ~6 ms CPU of its ~90 (issue #27).

A record is dropped here, without importing `logging`, only while `logging` is not
imported yet and its level is below the one `workspace.logs.start_logging` chose for
Kenning's logger (`drop_below`): that logger would drop it too.  Once `logging` is loaded
— for a record kept, by a library, by a test — every call goes to it, so its own levels
and handlers decide, exactly as if it had been imported first.  `configure_when_loaded`
lets `start_logging` make the handlers at that moment instead of at start-up.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable

from kenning import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any

DEBUG, INFO, WARNING, ERROR = 10, 20, 30, 40  # logging's own values

_drop_below = 0  # nothing is dropped until start_logging says what Kenning's logger keeps
_configure: Callable[[], None] | None = None  # run once, when logging is first needed
_LOCK = threading.RLock()  # two threads' first records configure once (a record while configuring may ask again)


def drop_below(level: int) -> None:
    """Records under level are dropped here while logging is not imported (start_logging)."""
    global _drop_below
    _drop_below = level


def configure_when_loaded(configure: Callable[[], None]) -> None:
    """Run configure now if logging is imported, else when a record first needs it; it
    replaces one given before and not run yet (start_logging called again)."""
    global _configure
    loaded = "logging" in sys.modules
    with _LOCK:
        _configure = None if loaded else configure
    if loaded:
        configure()


def load() -> Any:
    """The logging module, with what configure_when_loaded was given run first."""
    global _configure
    import logging

    with _LOCK:
        configure, _configure = _configure, None
        if configure is not None:
            configure()
    return logging


class Logger:
    """logging.getLogger(name), fetched on the first record that may be kept."""

    __slots__ = ("name", "_logger")

    def __init__(self, name: str) -> None:
        self.name = name
        self._logger: Any = None

    def debug(self, msg: object, *args: object, **kwargs: Any) -> None:
        self._log(DEBUG, msg, args, kwargs)

    def info(self, msg: object, *args: object, **kwargs: Any) -> None:
        self._log(INFO, msg, args, kwargs)

    def warning(self, msg: object, *args: object, **kwargs: Any) -> None:
        self._log(WARNING, msg, args, kwargs)

    def error(self, msg: object, *args: object, **kwargs: Any) -> None:
        self._log(ERROR, msg, args, kwargs)

    def exception(self, msg: object, *args: object, exc_info: Any = True, **kwargs: Any) -> None:
        self._log(ERROR, msg, args, {**kwargs, "exc_info": exc_info})

    def real(self) -> Any:
        """The standard logger itself (logging imported and configured now)."""
        if _configure is not None or self._logger is None:
            self._logger = load().getLogger(self.name)
        return self._logger

    def _dropped(self, level: int) -> bool:
        return level < _drop_below and "logging" not in sys.modules

    def _log(self, level: int, msg: object, args: tuple[object, ...], kwargs: dict[str, Any]) -> None:
        if self._dropped(level):
            return
        # stacklevel: the record names the caller of debug/info/…, not these two frames
        kwargs["stacklevel"] = kwargs.get("stacklevel", 1) + 2
        self.real().log(level, msg, *args, **kwargs)


def get_logger(name: str) -> Logger:
    return Logger(name)
