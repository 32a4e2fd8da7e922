"""Plain text (txt, rst, org, adoc): paragraphs grouped to the target size."""

from __future__ import annotations

import re
from pathlib import PurePosixPath

from kenning.ingest.chunk_base import (
    Doc,
    Piece,
    split_to_fit,
)

_RST_UNDERLINE = re.compile(r"([=\-~^\"'`#*+])\1{2,}[ \t]*")
_ORG_TITLE = re.compile(r"(?:#\+title:|\*+)[ \t]+(.+)", re.IGNORECASE)


def text_pieces(doc: Doc, rel_path: str, target: int, cap: int) -> list[Piece]:
    title = _text_title(doc) or PurePosixPath(rel_path).name or rel_path
    return [(a, b, title, False) for a, b, _ in split_to_fit(doc.text, 0, len(doc.text), target, cap)]


def _text_title(doc: Doc) -> str | None:
    """The first line when the document marks it as a title (rst underline, org)."""
    lines = [line for line in doc.lines[:4] if line.strip()][:2]
    if not lines:
        return None
    org = _ORG_TITLE.fullmatch(lines[0].strip())
    if org:
        return org.group(1).strip()[:200]
    if len(lines) == 2 and _RST_UNDERLINE.fullmatch(lines[1].strip()):
        return lines[0].strip()[:200] or None
    return None
