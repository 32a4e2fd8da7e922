"""Cutting documents into chunks that fit the embedding model and the byte cap.

Everything works on character offsets into one normalised text, so a chunk's text is
always an exact slice of the document (nothing rewritten, nothing lost but blank space)
and line numbers come from one line index. The cap is enforced by a single generic
splitter (paragraphs, then lines, then UTF-8-safe cuts) that every kind falls back on.
"""

from __future__ import annotations

import bisect
import math
import re
import unicodedata
from itertools import accumulate
from pathlib import PurePosixPath
from typing import Iterable

from kenning.core import ChunkDraft

CHUNKING_VERSION = 1
DEFAULT_MAX_BYTES = 1600
# all-MiniLM-L6-v2 reads 256 word pieces: about 1000 bytes of English prose.
TARGET_BYTES = 1000
MIN_MAX_BYTES = 4  # one code point can take four bytes

Span = tuple[int, int]  # [start, end) character offsets
_Atom = tuple[int, int, bool]  # span + "is code"
_Piece = tuple[int, int, str, bool]  # span + title + "is code"

_LEADING_SPACE = re.compile(r"\s*")
_BLANK_LINES = re.compile(r"\n(?:[^\S\n]*\n)+")
_SURROGATE = re.compile(r"[\ud800-\udfff]")


class _Doc:
    """The normalised text plus a line index (offset -> 1-based line number)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.lines = text.split("\n")
        self.starts = list(accumulate((len(line) + 1 for line in self.lines[:-1]), initial=0))

    def line_of(self, offset: int) -> int:
        return bisect.bisect_right(self.starts, offset)

    def span_of_lines(self, first: int, stop: int) -> Span:
        """Offsets of lines [first, stop) without the final newline."""
        end = self.starts[stop] - 1 if stop < len(self.lines) else len(self.text)
        return self.starts[first], max(end, self.starts[first])


def chunk_document(
    text: str,
    kind: str,
    rel_path: str,
    *,
    line_offset: int = 0,
    max_bytes: int = DEFAULT_MAX_BYTES,
) -> list[ChunkDraft]:
    """Chunks of `text` (a document body) in order; see the module docstring."""
    if max_bytes < MIN_MAX_BYTES:
        raise ValueError(f"max_bytes must be at least {MIN_MAX_BYTES}")
    doc = _Doc(_normalise(text))
    target = min(TARGET_BYTES, max_bytes)
    if kind == "markdown":
        pieces = markdown_pieces(doc, rel_path, target, max_bytes)
    elif kind.startswith("code"):
        lang = kind.partition(":")[2]
        pieces = code_pieces(doc, rel_path, lang, target, max_bytes)
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


# --- the generic splitter -------------------------------------------------------------


def trim(text: str, start: int, end: int) -> Span:
    """Drop leading blank lines (keeping the first line's indent) and trailing space."""
    first = _LEADING_SPACE.match(text, start, end).end()
    if first >= end:
        return end, end
    newline = text.rfind("\n", start, first)
    start = newline + 1 if newline >= 0 else start
    if text[end - 1].isspace():
        end = start + len(text[start:end].rstrip())
    return start, end


def nbytes(text: str, start: int, end: int) -> int:
    return len(text[start:end].encode("utf-8"))


def fits(text: str, start: int, end: int, limit: int) -> bool:
    # Character counts bound byte counts (1..4 bytes each): skip encoding when decisive.
    chars = end - start
    if chars > limit:
        return False
    if chars * 4 <= limit:
        return True
    return nbytes(text, start, end) <= limit


def atoms(text: str, start: int, end: int, cap: int, code: bool = False, group: int = 0) -> list[_Atom]:
    """Non-blank pieces of [start, end), each within `cap` bytes, split as coarsely as
    possible: at blank lines, then at line ends (consecutive lines grouped up to `group`
    bytes, so a long paragraph costs one step per group, not per line), then inside a line."""
    start, end = trim(text, start, end)
    if start >= end:
        return []
    if fits(text, start, end, cap):
        return [(start, end, code)]
    out: list[_Atom] = []
    for a, b in _paragraph_spans(text, start, end):
        a, b = trim(text, a, b)
        if a >= b:
            continue
        if fits(text, a, b, cap):
            out.append((a, b, code))
        else:
            out.extend((x, y, code) for x, y in _line_groups(text, a, b, group or cap, cap))
    return out


def _paragraph_spans(text: str, start: int, end: int) -> Iterable[Span]:
    for match in _BLANK_LINES.finditer(text, start, end):
        yield start, match.start()
        start = match.end()
    yield start, end


def _fit_prefix(text: str, start: int, end: int, limit: int) -> int:
    """The largest stop such that text[start:stop] encodes to at most `limit` bytes."""
    window = text[start:min(end, start + limit)]
    raw = window.encode("utf-8")
    if len(raw) <= limit:
        return start + len(window)
    return start + len(raw[:limit].decode("utf-8", "ignore"))


def _line_groups(text: str, start: int, end: int, limit: int, cap: int) -> Iterable[Span]:
    """Runs of whole lines within `limit` bytes; a line over `cap` is cut inside."""
    while start < end:
        stop = _fit_prefix(text, start, end, limit)
        if stop >= end:
            cut, resume = end, end
        else:
            cut = text.rfind("\n", start, stop + 1)
            resume = cut + 1
            if cut <= start:  # the first line alone is over the limit
                cut = text.find("\n", start, end)
                cut = end if cut < 0 else cut
                resume = cut + 1
                if not fits(text, start, cut, cap):
                    yield from _byte_cuts(text, start, cut, cap)
                    start = resume
                    continue
        piece = trim(text, start, cut)
        if piece[0] < piece[1]:
            yield piece
        start = resume


def _byte_cuts(text: str, start: int, end: int, cap: int) -> Iterable[Span]:
    """Cut one long line at code point boundaries, preferring a space near the end."""
    while start < end:
        cut = _fit_prefix(text, start, end, cap)
        if cut < end:
            cut = _nicer_cut(text, start, cut)
        piece = trim(text, start, cut)
        if piece[0] < piece[1]:
            yield piece
        start = cut


def _nicer_cut(text: str, start: int, cut: int) -> int:
    low = start + (cut - start) // 2
    space = max(text.rfind(" ", low, cut), text.rfind("\t", low, cut), text.rfind("\u3000", low, cut))
    if space >= low:
        return space + 1
    # Keep a combining mark with its base character.
    for _ in range(8):
        if cut - 1 <= start or not unicodedata.combining(text[cut]):
            break
        cut -= 1
    return cut


def pack(text: str, parts: list[_Atom], target: int) -> list[_Atom]:
    """Join consecutive atoms into chunks of about `target` bytes, evenly sized so a
    section just over the target becomes two halves, not a chunk and a crumb."""
    sizes = [nbytes(text, a, b) for a, b, _ in parts]
    total = sum(sizes)
    aim = total / max(1, math.ceil(total / target)) if total else 0
    out: list[_Atom] = []
    current: list | None = None  # [start, end, code, size]
    for (a, b, code), size in zip(parts, sizes):
        if current is not None:
            joined = current[3] + size + _gap_bytes(text, current[1], a, target)
            if current[3] < aim and joined <= target:
                current[1], current[2], current[3] = b, current[2] and code, joined
                continue
            out.append((current[0], current[1], current[2]))
        current = [a, b, code, size]
    if current is not None:
        out.append((current[0], current[1], current[2]))
    return out


def _gap_bytes(text: str, end: int, start: int, target: int) -> int:
    return target + 1 if start - end > target else nbytes(text, end, start)


def split_to_fit(text: str, start: int, end: int, target: int, cap: int, code: bool = False) -> list[_Atom]:
    """One span as chunks: whole when it fits the target, else atoms packed to it."""
    start, end = trim(text, start, end)
    if start >= end:
        return []
    if fits(text, start, end, target):
        return [(start, end, code)]
    return pack(text, atoms(text, start, end, cap, code, target), target)


# --- plain text -----------------------------------------------------------------------

_RST_UNDERLINE = re.compile(r"([=\-~^\"'`#*+])\1{2,}[ \t]*")
_ORG_TITLE = re.compile(r"(?:#\+title:|\*+)[ \t]+(.+)", re.IGNORECASE)


def text_pieces(doc: _Doc, rel_path: str, target: int, cap: int) -> list[_Piece]:
    title = _text_title(doc) or PurePosixPath(rel_path).name or rel_path
    return [(a, b, title, False) for a, b, _ in split_to_fit(doc.text, 0, len(doc.text), target, cap)]


def _text_title(doc: _Doc) -> str | None:
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


# --- markdown -------------------------------------------------------------------------

_FENCE_OPEN = re.compile(r" {0,3}(`{3,}|~{3,})(.*)")
_FENCE_CLOSE = re.compile(r" {0,3}(`{3,}|~{3,})[ \t]*")
_ATX = re.compile(r" {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*")
_SETEXT = re.compile(r" {0,3}(=+|-+)[ \t]*")
_MARKED = re.compile(r"^ {0,3}[`~#=-]", re.MULTILINE)
# Lines that cannot be setext heading text: list items, quotes, indented code.
_NOT_SETEXT_TEXT = re.compile(r" {0,3}(?:[-*+>]|\d+[.)])(?:\s|$)| {4}|\t")
MAX_TITLE_CHARS = 200


class _Markdown:
    """Headings (outside fenced code) and fenced code blocks of a markdown text."""

    def __init__(self, doc: _Doc) -> None:
        self.headings: list[tuple[int, int, str]] = []  # (first line, level, title)
        self.heading_lines: set[int] = set()
        self.fences: dict[int, int] = {}  # opening line -> closing line (inclusive)
        self._scan(doc)

    def _scan(self, doc: _Doc) -> None:
        lines = doc.lines
        fence, opened, special = "", 0, -1  # special: last line that cannot head a setext
        for i in _marked_lines(doc):
            line = lines[i]
            if fence:
                close = _FENCE_CLOSE.fullmatch(line)
                if close and close.group(1)[0] == fence[0] and len(close.group(1)) >= len(fence):
                    self.fences[opened], fence, special = i, "", i
                continue
            opening = _FENCE_OPEN.match(line)
            if opening and not (opening.group(1)[0] == "`" and "`" in opening.group(2)):
                fence, opened = opening.group(1), i
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


def _marked_lines(doc: _Doc) -> Iterable[int]:
    # Only lines opening with a fence, "#", "=" or "-" can change the structure: one
    # regex pass finds them, so plain prose lines cost no Python work.
    for match in _MARKED.finditer(doc.text):
        yield doc.line_of(match.start()) - 1


def markdown_pieces(doc: _Doc, rel_path: str, target: int, cap: int) -> list[_Piece]:
    marks = _Markdown(doc)
    stem = PurePosixPath(rel_path).stem or rel_path
    pieces: list[_Piece] = []
    for first, stop, title in _fold_bodiless(doc, marks, _sections(doc, marks, stem)):
        for a, b, code in _section_chunks(doc, first, stop, marks, target, cap):
            pieces.append((a, b, title, code))
    return pieces


def _sections(doc: _Doc, marks: _Markdown, stem: str) -> list[tuple[int, int, str]]:
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


def _fold_bodiless(doc: _Doc, marks: _Markdown, sections):
    """A heading with nothing under it but sub-headings joins the next section (whose
    path already names it) instead of becoming a chunk of one line."""
    pending: int | None = None
    for k, (first, stop, title) in enumerate(sections):
        start = first if pending is None else pending
        bodiless = all(
            j in marks.heading_lines or not doc.lines[j].strip() for j in range(first, stop)
        )
        if bodiless and k + 1 < len(sections):
            pending = start
            continue
        pending = None
        yield start, stop, title


def _blocks(doc: _Doc, first: int, stop: int, marks: _Markdown) -> list[tuple[int, int, bool]]:
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


def _section_chunks(doc: _Doc, first: int, stop: int, marks: _Markdown, target: int, cap: int) -> list[_Atom]:
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
    parts: list[_Atom] = []
    for first, stop, code in blocks:
        parts.extend(atoms(text, *doc.span_of_lines(first, stop), cap, code, target))
    return pack(text, parts, target)


def _only_headings(doc: _Doc, block: tuple[int, int, bool], marks: _Markdown) -> bool:
    return not block[2] and all(
        j in marks.heading_lines or not doc.lines[j].strip() for j in range(block[0], block[1])
    )


# --- code -----------------------------------------------------------------------------

SMALL_CODE_BYTES = 200  # regions below this may share a chunk with their neighbours
MAX_TITLE_SYMBOLS = 4

_PY_DEF = re.compile(r"(?:async[ \t]+)?(def|class)[ \t]+(\w+)")
_KW_DEF = re.compile(
    r"(?:(?:export|default|pub(?:\([\w:]+\))?|public|private|protected|internal|static|"
    r"abstract|final|sealed|open|data|async|unsafe|extern|inline|local|override|partial|"
    r"declare)[ \t]+)*"
    r"(fn|func|function|def|defp|defmodule|defn|class|struct|enum|union|trait|impl|"
    r"interface|type|module|object|record|namespace|protocol|extension)"
    r"(?:[ \t]+\*?|\*)[ \t]*(?:\([^)]*\)[ \t]*)?([A-Za-z_$][\w$.:~!?]*)?"
)
_JS_FN = re.compile(
    r"(?:export[ \t]+)?(?:const|let|var)[ \t]+([\w$]+)[ \t]*(?::[^=]+)?=[ \t]*"
    r"(?:async[ \t]+)?(?:function\b|\([^)]*\)[ \t]*(?::[^=]+)?=>|[\w$]+[ \t]*=>)"
)
_C_FUNC = re.compile(
    r"(?!(?:if|for|while|switch|return|else|do|case|typedef|using)\b)"
    r"[A-Za-z_][\w \t*&:<>,]*?[ \t*&]([A-Za-z_~][\w:~]*)[ \t]*\("
)
_SQL_DEF = re.compile(
    r"create[ \t]+(?:or[ \t]+replace[ \t]+)?(?:(?:temp|temporary|unique|virtual)[ \t]+)?"
    r"(table|view|function|procedure|index|trigger|type)[ \t]+"
    r"(?:if[ \t]+not[ \t]+exists[ \t]+)?([\w.\"`\[\]]+)",
    re.IGNORECASE,
)
_INI_SECTION = re.compile(r"\[+([^\]\n]+)\]+[ \t]*")
_CLOSER = re.compile(r"(?:\}|\)|\]|end\b)")

_CONTAINERS = frozenset({"class", "struct", "enum", "union", "trait", "impl", "interface",
                         "type", "module", "object", "record", "namespace", "protocol",
                         "extension", "defmodule"})
_JS_LANGS = frozenset({"javascript", "jsx", "typescript", "tsx", "vue", "svelte", "astro"})
_C_LANGS = frozenset({"c", "cpp", "objc", "csharp", "java", "kotlin", "scala", "swift",
                      "dart", "groovy", "php"})
_SECTION_LANGS = frozenset({"toml", "ini"})
_NO_DEFS = frozenset({"json", "yaml", "xml", "html", "css", "scss", "less", "latex",
                      "make", "dockerfile", "cmake", "graphql", "markdown"})
_HASH_COMMENTS = frozenset({"ruby", "shell", "fish", "r", "perl", "elixir", "julia", "nim",
                            "toml", "ini", "terraform", "hcl", "nix", "powershell"})
_COMMENT_MARKS = ("//", "/*", "*", "@", "#[", "--", ";", "'")


def code_pieces(doc: _Doc, rel_path: str, lang: str, target: int, cap: int) -> list[_Piece]:
    regions = _regions(doc, 0, len(doc.lines), lang, "")
    return _group_regions(doc, regions, rel_path, lang, target, cap, nested=False)


def _definition(body: str, lang: str) -> str | None:
    """The symbol a line at definition level starts ("name", "class Foo"), if any."""
    if lang == "python":
        m = _PY_DEF.match(body)
        return (f"class {m.group(2)}" if m.group(1) == "class" else m.group(2)) if m else None
    if lang in _SECTION_LANGS:
        m = _INI_SECTION.fullmatch(body)
        return f"[{m.group(1).strip()}]" if m else None
    if lang == "sql":
        m = _SQL_DEF.match(body)
        return f"{m.group(1).lower()} {m.group(2)}" if m else None
    if lang in _NO_DEFS:
        return None
    m = _KW_DEF.match(body)
    if m and m.group(1) == "impl":
        return "impl " + body[m.end(1):].split("{")[0].strip()[:MAX_TITLE_CHARS]
    if m and m.group(2):
        return f"{m.group(1)} {m.group(2)}" if m.group(1) in _CONTAINERS else m.group(2)
    if lang in _JS_LANGS and (m := _JS_FN.match(body)):
        return m.group(1)
    if lang in _C_LANGS and not body.rstrip().endswith(";") and (m := _C_FUNC.match(body)):
        return m.group(1)
    return None


def _attachable(body: str, lang: str) -> bool:
    """Decorators and comments that belong to the definition below them."""
    if lang == "python":
        return body.startswith(("#", "@"))
    return body.startswith(_COMMENT_MARKS) or (lang in _HASH_COMMENTS and body.startswith("#"))


def _regions(doc: _Doc, first: int, stop: int, lang: str, indent: str) -> list[tuple[int, int, str | None]]:
    """Definitions at `indent` (with their decorators and comments) and the stretches
    between them, as (first line, stop line, symbol or None)."""
    lines, bounds = doc.lines, []
    in_def = after_closer = False
    for i in _lines_at_level(doc, first, stop, indent):
        body = lines[i][len(indent):]
        symbol = _definition(body, lang)
        if symbol is None and _attachable(body, lang):
            continue
        if symbol is None and _CLOSER.match(body):
            after_closer = True
            continue
        # Python bodies are indented, so any statement at this level ends a definition;
        # brace languages end one at a closing brace on this level.
        if symbol is not None or (in_def and (lang == "python" or after_closer)):
            floor = bounds[-1][0] + 1 if bounds else first
            bounds.append((_attach_start(lines, i, floor, indent, lang), symbol))
            in_def = symbol is not None
        after_closer = False
    starts = [line for line, _ in bounds]
    regions = [(line, stop_, sym) for (line, sym), stop_ in zip(bounds, starts[1:] + [stop])]
    if not bounds or bounds[0][0] > first:
        regions.insert(0, (first, bounds[0][0] if bounds else stop, None))
    return regions


def _lines_at_level(doc: _Doc, first: int, stop: int, indent: str) -> Iterable[int]:
    # One regex pass finds the candidate lines, so deeper lines cost no Python work.
    level = re.compile("^" + re.escape(indent) + r"(?=\S)", re.MULTILINE)
    start, end = doc.span_of_lines(first, stop)
    for match in level.finditer(doc.text, start, end):
        yield doc.line_of(match.start()) - 1


def _attach_start(lines: list[str], i: int, floor: int, indent: str, lang: str) -> int:
    while i - 1 >= floor:
        above = lines[i - 1]
        stripped = above.strip()
        if not (stripped and above.startswith(indent) and _attachable(stripped, lang)):
            break
        i -= 1
    return i


def _group_regions(doc: _Doc, regions, rel_path: str, lang: str, target: int, cap: int, *,
                   nested: bool, parent: str | None = None) -> list[_Piece]:
    """Small neighbouring regions share a chunk (titled with all their symbols); big
    ones are split, container definitions at their members first."""
    text, pieces = doc.text, []
    group: list | None = None  # [start, end, symbols, size]
    for first, stop, symbol in regions:
        a, b = trim(text, *doc.span_of_lines(first, stop))
        if a >= b:
            continue
        symbol = _qualified(parent, symbol)
        small = fits(text, a, b, SMALL_CODE_BYTES)
        if group is not None and small and group[3] < SMALL_CODE_BYTES * 2:
            joined = group[3] + _gap_bytes(text, group[1], a, target) + nbytes(text, a, b)
            if joined <= target:
                group[1], group[3] = b, joined
                group[2] += [symbol] if symbol else []
                continue
        if group is not None:
            pieces.append((group[0], group[1], _code_title(rel_path, group[2], parent), True))
            group = None
        if small:
            group = [a, b, [symbol] if symbol else [], nbytes(text, a, b)]
        else:
            pieces.extend(_big_region(doc, first, stop, symbol, rel_path, lang, target, cap, nested, parent))
    if group is not None:
        pieces.append((group[0], group[1], _code_title(rel_path, group[2], parent), True))
    return pieces


def _big_region(doc, first, stop, symbol, rel_path, lang, target, cap, nested, parent) -> list[_Piece]:
    if not nested and symbol and symbol.split(" ")[0] in _CONTAINERS:
        indent = _body_indent(doc.lines, first + 1, stop)
        if indent:
            inner = _regions(doc, first, stop, lang, indent)
            if len(inner) > 1:
                return _group_regions(doc, inner, rel_path, lang, target, cap, nested=True, parent=symbol)
    title = _code_title(rel_path, [symbol] if symbol else [], parent)
    a, b = doc.span_of_lines(first, stop)
    return [(x, y, title, True) for x, y, _ in split_to_fit(doc.text, a, b, target, cap, True)]


def _body_indent(lines: list[str], first: int, stop: int) -> str:
    for j in range(first, min(stop, first + 50)):
        line = lines[j]
        if line.strip():
            return line[: len(line) - len(line.lstrip(" \t"))]
    return ""


def _qualified(parent: str | None, symbol: str | None) -> str | None:
    if parent is None or symbol is None:
        return symbol
    # "class Foo" + "bar" -> "Foo.bar"; "impl Show for Point" + "fmt" -> "Point.fmt"
    return f"{parent.split()[-1]}.{symbol.split()[-1]}"


def _code_title(rel_path: str, symbols: list[str], parent: str | None) -> str:
    if not symbols:
        return f"{rel_path}: {parent}" if parent else rel_path
    shown = ", ".join(symbols[:MAX_TITLE_SYMBOLS])
    more = ", …" if len(symbols) > MAX_TITLE_SYMBOLS else ""
    return f"{rel_path}: {shown}{more}"


# --- assembling drafts ----------------------------------------------------------------


def _drafts(doc: _Doc, pieces: list[_Piece], line_offset: int, cap: int) -> list[ChunkDraft]:
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
