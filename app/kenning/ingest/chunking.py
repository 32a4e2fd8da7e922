"""Cutting documents into chunks that fit the embedding model and the byte cap.

Everything works on character offsets into one normalised text, so a chunk's text is
always an exact slice of the document (nothing rewritten, nothing lost but blank space)
and line numbers come from one line index. The cap is enforced by a single generic
splitter (paragraphs, then lines, then UTF-8-safe cuts) that every kind falls back on.
"""

from __future__ import annotations

import re

from kenning.core import ChunkDraft
from kenning.ingest.chunk_base import Doc, Piece, atoms
from kenning.ingest.chunk_code import code_pieces
from kenning.ingest.chunk_markdown import markdown_pieces
from kenning.ingest.chunk_text import text_pieces
from kenning.ingest.filetypes import code_lang, is_code

# 2: a note's front-matter title names its untitled preamble, front matter YAML refuses is read line by
# line, and a wiki link also names its target anywhere in the vault ("**/Name.md").
CHUNKING_VERSION = 2
DEFAULT_MAX_BYTES = 1600
# all-MiniLM-L6-v2 reads 256 word pieces: about 1000 bytes of English prose.
TARGET_BYTES = 1000
MIN_MAX_BYTES = 4  # one code point can take four bytes

_SURROGATE = re.compile(r"[\ud800-\udfff]")


def chunk_document(
    text: str,
    kind: str,
    rel_path: str,
    *,
    line_offset: int = 0,
    max_bytes: int = DEFAULT_MAX_BYTES,
    title: str | None = None,
) -> list[ChunkDraft]:
    """Chunks of `text` (a document body) in order; see the module docstring.

    `title` (a note's front-matter title) names the text before the first heading;
    without it that text is named after the file."""
    if max_bytes < MIN_MAX_BYTES:
        raise ValueError(f"max_bytes must be at least {MIN_MAX_BYTES}")
    doc = Doc(_normalise(text))
    target = min(TARGET_BYTES, max_bytes)
    if kind == "markdown":
        pieces = markdown_pieces(doc, rel_path, target, max_bytes, title)
    elif is_code(kind):
        pieces = code_pieces(doc, rel_path, code_lang(kind) or "", target, max_bytes)
    else:
        pieces = text_pieces(doc, rel_path, target, max_bytes)
    return _drafts(doc, pieces, line_offset, max_bytes)


def _normalise(text: str) -> str:
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates cannot be stored or embedded
        text = _SURROGATE.sub("\ufffd", text)
    return text


def _drafts(doc: Doc, pieces: list[Piece], line_offset: int, cap: int) -> list[ChunkDraft]:
    drafts: list[ChunkDraft] = []
    for start, end, title, code in pieces:
        # Belt and braces: every kind already respects the cap; this keeps the
        # invariant true even if one of them is wrong.
        for a, b, _ in atoms(doc.text, start, end, cap, code):
            drafts.append(
                ChunkDraft(
                    ord=len(drafts),
                    title=title,
                    kind="code" if code else "prose",
                    text=doc.text[a:b],
                    line_start=doc.line_of(a) + line_offset,
                    line_end=doc.line_of(b - 1) + line_offset,
                )
            )
    return drafts
