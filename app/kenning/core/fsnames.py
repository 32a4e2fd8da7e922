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


# A container file (an .mbox) is stored as one document per part: "inbox.mbox#3".
PART_SEPARATOR = "#"
_CONTAINER_PART = re.compile(r"(.+\.mbox)#(\d+)", re.IGNORECASE)


def part_path(container: str, part: str) -> str:
    return f"{container}{PART_SEPARATOR}{part}" if part else container


def file_of(rel_path: str) -> str:
    """The file a stored path lives in: the container for a part, else the path itself."""
    match = _CONTAINER_PART.fullmatch(rel_path)
    return match.group(1) if match else rel_path
