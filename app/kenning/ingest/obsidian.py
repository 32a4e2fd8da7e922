"""What an Obsidian vault's notes say beyond Markdown: links, embeds and inline `#tags`.

Links are kept twice: as written (`note_links`, the link graph's input: backlinks,
unresolved links) and as repository paths a chunk mentions (`wiki_link_paths`, the git
signal's references, like a written `src/auth.ts`); inline tags join the front
matter's, so `tag:` finds both. Code (fenced blocks of any fence length, inline spans)
is left out: `#include` or `a[[0]]` there is code.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterator
from urllib.parse import unquote

from kenning.core.types import NoteLink
from kenning.ingest.chunk_markdown import closes_fence, fence_opening
from kenning.ingest.filetypes import classify
from kenning.ingest.frontmatter import with_parents
from kenning.storage.api import ANYWHERE

# [[target]], [[target|alias]], [[target#heading]], ![[embedded.png]]
_WIKI_LINK = re.compile(r"(!?)\[\[([^\[\]|#^\n]*)(?:[#^][^\[\]|\n]*)?(?:\|[^\[\]\n]*)?\]\]")
# [text](relative/path.md), ![alt](image.png), [text](<path with spaces.md>)
_MD_LINK = re.compile(r"(!?)\[[^\]\n]*\]\(\s*(?:<([^>\n]+)>|([^)\s]+))(?:\s+\"[^\"\n]*\")?\s*\)")
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:")  # http:, obsidian:, mailto:, C: ...
# Obsidian's tag: after a space or a line start, letters/digits/_/-// with one non-digit.
_TAG = re.compile(r"(?:(?<=\s)|^)#([\w/\-]*[^\W\d][\w/\-]*)", re.MULTILINE)
# A code span: a run of backticks closed by a run of the same length (CommonMark), on one line.
_INLINE_CODE = re.compile(r"(?<!`)(`+)(?!`)[^\n]*?(?<!`)\1(?!`)")
_NOT_NEWLINE = re.compile(r"[^\n]")
MAX_LINKS_PER_CHUNK = 64
MAX_TAGS = 64


def prose(text: str) -> str:
    """text with its code (fenced blocks, inline spans) blanked out: same length, same lines.

    Offsets into the result are offsets into text, so a link found in it has its line."""
    lines = text.split("\n")
    fence: str | None = None
    for i, line in enumerate(lines):
        if fence is not None:
            if closes_fence(line, fence):
                fence = None
            lines[i] = " " * len(line)
        elif opening := fence_opening(line):
            fence = opening
            lines[i] = " " * len(line)
    return _INLINE_CODE.sub(lambda m: _NOT_NEWLINE.sub(" ", m.group()), "\n".join(lines))


def note_links(text: str, first_line: int = 1) -> list[NoteLink]:
    """The links in a chunk of Markdown whose first line is `first_line`, in order.

    Wiki links and embeds name a note or file (`[[Deploy]]`, `[[ops/Deploy#Rollback]]`);
    Markdown links count when they point into the vault (no URL scheme, not `#heading`).
    A link to the note itself by heading only (`[[#Rollback]]`) is not a link to another
    note, and is left out."""
    blanked = prose(text)
    found = sorted(_links(blanked), key=lambda item: item[0])
    out = []
    for offset, target, embed in found[:MAX_LINKS_PER_CHUNK]:
        out.append(NoteLink(target, first_line + blanked.count("\n", 0, offset), embed))
    return out


def _links(text: str) -> Iterator[tuple[int, str, bool]]:
    for match in _WIKI_LINK.finditer(text):
        target = match.group(2).strip()
        if target:
            yield match.start(), target, bool(match.group(1))
    for match in _MD_LINK.finditer(text):
        raw = (match.group(2) or match.group(3) or "").strip()
        if not raw or raw.startswith("#") or _SCHEME.match(raw):
            continue
        target = unquote(raw.split("#", 1)[0]).strip()
        if target:
            yield match.start(), target, bool(match.group(1))


def wiki_link_paths(text: str, note_path: str) -> set[str]:
    """Paths a chunk's wiki links may name, relative to the vault (= the source root).

    Obsidian writes a link as the vault path, the path relative to the note, or the
    shortest path that is unique in the vault (the bare name, when it is); `[[Name]]`
    means `Name.md`. The vault path, the note-relative path and "**/Name.md" (the one
    path ending so, found at search time: search.hits) are all kept: the reference
    signal keeps whichever exists.
    """
    note_dir = posixpath.dirname(note_path)
    found: set[str] = set()
    for match in _WIKI_LINK.finditer(prose(text)):
        target = match.group(2).strip().lstrip("/")
        if not target or target.startswith("../") or "/../" in target:
            continue
        target = with_note_extension(target)
        found.add(posixpath.normpath(target))
        found.add(ANYWHERE + posixpath.normpath(target))
        if note_dir:
            found.add(posixpath.normpath(posixpath.join(note_dir, target)))
        if len(found) >= MAX_LINKS_PER_CHUNK:
            break
    return found


def with_note_extension(target: str) -> str:
    """`Deploy` means `Deploy.md`, as in Obsidian; a name with a known file type stays."""
    if classify(target) is None and not posixpath.splitext(target)[1]:
        return target + ".md"
    return target


def inline_tags(text: str) -> tuple[str, ...]:
    """Inline `#tags` in order, lower case; a nested `#a/b` also counts as `a` (as Obsidian's search does)."""
    seen: dict[str, None] = {}
    for match in _TAG.finditer(prose(text)):
        for tag in with_parents(match.group(1).lower()):
            seen.setdefault(tag, None)
        if len(seen) >= MAX_TAGS:
            break
    return tuple(seen)
