"""Repository paths a chunk's text mentions (`src/lib/auth.ts`, `./app/search/fusion.py`).

Candidates are stored as written; whether they exist in a linked repository is decided
at search time against the git paths table, so linking a repo later needs no re-index.
"""

from __future__ import annotations

import re

from kenning.ingest.filetypes import classify

_PATH = re.compile(
    r"(?<![\w/.\-])"  # not in the middle of a longer token or URL path
    r"(?:\./)?"  # optional leading ./
    r"((?:[\w\-.]+/)*[\w\-][\w\-.]*\.[A-Za-z0-9]{1,10})"
    r"(?![\w/\-])"
)
MAX_REFS_PER_CHUNK = 64


def mentioned_paths(text: str) -> set[str]:
    """Path-like tokens: with a folder part, or a bare file name of a known file type."""
    found: set[str] = set()
    for match in _PATH.finditer(text):
        path = match.group(1).rstrip(".")
        if path.startswith("../") or "/../" in path:
            continue
        if "/" in path or classify(path) is not None:
            found.add(path)
        if len(found) >= MAX_REFS_PER_CHUNK:
            break
    return found
