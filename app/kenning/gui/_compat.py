"""Keep PySide6 6.12 from crashing the app on Python < 3.12.

PySide6-Essentials 6.12.0 releases one reference to None too many after every Qt
call returning void, and one to True/False after calls returning bool (signal
emit included).  From Python 3.12 these objects are immortal, so the extra release
is harmless there; on 3.11 None's count reaches zero after some ten thousand
calls and the interpreter aborts ("none_dealloc: deallocating None").  Measured
here: 1000 QPainter.setPen calls take 1000 references off None.

The fix is to give them what 3.12 gives them: a reference count so large it can
never run out.  Harmless when the bug is absent.
"""

from __future__ import annotations

import ctypes
import sys

_HEADROOM = 1 << 40  # 10^12 stolen references: decades of painting


def make_singletons_immortal() -> None:
    if sys.version_info >= (3, 12) or hasattr(sys, "pypy_version_info"):
        return
    for obj in (None, True, False):
        # ob_refcnt is the first field of every PyObject in release builds.
        count = ctypes.c_ssize_t.from_address(id(obj))
        if count.value < _HEADROOM:
            count.value += _HEADROOM
