"""Markdown: sections by heading hierarchy, fenced code kept whole when it fits."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from pathlib import PurePosixPath

from kenning.ingest.chunk_base import (
    MAX_TITLE_CHARS,
    Atom,
    Doc,
    Piece,
    atoms,
    fits,
    pack,
    trim,
)

_FENCE_OPEN = re.compile(r" {0,3}(`{3,}|~{3,})(.*)")
_FENCE_CLOSE = re.compile(r" {0,3}(`{3,}|~{3,})[ \t]*")
_ATX = re.compile(r" {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*")
_SETEXT = re.compile(r" {0,3}(=+|-+)[ \t]*")
_MARKED = re.compile(r"^ {0,3}[`~#=-]", re.MULTILINE)
# Lines that cannot be setext heading text: list items, quotes, indented code.
_NOT_SETEXT_TEXT = re.compile(r" {0,3}(?:[-*+>]|\d+[.)])(?:\s|$)| {4}|\t")


class _Markdown:
    """Headings (outside fenced code) and fenced code blocks of a markdown text."""

    def __init__(self, doc: Doc) -> None:
        self.headings: list[tuple[int, int, str]] = []  # (first line, level, title)
        self.heading_lines: set[int] = set()
        self.fences: dict[int, int] = {}  # opening line -> closing line (inclusive)
        self._scan(doc)

    def _scan(self, doc: Doc) -> None:
        lines = doc.lines
        fence, opened, special = "", 0, -1  # special: last line that cannot head a setext
        for i in _marked_lines(doc):
            line = lines[i]
            if fence:
                if closes_fence(line, fence):
                    self.fences[opened], fence, special = i, "", i
                continue
            opening = fence_opening(line)
            if opening:
                fence, opened = opening, i
            elif atx := _ATX.fullmatch(line):
                self._add(i, [i], len(atx.group(1)), atx.group(2) or "")
                special = i
            elif (setext := _SETEXT.fullmatch(line)) and self._setext_text(lines, i, special):
                self._add(i - 1, [i - 1, i], 1 if setext.group(1)[0] == "=" else 2, lines[i - 1])
                special = i
        if fence:  # unclosed: runs to the end, as CommonMark says
            self.fences[opened] = len(lines) - 1

    @staticmethod
    def _setext_text(lines: list[str], i: int, special: int) -> bool:
        above = lines[i - 1] if i > 0 else ""
        return special != i - 1 and bool(above.strip()) and not _NOT_SETEXT_TEXT.match(above)

    def _add(self, first: int, lines: list[int], level: int, title: str) -> None:
        self.headings.append((first, level, title.strip()[:MAX_TITLE_CHARS]))
        self.heading_lines.update(lines)


def fence_opening(line: str) -> str | None:
    """The run of backticks or tildes that opens a fenced code block on this line (CommonMark)."""
    opening = _FENCE_OPEN.match(line)
    if opening and not (opening.group(1)[0] == "`" and "`" in opening.group(2)):
        return opening.group(1)
    return None


def closes_fence(line: str, fence: str) -> bool:
    """Whether the line closes a block opened by `fence`: the same character, at least as many."""
    close = _FENCE_CLOSE.fullmatch(line)
    return close is not None and close.group(1)[0] == fence[0] and len(close.group(1)) >= len(fence)


def _marked_lines(doc: Doc) -> Iterable[int]:
    # Only lines opening with a fence, "#", "=" or "-" can change the structure: one
    # regex pass finds them, so plain prose lines cost no Python work.
    for match in _MARKED.finditer(doc.text):
        yield doc.line_of(match.start()) - 1


def markdown_pieces(doc: Doc, rel_path: str, target: int, cap: int, title: str | None = None) -> list[Piece]:
    marks = _Markdown(doc)
    stem = (title or "").strip()[:MAX_TITLE_CHARS] or PurePosixPath(rel_path).stem or rel_path
    pieces: list[Piece] = []
    for first, stop, title in _fold_bodiless(doc, marks, _sections(doc, marks, stem)):
        for a, b, code in _section_chunks(doc, first, stop, marks, target, cap):
            pieces.append((a, b, title, code))
    return pieces


def _sections(doc: Doc, marks: _Markdown, stem: str) -> list[tuple[int, int, str]]:
    """(first line, stop line, heading path) for the preamble and each heading."""
    heads = marks.headings
    sections = [(0, heads[0][0] if heads else len(doc.lines), stem)]
    stack: list[tuple[int, str]] = []
    for k, (line, level, title) in enumerate(heads):
        while stack and stack[-1][0] >= level:
            stack.pop()
        stack.append((level, title))
        stop = heads[k + 1][0] if k + 1 < len(heads) else len(doc.lines)
        sections.append((line, stop, " > ".join(t for _, t in stack if t) or stem))
    return sections


def _fold_bodiless(doc: Doc, marks: _Markdown, sections: list[tuple[int, int, str]]) -> Iterator[tuple[int, int, str]]:
    """A heading with nothing under it but sub-headings joins the next section (whose
    path already names it) instead of becoming a chunk of one line."""
    pending: int | None = None
    for k, (first, stop, title) in enumerate(sections):
        start = first if pending is None else pending
        bodiless = all(j in marks.heading_lines or not doc.lines[j].strip() for j in range(first, stop))
        if bodiless and k + 1 < len(sections):
            pending = start
            continue
        pending = None
        yield start, stop, title


def _blocks(doc: Doc, first: int, stop: int, marks: _Markdown) -> list[tuple[int, int, bool]]:
    """Paragraphs and fenced code blocks of lines [first, stop) as line ranges."""
    lines, blocks, j = doc.lines, [], first
    while j < stop:
        if not lines[j].strip():
            j += 1
        elif j in marks.fences:
            k = min(marks.fences[j], stop - 1) + 1
            blocks.append((j, k, True))
            j = k
        else:
            k = j + 1
            while k < stop and k not in marks.fences and lines[k].strip():
                k += 1
            blocks.append((j, k, False))
            j = k
    return blocks


def _section_chunks(doc: Doc, first: int, stop: int, marks: _Markdown, target: int, cap: int) -> list[Atom]:
    text = doc.text
    start, end = trim(text, *doc.span_of_lines(first, stop))
    if start >= end:
        return []
    if fits(text, start, end, target):
        opening, closing = doc.line_of(start) - 1, doc.line_of(end - 1) - 1
        return [(start, end, marks.fences.get(opening, -1) >= closing)]
    blocks = _blocks(doc, first, stop, marks)
    # Never leave a heading alone at the end of a chunk: glue it to what follows.
    while len(blocks) > 1 and _only_headings(doc, blocks[0], marks):
        joined = (blocks[0][0], blocks[1][1], False)
        if not fits(text, *doc.span_of_lines(joined[0], joined[1]), cap):
            break
        blocks[0:2] = [joined]
    parts: list[Atom] = []
    for first, stop, code in blocks:
        parts.extend(atoms(text, *doc.span_of_lines(first, stop), cap, code, target))
    return pack(text, parts, target)


def _only_headings(doc: Doc, block: tuple[int, int, bool], marks: _Markdown) -> bool:
    return not block[2] and all(j in marks.heading_lines or not doc.lines[j].strip() for j in range(block[0], block[1]))
