"""Source code: top-level definitions (methods of big classes), else blank-line blocks."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from kenning.ingest.chunk_base import (
    MAX_TITLE_CHARS,
    Doc,
    Piece,
    fits,
    gap_bytes,
    nbytes,
    split_to_fit,
    trim,
)

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

_CONTAINERS = frozenset(
    {
        "class",
        "struct",
        "enum",
        "union",
        "trait",
        "impl",
        "interface",
        "type",
        "module",
        "object",
        "record",
        "namespace",
        "protocol",
        "extension",
        "defmodule",
    }
)
_JS_LANGS = frozenset({"javascript", "jsx", "typescript", "tsx", "vue", "svelte", "astro"})
_C_LANGS = frozenset({"c", "cpp", "objc", "csharp", "java", "kotlin", "scala", "swift", "dart", "groovy", "php"})
_SECTION_LANGS = frozenset({"toml", "ini"})
_NO_DEFS = frozenset(
    {
        "json",
        "yaml",
        "xml",
        "html",
        "css",
        "scss",
        "less",
        "latex",
        "make",
        "dockerfile",
        "cmake",
        "graphql",
        "markdown",
    }
)
_HASH_COMMENTS = frozenset(
    {
        "ruby",
        "shell",
        "fish",
        "r",
        "perl",
        "elixir",
        "julia",
        "nim",
        "toml",
        "ini",
        "terraform",
        "hcl",
        "nix",
        "powershell",
    }
)
_COMMENT_MARKS = ("//", "/*", "*", "@", "#[", "--", ";", "'")


def code_pieces(doc: Doc, rel_path: str, lang: str, target: int, cap: int) -> list[Piece]:
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
        return "impl " + body[m.end(1) :].split("{")[0].strip()[:MAX_TITLE_CHARS]
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


def _regions(doc: Doc, first: int, stop: int, lang: str, indent: str) -> list[tuple[int, int, str | None]]:
    """Definitions at `indent` (with their decorators and comments) and the stretches
    between them, as (first line, stop line, symbol or None)."""
    lines = doc.lines
    bounds: list[tuple[int, str | None]] = []  # (first line, symbol)
    in_def = after_closer = False
    for i in _lines_at_level(doc, first, stop, indent):
        body = lines[i][len(indent) :]
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


def _lines_at_level(doc: Doc, first: int, stop: int, indent: str) -> Iterable[int]:
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


def _group_regions(
    doc: Doc,
    regions: Iterable[tuple[int, int, str | None]],
    rel_path: str,
    lang: str,
    target: int,
    cap: int,
    *,
    nested: bool,
    parent: str | None = None,
) -> list[Piece]:
    """Small neighbouring regions share a chunk (titled with all their symbols); big
    ones are split, container definitions at their members first."""
    text, pieces = doc.text, []
    group: list[Any] | None = None  # [start, end, symbols, size]
    for first, stop, symbol in regions:
        a, b = trim(text, *doc.span_of_lines(first, stop))
        if a >= b:
            continue
        symbol = _qualified(parent, symbol)
        small = fits(text, a, b, SMALL_CODE_BYTES)
        if group is not None and small and group[3] < SMALL_CODE_BYTES * 2:
            joined = group[3] + gap_bytes(text, group[1], a, target) + nbytes(text, a, b)
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


def _big_region(
    doc: Doc,
    first: int,
    stop: int,
    symbol: str | None,
    rel_path: str,
    lang: str,
    target: int,
    cap: int,
    nested: bool,
    parent: str | None,
) -> list[Piece]:
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
