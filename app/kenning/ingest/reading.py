"""Reading one file as text, or saying precisely why it is not indexed.

Every failure mode the walker meets in the wild (huge files, binaries, latin-1 notes,
permission errors, files deleted mid-walk) becomes a `skip_reason`, never an exception.
"""

from __future__ import annotations

import codecs
import hashlib
import os
import re
from collections.abc import Sequence

from kenning.core.confine import Refused, SourceRoot, read_at_most
from kenning.core.records import Record
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


class ReadResult(Record, frozen=True):
    text: str | None  # None exactly when skip_reason is set
    raw_sha256: str  # of the raw bytes; "" when they were never read
    size: int
    skip_reason: str | None = None  # too-large | binary | undecodable | unreadable | vanished | outside-root | ...
    detail: str = ""
    raw: bytes | None = None  # the bytes read, for an extractor (read_raw only)
    file_stat: os.stat_result | None = None  # of the file as opened (None when it was not)

    @property
    def ok(self) -> bool:
        return self.skip_reason is None


def skip_for(exc: OSError) -> tuple[str, str]:
    """(skip reason, detail) for a file that could not be opened or read.

    Only a name positively absent is "vanished"; everything else (permissions, no file
    descriptors left, I/O errors, a link Kenning refuses) says nothing about the file.
    """
    if isinstance(exc, Refused):
        return exc.reason, exc.strerror or str(exc)
    if isinstance(exc, (FileNotFoundError, NotADirectoryError)):
        return "vanished", exc.strerror or str(exc)
    return "unreadable", f"{type(exc).__name__}: {exc.strerror or exc}"


def read_text(root: SourceRoot, parts: Sequence[str], size_cap: int) -> ReadResult:
    """Read a file below root as text (LF line ends) unless it is too large, binary or
    unreadable.  Opened from the root component by component (core.confine)."""
    raw_or_skip = _read_capped(root, parts, size_cap)
    if isinstance(raw_or_skip, ReadResult):
        return raw_or_skip
    raw, info = raw_or_skip
    digest = hashlib.sha256(raw).hexdigest()
    text, reason, detail = _decode(raw)
    if reason is not None or text is None:
        return ReadResult(None, digest, len(raw), reason, detail, file_stat=info)
    return ReadResult(_normalise_newlines(text), digest, len(raw), file_stat=info)


def read_raw(root: SourceRoot, parts: Sequence[str], size_cap: int) -> ReadResult:
    """The bytes, hash and size of a file an extractor will read (text stays None), or
    why it is skipped.  The extractor is handed these bytes, never the path: what is
    extracted is what was hashed."""
    raw_or_skip = _read_capped(root, parts, size_cap)
    if isinstance(raw_or_skip, ReadResult):
        return raw_or_skip
    raw, info = raw_or_skip
    return ReadResult(None, hashlib.sha256(raw).hexdigest(), len(raw), raw=raw, file_stat=info)


# A mailbox's first line: "From alice@example.com Mon Jan  1 09:00:00 2024" (Thunderbird:
# "From - Mon Jan 01 09:00:00 2024").  The sender, then an asctime date: a note that
# happens to begin "From the desk of..." is not taken for one.
_MBOX_FIRST_LINE = re.compile(rb"From \S+ +[A-Z][a-z]{2} +[A-Z][a-z]{2} +\d{1,2} +\d{1,2}:\d\d(?::\d\d)?\b[^\n]*")
SNIFF_LINE_BYTES = 1024


def starts_like_mbox(root: SourceRoot, parts: Sequence[str]) -> bool:
    """Whether a file (one without an extension: Thunderbird's `Inbox`) is a mailbox, by
    its first line only: at most SNIFF_LINE_BYTES read, regular files only, nothing raised."""
    try:
        with root.opened(parts) as handle:
            head = read_at_most(handle, SNIFF_LINE_BYTES)
    except OSError:  # not a regular file, refused, unreadable
        return False
    line = head.split(b"\n", 1)[0].rstrip(b"\r")
    return (b"\n" in head or len(head) < SNIFF_LINE_BYTES) and _MBOX_FIRST_LINE.fullmatch(line) is not None


def _read_capped(root: SourceRoot, parts: Sequence[str], size_cap: int) -> tuple[bytes, os.stat_result] | ReadResult:
    try:
        with root.opened(parts) as handle:
            info = os.fstat(handle.fileno())
            # Decide on the size the file system reports before reading a single byte.
            if info.st_size > size_cap:
                return _skip("too-large", info.st_size, f"{info.st_size} bytes > cap {size_cap}", info)
            raw = read_at_most(handle, size_cap + 1)
    except OSError as exc:
        reason, detail = skip_for(exc)
        return _skip(reason, 0, detail)
    if len(raw) > size_cap:  # grew between fstat and read
        return _skip("too-large", len(raw), f"more than {size_cap} bytes", info)
    return raw, info


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


def _skip(reason: str, size: int, detail: str, info: os.stat_result | None = None) -> ReadResult:
    return ReadResult(None, "", size, reason, detail, file_stat=info)
