"""Reading one file as text, or saying precisely why it is not indexed.

Every failure mode the walker meets in the wild (huge files, binaries, latin-1 notes,
permission errors, files deleted mid-walk) becomes a `skip_reason`, never an exception.
"""

from __future__ import annotations

import codecs
import hashlib
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path

from kenning.core.confine import open_no_follow, open_regular, read_at_most
from kenning.ingest.extract.encodings import detect_legacy, utf16_without_bom

SNIFF_BYTES = 8192
# Share of control characters (in the sniffed prefix) above which text is "binary".
MAX_CONTROL_SHARE = 0.10

# Longest first: the UTF-32 LE BOM begins with the UTF-16 LE BOM.
_BOMS: tuple[tuple[bytes, str], ...] = (
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)
# Controls that plain text legitimately contains: tab, LF, VT, FF, CR, ESC (ANSI logs).
_ALLOWED_CONTROLS = frozenset("\t\n\x0b\x0c\r\x1b")
_CONTROLS = frozenset(chr(c) for c in [*range(32), 127]) - _ALLOWED_CONTROLS


@dataclass(frozen=True)
class ReadResult:
    text: str | None  # None exactly when skip_reason is set
    raw_sha256: str  # of the raw bytes; "" when they were never read
    size: int
    skip_reason: str | None = None  # too-large | binary | undecodable | unreadable | vanished
    detail: str = ""

    @property
    def ok(self) -> bool:
        return self.skip_reason is None


def read_text(path: Path, size_cap: int) -> ReadResult:
    """Read `path` as text (LF line ends) unless it is too large, binary or unreadable."""
    try:
        raw_or_skip = _read_capped(path, size_cap)
    except FileNotFoundError as exc:
        return _skip("vanished", 0, str(exc))
    except OSError as exc:  # PermissionError, EIO, ELOOP, ...
        return _skip("unreadable", 0, f"{type(exc).__name__}: {exc}")
    if isinstance(raw_or_skip, ReadResult):
        return raw_or_skip
    raw = raw_or_skip
    digest = hashlib.sha256(raw).hexdigest()
    text, reason, detail = _decode(raw)
    if reason is not None or text is None:
        return ReadResult(None, digest, len(raw), reason, detail)
    return ReadResult(_normalise_newlines(text), digest, len(raw))


def read_raw(path: str | Path, size_cap: int) -> ReadResult:
    """Hash and size of a file an extractor will read (text stays None), or why it is skipped."""
    try:
        raw_or_skip = _read_capped(Path(path), size_cap)
    except FileNotFoundError as exc:
        return _skip("vanished", 0, str(exc))
    except OSError as exc:
        return _skip("unreadable", 0, f"{type(exc).__name__}: {exc}")
    if isinstance(raw_or_skip, ReadResult):
        return raw_or_skip
    return ReadResult(None, hashlib.sha256(raw_or_skip).hexdigest(), len(raw_or_skip))


# A mailbox's first line: "From alice@example.com Mon Jan  1 09:00:00 2024" (Thunderbird:
# "From - Mon Jan 01 09:00:00 2024").  The sender, then an asctime date: a note that
# happens to begin "From the desk of..." is not taken for one.
_MBOX_FIRST_LINE = re.compile(rb"From \S+ +[A-Z][a-z]{2} +[A-Z][a-z]{2} +\d{1,2} +\d{1,2}:\d\d(?::\d\d)?\b[^\n]*")
SNIFF_LINE_BYTES = 1024


def starts_like_mbox(path: str | Path) -> bool:
    """Whether a file (one without an extension: Thunderbird's `Inbox`) is a mailbox, by
    its first line only: at most SNIFF_LINE_BYTES read, regular files only, no link
    followed, nothing raised."""
    try:
        with open_regular(path) as handle:
            head = read_at_most(handle, SNIFF_LINE_BYTES)
    except OSError:  # not a regular file, a link, unreadable
        return False
    line = head.split(b"\n", 1)[0].rstrip(b"\r")
    return (b"\n" in head or len(head) < SNIFF_LINE_BYTES) and _MBOX_FIRST_LINE.fullmatch(line) is not None


def _read_capped(path: Path, size_cap: int) -> bytes | ReadResult:
    fd = open_no_follow(path)
    with os.fdopen(fd, "rb", buffering=0) as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):
            return _skip("unreadable", 0, "not a regular file")
        # Decide on the size the file system reports before reading a single byte.
        if info.st_size > size_cap:
            return _skip("too-large", info.st_size, f"{info.st_size} bytes > cap {size_cap}")
        raw = read_at_most(handle, size_cap + 1)
    if len(raw) > size_cap:  # grew between fstat and read
        return _skip("too-large", len(raw), f"more than {size_cap} bytes")
    return raw


def _decode(raw: bytes) -> tuple[str, None, str] | tuple[None, str, str]:
    for bom, codec in _BOMS:
        if raw.startswith(bom):
            return _decode_strict(raw[len(bom) :], codec)
    head = raw[:SNIFF_BYTES]
    if b"\x00" in head:
        utf16 = utf16_without_bom(raw)
        if utf16:
            return _decode_strict(raw, utf16)
        return None, "binary", "NUL byte in the first 8 KiB"
    # Text never holds NUL; a file that does further on is binary with a text-looking
    # header (a database dump, an archive with a text preamble).  One C-speed scan.
    nul = raw.find(b"\x00", SNIFF_BYTES)
    if nul >= 0:
        return None, "binary", f"NUL byte at offset {nul}"
    if raw.startswith(codecs.BOM_UTF8):
        raw = raw[len(codecs.BOM_UTF8) :]
    decoded = _decode_strict(raw, "utf-8")
    if decoded[1] != "undecodable":
        return decoded
    legacy, why_not = detect_legacy(raw)  # latin-1, cp1252, cp1251 notes...
    if legacy is None:
        return None, "undecodable", f"{decoded[2]}; {why_not}"
    return _decode_strict(raw, legacy)


def _decode_strict(raw: bytes, codec: str) -> tuple[str, None, str] | tuple[None, str, str]:
    try:
        text = raw.decode(codec)
    except UnicodeDecodeError as exc:
        return None, "undecodable", f"not valid {codec} at byte {exc.start}"
    if _control_share(text[:SNIFF_BYTES]) > MAX_CONTROL_SHARE:
        return None, "binary", "too many control characters"
    return text, None, ""


def _control_share(sample: str) -> float:
    if not sample:
        return 0.0
    return sum(1 for ch in sample if ch in _CONTROLS) / len(sample)


def _normalise_newlines(text: str) -> str:
    if "\r" not in text:
        return text
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _skip(reason: str, size: int, detail: str) -> ReadResult:
    return ReadResult(None, "", size, reason, detail)
