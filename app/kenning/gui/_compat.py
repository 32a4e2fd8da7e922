"""Keep PySide6 6.12 from crashing the app on Python < 3.12.

PySide6-Essentials 6.12.0 releases one reference to None too many after every Qt
call returning void, and one to True/False after calls returning bool (signal
emit included).  From Python 3.12 these objects are immortal, so the extra release
is harmless there; on 3.11 None's count reaches zero after some ten thousand
calls and the interpreter aborts ("none_dealloc: deallocating None").

Measured on Python 3.11.7 (1000 QPainter.setPen calls, change of None's count):
6.11.0 +88 (no leak); 6.12.0 -948, and a signal emit loop aborted on True/False.
So the fix applies from 6.12 on, on Pythons before 3.12 only.  No 6.12 release with
a fix was known when this was written: when one is, set FIXED_IN to its version.

The fix is to give them what 3.12 gives them: a reference count so large it can
never run out.
"""

from __future__ import annotations

import ctypes
import sys

_HEADROOM = 1 << 40  # 10^12 stolen references: decades of painting
FIRST_AFFECTED = (6, 12, 0)
FIXED_IN: tuple[int, ...] | None = None


def _version(text: str) -> tuple[int, ...]:
    parts = []
    for piece in text.split(".")[:3]:
        digits = "".join(ch for ch in piece if ch.isdigit())
        parts.append(int(digits) if digits else 0)
    return tuple(parts)


def needs_immortal_singletons(pyside_version: str, python: tuple[int, int] = sys.version_info[:2]) -> bool:
    if python >= (3, 12) or hasattr(sys, "pypy_version_info"):
        return False
    version = _version(pyside_version)
    return version >= FIRST_AFFECTED and (FIXED_IN is None or version < FIXED_IN)


def make_singletons_immortal() -> bool:
    """Apply the fix when this PySide6 needs it; say whether it was applied."""
    import PySide6

    if not needs_immortal_singletons(PySide6.__version__):
        return False
    for obj in (None, True, False):
        # ob_refcnt is the first field of every PyObject in release builds.
        count = ctypes.c_ssize_t.from_address(id(obj))
        if count.value < _HEADROOM:
            count.value += _HEADROOM
    return True
