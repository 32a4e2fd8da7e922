"""File names that are not valid UTF-8, stored as text and turned back into paths.

The store keeps such bytes as `\\xNN` (as `ls -b` shows them).  The escape must never
collide with a real name, so a backslash that could be read as the start of an escape
(one followed by `x`, `u`, another backslash or an escaped byte) is doubled: the file
literally named `x\\xe9.md` is stored as `x\\\\xe9.md`, the file whose name holds the
byte 0xE9 as `x\\xe9.md`.  Every other name (nearly all, `back\\slash.md` included) is
stored as it is.  Opening the file needs the original bytes back, which Python spells
as surrogate escapes.
"""

from __future__ import annotations

import os
import re

from kenning import TYPE_CHECKING
from kenning.core.patterns import lazy_pattern

if TYPE_CHECKING:
    from typing import Any

_ESCAPE = lazy_pattern(r"\\(?:(\\)|x([89a-fA-F][0-9a-fA-F])|u(d[89a-fA-F][0-9a-fA-F]{2}))")


def _is_surrogate(ch: str) -> bool:
    return 0xD800 <= ord(ch) <= 0xDFFF


def _needs_escaping(name: str) -> bool:
    if "\\" in name:
        return True
    try:
        name.encode("utf-8")
        return False
    except UnicodeEncodeError:
        return True


def not_text(value: str) -> bool:
    """Whether value holds bytes that were not UTF-8 (os.fsdecode's surrogate escapes): a
    folder or store path, a source name given so cannot be kept as text in a store."""
    try:
        value.encode("utf-8")  # only a surrogate fails (at C speed: a long text is cheap)
        return False
    except UnicodeEncodeError:
        return True


NOT_TEXT_ADVICE = (
    "it is not valid UTF-8 (each \\xNN is a byte that is not); rename it (e.g. with `convmv`) and try again"
)


def escaped_char(ch: str) -> str:
    """One character as its escape: a byte os.fsdecode could not decode as `\\xNN` (as
    `ls -b` shows it), any other (a lone surrogate, possible in Windows names; a control
    character, for core.controls) as `\\uXXXX`."""
    code = ord(ch)
    if 0xDC80 <= code <= 0xDCFF:
        return f"\\x{code - 0xDC00:02x}"
    return f"\\u{code:04x}"


def storable_name(name: str) -> str:
    """A text form of a file-system name (or '/'-joined path), unique per name."""
    if not _needs_escaping(name):
        return name
    out = []
    for i, ch in enumerate(name):
        if ch == "\\":
            after = name[i + 1 : i + 2]
            ambiguous = after in ("\\", "x", "u") or (after != "" and _is_surrogate(after))
            out.append("\\\\" if ambiguous else "\\")
        elif _is_surrogate(ch):
            out.append(escaped_char(ch))
        else:
            out.append(ch)
    return "".join(out)


def shown(path: str) -> str:
    """How a path or name is shown as text (the app, JSON, the clipboard): as it is, or in
    its storable_name form (`\\xNN`, reversible) when it holds a byte that is not UTF-8."""
    return storable_name(path) if not_text(path) else path


def picked_path(path: str) -> str:
    """The folder a file dialog meant.  Qt drops each byte of a name that is not UTF-8
    (the folder b"caf\\xe9" reads "caf"), so a component that is not there is looked
    for among its folder's entries with such bytes left out, and taken when exactly one
    matches; otherwise path is returned as it is (and then said not to exist)."""
    if not os.path.isabs(path) or os.path.lexists(path):
        return path
    current = os.sep
    for part in path.split(os.sep):
        if not part:
            continue
        candidate = os.path.join(current, part)
        if not os.path.lexists(candidate):
            try:
                names = os.listdir(current)
            except OSError:
                return path
            matches = [n for n in names if not_text(n) and "".join(c for c in n if not _is_surrogate(c)) == part]
            if len(matches) != 1:
                return path
            candidate = os.path.join(current, matches[0])
        current = candidate
    return current


def text_only(value: Any) -> Any:
    """A JSON value (dicts, lists, strings...) with each string that holds a byte that is
    not UTF-8 (a path, an error quoting one) in its storable_name form: JSON is UTF-8."""
    if isinstance(value, str):
        return shown(value)
    if isinstance(value, dict):
        return {text_only(k): text_only(v) for k, v in value.items()}
    if isinstance(value, list):
        return [text_only(v) for v in value]
    if type(value) is tuple:
        return tuple(text_only(v) for v in value)
    return value


def filesystem_name(stored: str) -> str:
    """Inverse of storable_name."""
    if "\\" not in stored:
        return stored
    return _ESCAPE.sub(_unescape, stored)


def _unescape(match: re.Match[str]) -> str:
    if match.group(1):
        return "\\"
    if match.group(2):
        return chr(0xDC00 + int(match.group(2), 16))
    return chr(int(match.group(3), 16))


# A container file (a mailbox: "inbox.mbox", Thunderbird's "Inbox") is stored as one
# document per part: "inbox.mbox#3".  No file is indexed under a name of that form
# (is_part_path: the indexer passes over such a file and says why), so every stored
# path ending in "#<number>" is a part and names its container unambiguously.
PART_SEPARATOR = "#"
_CONTAINER_PART = lazy_pattern(r"(.+)#([0-9]+)")


def part_path(container: str, part: str) -> str:
    return f"{container}{PART_SEPARATOR}{part}" if part else container


def is_part_path(rel_path: str) -> bool:
    """Whether rel_path has the form of a container's part ("name#3")."""
    return _CONTAINER_PART.fullmatch(rel_path) is not None


def part_number(container: str, rel_path: str) -> int | None:
    """The part number when rel_path is exactly a part of container, else None."""
    rest = rel_path[len(container) + len(PART_SEPARATOR) :]
    if not rel_path.startswith(container + PART_SEPARATOR) or not rest.isdigit() or not rest.isascii():
        return None
    return int(rest)


def file_of(rel_path: str) -> str:
    """The file a stored path lives in: the container for a part, else the path itself."""
    match = _CONTAINER_PART.fullmatch(rel_path)
    return match.group(1) if match else rel_path


def abs_path_in(root: str, rel_path: str) -> str:
    """Where an indexed document's file is: a message of an mbox ("inbox.mbox#3") is its mailbox file."""
    return os.path.join(root, *filesystem_name(file_of(rel_path)).split("/"))
