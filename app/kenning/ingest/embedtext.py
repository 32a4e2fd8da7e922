"""What the model reads for a chunk: its text, preceded by its place in the document.

A chunk cut from the middle of a long section no longer says what it is about; its
heading path (or, for code, its symbol) does.  Lexical search gets the same context
from the FTS title column.  File names are left out on purpose: moving a file must
not make its unchanged text look new to the embedding cache.
"""

from __future__ import annotations

import hashlib
from pathlib import PurePosixPath

from kenning.ingest.filetypes import is_code

# Store setting: "off" makes the model read each chunk's text alone (the quality
# benchmark's ablation of the heading context).  Changing it re-embeds only chunks
# indexed afterwards.
CONTEXT_SETTING = "embedding_context"


def embedding_input(
    title: str, text: str, doc_kind: str, rel_path: str, contextual: bool = True, names: str = ""
) -> str:
    """`names`: what a note's front matter calls it (title, aliases, tags: chunks.doc_words,
    which the keyword index reads as title words too), read before the heading path: a
    search for a note's alias finds it by meaning as well as by its words."""
    if not contextual:
        return text
    if names and doc_kind == "markdown":
        return f"{names}\n{_with_context(title, text, doc_kind, rel_path)}"
    return _with_context(title, text, doc_kind, rel_path)


def _with_context(title: str, text: str, doc_kind: str, rel_path: str) -> str:
    context = _context(title, doc_kind)
    if context == PurePosixPath(rel_path).stem:
        return text  # a heading-less note is titled by its file name: no context
    if not context:
        return text
    first_line = text.lstrip().split("\n", 1)[0].lstrip("#").strip()
    if first_line == context:
        return text
    return f"{context}\n{text}"


def _context(title: str, doc_kind: str) -> str:
    if doc_kind == "markdown":
        return title
    if is_code(doc_kind) and ": " in title:
        return title.split(": ", 1)[1]  # the symbol, without the file path
    return ""


# A document's opening: what the model reads of its start.  Its first chunk, read on into
# the chunks after it while it is shorter than this many characters (cut at a word's end);
# a first chunk this long or longer is its opening as it is.  The vector list can score a
# chunk with its document's opening too (search.engine.OPENING_WEIGHTS: in vector mode; Dai
# and Callan's FirstP beside MaxP): docs/architecture.md §6, issue #28 rounds nine to eleven.
OPENING_CHARS = 1000
OPENING_PARTS = 8  # chunks read for it at most (a chunk is never empty)


def has_opening(doc_kind: str, chunk_count: int) -> bool:
    """Prose cut in more than one chunk.  A one-chunk document's opening is its chunk; code's
    is its imports (and no code collection measured it)."""
    return chunk_count > 1 and not is_code(doc_kind)


def opening_input(
    parts: tuple[tuple[str, str], ...], doc_kind: str, rel_path: str, contextual: bool = True, names: str = ""
) -> str:
    """What the model reads for a document's opening, from its first chunks' (title, text)."""
    title, text = parts[0]
    for _, more in parts[1:]:
        room = OPENING_CHARS - len(text) - 1
        if room <= 0:
            break
        if len(more) > room:
            cut = more[: room + 1]
            more = cut[: cut.rfind(" ")].rstrip() if " " in cut.strip() else ""
            if not more:
                break
        text = f"{text}\n{more}"
    return embedding_input(title, text, doc_kind, rel_path, contextual, names)


def input_sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
