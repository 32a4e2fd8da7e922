"""What an Obsidian vault's notes say beyond Markdown: `[[wiki links]]` and inline `#tags`.

Links become repository paths a chunk mentions (the git signal's references, like a
written `src/auth.ts`); inline tags join the front matter's, so `tag:` finds both.
Code (fenced blocks, inline spans) is left out: `#include` or `a[[0]]` there is code.
"""

from __future__ import annotations

import posixpath
import re

from kenning.ingest.filetypes import classify
from kenning.storage.gitstate import ANYWHERE

# [[target]], [[target|alias]], [[target#heading]], ![[embedded.png]]
_WIKI_LINK = re.compile(r"\[\[([^\[\]|#^\n]+)(?:[#^][^\[\]|\n]*)?(?:\|[^\[\]\n]*)?\]\]")
# Obsidian's tag: after a space or a line start, letters/digits/_/-// with one non-digit.
_TAG = re.compile(r"(?:(?<=\s)|^)#([\w/\-]*[^\W\d][\w/\-]*)", re.MULTILINE)
_FENCE = re.compile(r"^(```|~~~).*?^\1[^\n]*$", re.MULTILINE | re.DOTALL)
_INLINE_CODE = re.compile(r"`[^`\n]*`")
MAX_LINKS_PER_CHUNK = 64
MAX_TAGS = 64


def _prose(text: str) -> str:
    return _INLINE_CODE.sub(" ", _FENCE.sub(" ", text))


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
    for match in _WIKI_LINK.finditer(_prose(text)):
        target = match.group(1).strip().lstrip("/")
        if not target or target.startswith("../") or "/../" in target:
            continue
        if classify(target) is None and not posixpath.splitext(target)[1]:
            target += ".md"
        found.add(posixpath.normpath(target))
        found.add(ANYWHERE + posixpath.normpath(target))
        if note_dir:
            found.add(posixpath.normpath(posixpath.join(note_dir, target)))
        if len(found) >= MAX_LINKS_PER_CHUNK:
            break
    return found


def inline_tags(text: str) -> tuple[str, ...]:
    """Inline `#tags` in order, lower case; a nested `#a/b` also counts as `a` (as Obsidian's search does)."""
    seen: dict[str, None] = {}
    for match in _TAG.finditer(_prose(text)):
        tag = match.group(1).strip("/").lower()
        parts = [p for p in tag.split("/") if p]
        for depth in range(1, len(parts) + 1):
            seen.setdefault("/".join(parts[:depth]), None)
        if len(seen) >= MAX_TAGS:
            break
    return tuple(seen)
