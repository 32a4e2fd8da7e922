"""The rows the link graph is made of: notes, their aliases, the links they make as written.

Nothing is resolved here (which note `[[Deploy]]` names is Obsidian's rule, applied in
kenning.workspace.links); only documents of enabled sources are returned.
"""

from __future__ import annotations

from kenning import TYPE_CHECKING
from kenning.core.fsnames import filesystem_name
from kenning.storage.api import ChunkText, LinkRow, NoteRow
from kenning.storage.batching import in_batches
from kenning.storage.connection import Store
from kenning.storage.ftsquery import fts_string

if TYPE_CHECKING:
    from typing import Any


def _note_row(**columns: Any) -> NoteRow:
    columns["root"] = filesystem_name(columns["root"])  # stored as a name (storage.sources.insert_source)
    return NoteRow(**columns)


def notes(store: Store) -> list[NoteRow]:
    """Every document of an enabled source (links may name any file, not only notes)."""
    return store.fetch(
        _note_row,
        "SELECT d.id, d.source_id, s.name AS source, s.root, d.rel_path, d.title, d.kind"
        " FROM documents d JOIN sources s ON s.id = d.source_id WHERE s.enabled = 1 ORDER BY d.id",
    )


def aliases(store: Store) -> list[tuple[int, str]]:
    """(document id, alias) for every alias of a document of an enabled source."""
    rows = store.execute(
        "SELECT a.document_id, a.alias FROM document_aliases a JOIN documents d ON d.id = a.document_id"
        " JOIN sources s ON s.id = d.source_id WHERE s.enabled = 1 ORDER BY a.document_id, a.alias"
    )
    return [(int(doc), str(alias)) for doc, alias in rows]


def links(store: Store) -> list[LinkRow]:
    """Every link of every note of an enabled source, in reading order."""
    return store.fetch(
        LinkRow,
        "SELECT c.document_id, l.chunk_id, l.target, l.line, l.embed FROM chunk_links l"
        " JOIN chunks c ON c.id = l.chunk_id JOIN documents d ON d.id = c.document_id"
        " JOIN sources s ON s.id = d.source_id WHERE s.enabled = 1 ORDER BY c.document_id, l.line, l.ord",
    )


def chunk_texts(store: Store, chunk_ids: list[int]) -> dict[int, ChunkText]:
    out: dict[int, ChunkText] = {}
    for part, marks in in_batches(sorted(set(chunk_ids))):
        for row in store.fetch(
            ChunkText, f"SELECT id AS chunk_id, document_id, line_start, text FROM chunks WHERE id IN ({marks})", part
        ):
            out[row.chunk_id] = row
    return out


def chunks_saying(store: Store, words: str, source_id: int, limit: int) -> list[ChunkText]:
    """Chunks of one source the word index finds `words` in, side by side (candidates:
    the caller checks the exact wording), in document order."""
    return store.fetch(
        ChunkText,
        "SELECT c.id AS chunk_id, c.document_id, c.line_start, c.text FROM chunks_fts f"
        " JOIN chunks c ON c.id = f.rowid JOIN documents d ON d.id = c.document_id"
        " WHERE chunks_fts MATCH ? AND d.source_id = ? ORDER BY c.document_id, c.ord LIMIT ?",
        (fts_string(words), source_id, limit),
    )
