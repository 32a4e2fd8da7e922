"""Definitions: a code chunk that defines the identifier the query names outranks the
chunks that only use it (issue #28 item 6).

Code search ranks a symbol's definition above its uses (Zoekt, the engine behind
Sourcegraph's code search, scores a match in a symbol's definition above one in plain
content).  Kenning's code chunker titles each chunk with the symbols it defines
("progressbar/bar.py: class ProgressBar", "cli/decorators.py: pass_context, pass_obj",
"progressbar/bar.py: ProgressBar.update"), so a chunk defines a query word when one of
its symbols is that word, whole or as the last part of a qualified name, ignoring case:
`progressbar` is defined by `class ProgressBar`, `update` by `ProgressBar.update`.

Such chunks, among the first DEPTH of each keyword list, form one more list,
"definition", each scoring 1 with weight WEIGHT (the setting `weights` may change it),
as strong as the keyword list's first place: a use that the other lists rank first
cannot outscore the definition by more than the other lists' spread.  The list exists
only for a query that names a defined symbol, so prose (every quality collection) never
sees it.
"""

from __future__ import annotations

from collections.abc import Iterable

from kenning.storage.api import ChunkRow, Ranked

LIST = "definition"
WEIGHT = 1.0
DEPTH = 30  # how far down each keyword list a definition is looked for (its title holds the word)
ELISION = "…"  # what the chunker writes after the symbols it left out of a title


def defined_names(row: ChunkRow) -> set[str]:
    """The names a code chunk defines, lower-cased: each symbol whole and its last part."""
    if row.kind != "code":
        return set()
    prefix = f"{row.rel_path}: "
    if not row.title.startswith(prefix):
        return set()
    names: set[str] = set()
    for symbol in row.title[len(prefix) :].split(", "):
        parts = symbol.strip().split()
        if not parts or parts[-1] == ELISION or parts[-1].startswith("["):  # an ini section is no identifier
            continue
        name = parts[-1].lower()
        names.update({name, name.rsplit(".", 1)[-1]})
    return names


def defining(rows: Iterable[ChunkRow], words: Iterable[str]) -> list[Ranked]:
    """The chunks among rows that define one of the words, in chunk id order (they tie)."""
    wanted = {w.lower() for w in words}
    if not wanted:
        return []
    return [Ranked(cid, 1.0) for cid in sorted(row.chunk_id for row in rows if defined_names(row) & wanted)]
