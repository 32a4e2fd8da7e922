"""File names that are not valid UTF-8, stored as text and turned back into paths.

The store keeps such bytes as `\\xNN` (as `ls -b` shows them): unique per name, so two
names never fight over one row.  Opening the file needs the original bytes back, which
Python spells as surrogate escapes.
"""

from __future__ import annotations

import re

_ESCAPED_BYTE = re.compile(r"\\x([89a-fA-F][0-9a-fA-F])")


def storable_name(name: str) -> str:
    try:
        name.encode("utf-8")
        return name
    except UnicodeEncodeError:
        return name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def filesystem_name(stored: str) -> str:
    """Inverse of storable_name for the bytes it escaped (0x80–0xFF)."""
    if "\\x" not in stored:
        return stored
    return _ESCAPED_BYTE.sub(lambda m: chr(0xDC00 + int(m.group(1), 16)), stored)
