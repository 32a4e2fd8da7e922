"""Text that is not UTF-8: UTF-16 without a BOM, and legacy code pages, when confident.

charset-normalizer (pure Python with optional compiled speed-ups, MIT) ranks code
pages by how "chaotic" the decoded text looks and how much it resembles a language.
Between Latin code pages it cannot tell apart from a few accented letters (cp1250 vs
cp1252 for "crème"), Windows-1252 wins: that is what a developer's old notes are.
"""

from __future__ import annotations

import re

import charset_normalizer

# Latin-script code pages the detector confuses with one another on short evidence.
_LATIN_FAMILY = frozenset(
    [
        "cp1250",
        "cp1252",
        "cp1254",
        "cp1257",
        "cp437",
        "cp775",
        "cp850",
        "cp852",
        "cp858",
        "latin_1",
        "mac_roman",
        "mac_latin2",
        "mac_iceland",
        "iso8859_1",
        "iso8859_2",
        "iso8859_3",
        "iso8859_4",
        "iso8859_9",
        "iso8859_10",
        "iso8859_13",
        "iso8859_14",
        "iso8859_15",
        "iso8859_16",
    ]
)
MAX_CHAOS = 0.10  # share of "mess" (odd symbols, mixed scripts) we still call text
SAMPLE_BYTES = 256 * 1024  # detection reads a sample; decoding uses the whole text
_HIGH_BYTES = bytes(range(0x80, 0x100))
_UTF8_SHAPED = re.compile(rb"[\xc0-\xf7][\x80-\xbf]+")
_WESTERN_UNDEFINED = (b"\x81", b"\x8d", b"\x8f", b"\x90", b"\x9d")  # the five holes in cp1252


def utf16_without_bom(raw: bytes) -> str | None:
    """The codec when NUL bytes sit at every other position, as in ASCII-heavy UTF-16."""
    sample = raw[:4096]
    if len(sample) < 4 or len(sample) % 2:
        return None
    even_nuls = sample[0::2].count(0)
    odd_nuls = sample[1::2].count(0)
    half = len(sample) // 2
    if odd_nuls > 0.3 * half and even_nuls < 0.05 * half:
        return "utf-16-le"
    if even_nuls > 0.3 * half and odd_nuls < 0.05 * half:
        return "utf-16-be"
    return None


def detect_legacy(raw: bytes) -> tuple[str | None, str]:
    """(codec, "") when the detector is confident, else (None, why not)."""
    if _looks_like_damaged_utf8(raw):
        return None, "damaged UTF-8 (overlong or surrogate sequences)"
    best = charset_normalizer.from_bytes(raw[:SAMPLE_BYTES]).best()
    if best is None:
        return None, "no text encoding fits these bytes"
    if best.percent_chaos > MAX_CHAOS * 100:
        return None, f"encoding unclear (best guess {best.encoding}, {best.percent_chaos:.0f}% noise)"
    codec = best.encoding
    if codec in _LATIN_FAMILY or best.percent_coherence == 0:
        codec = "latin-1" if any(hole in raw for hole in _WESTERN_UNDEFINED) else "cp1252"
    return codec, ""


def _looks_like_damaged_utf8(raw: bytes) -> bool:
    """Most high bytes sit in lead+continuation runs: UTF-8 gone wrong, not a code page.

    In Latin-1 text an accented letter is followed by ASCII ("cr\\xe8me"); in UTF-8,
    lead bytes are followed by 0x80-0xBF continuations, even when the sequence is invalid.
    """
    sample = raw[:SAMPLE_BYTES]
    high = len(sample) - len(sample.translate(None, _HIGH_BYTES))
    if not high:
        return False
    shaped = sum(len(m) for m in _UTF8_SHAPED.findall(sample))
    return shaped >= 0.5 * high
