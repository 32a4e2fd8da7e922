"""Documents, their chunks, references, skipped files and git state in the team store.

A document and its chunks are replaced in one transaction, so an indexer killed (or a
connection lost) in the middle of a document leaves the store exactly as it was before
that document: PostgreSQL rolls the open transaction back.  Chunk rows are written with
one multi-row statement per document: the statement-level triggers then update the
word statistics once per document, not once per chunk.
"""

from __future__ import annotations

import json

from kenning.core.fsnames import part_number
from kenning.core.records import Record
from kenning.core.types import ChunkDraft, Document, NoteLink, SkippedFile
from kenning.storage.postgres.connection import PgStore, clean_str
from kenning.storage.postgres.schema import LOCK_SPACE, WRITE_LOCK
from kenning.storage.postgres.words import Words, indexed_title


def clean_text(text: str) -> str:
    """Text PostgreSQL (and the tokenizer) can take: NUL and lone surrogates become U+FFFD."""
    return clean_str(text)


def write_lock(store: PgStore) -> None:
    """Take the store's write lock for the open transaction (see schema.py)."""
    store.execute("SELECT pg_advisory_xact_lock(%s, %s)", (LOCK_SPACE, WRITE_LOCK))


class KnownDocument(Record, frozen=True):
    rel_path: str
    id: int
    sha256: str
    size: int
    mtime: float
    chunking_version: int


def known_documents(store: PgStore, source_id: int) -> dict[str, KnownDocument]:
    rows = store.fetch(
        KnownDocument,
        "SELECT rel_path, id, sha256, size, mtime, chunking_version FROM documents WHERE source_id = %s",
        (source_id,),
    )
    return {row.rel_path: row for row in rows}


def _encode_tags(tags: tuple[str, ...]) -> str:
    return f" {' '.join(tags)} " if tags else ""


def replace_document(
    store: PgStore,
    record: Document,
    chunks: list[ChunkDraft],
    refs: dict[int, set[str]],
    embed_shas: dict[int, str],
    links: dict[int, list[NoteLink]] | None = None,
) -> int:
    """Write a document and its chunks in one transaction; return the document id
    (refs, embed_shas, links: by chunk ord, as storage.documents.replace_document)."""
    with store.atomic():
        write_lock(store)
        doc_id = _upsert_document(store, record)
        store.execute("DELETE FROM chunks WHERE document_id = %s", (doc_id,))
        ids = _insert_chunks(store, doc_id, chunks, embed_shas, record.title_words)
        ref_rows = [(ids[d.ord], path) for d in chunks for path in sorted(refs.get(d.ord, ()))]
        if ref_rows:
            store.execute(
                "INSERT INTO chunk_refs (chunk_id, path) SELECT * FROM unnest(%s::bigint[], %s::text[])"
                " ON CONFLICT DO NOTHING",
                ([r[0] for r in ref_rows], [clean_text(r[1]) for r in ref_rows]),
            )
        _write_links(store, doc_id, record, ids, links or {})
    return doc_id


def _write_links(
    store: PgStore, doc_id: int, record: Document, ids: dict[int, int], links: dict[int, list[NoteLink]]
) -> None:
    store.execute("DELETE FROM document_aliases WHERE document_id = %s", (doc_id,))
    if record.aliases:
        store.execute(
            "INSERT INTO document_aliases (document_id, alias) SELECT %s, a FROM unnest(%s::text[]) a"
            " ON CONFLICT DO NOTHING",
            (doc_id, [clean_text(a) for a in record.aliases]),
        )
    rows = [
        (ids[ord_], n, clean_text(link.target), link.line, int(link.embed))
        for ord_, found in links.items()
        if ord_ in ids
        for n, link in enumerate(found)
    ]
    if rows:
        store.execute(
            "INSERT INTO chunk_links (chunk_id, ord, target, line, embed)"
            " SELECT * FROM unnest(%s::bigint[], %s::int[], %s::text[], %s::int[], %s::int[])",
            tuple([r[i] for r in rows] for i in range(5)),
        )


def _upsert_document(store: PgStore, r: Document) -> int:
    values = (
        r.source_id,
        clean_text(r.rel_path),
        r.sha256,
        r.size,
        r.mtime,
        r.created_at,
        r.updated_at,
        r.kind,
        clean_text(r.title),
        clean_text(_encode_tags(r.tags)),
        r.ext,
        bool(r.is_test),
        clean_text(r.meta),
        r.chunking_version,
    )
    return int(
        store.scalar(
            "INSERT INTO documents (source_id, rel_path, sha256, size, mtime, created_at, updated_at, kind, title,"
            " tags, ext, is_test, meta, chunking_version) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"
            " ON CONFLICT (source_id, rel_path) DO UPDATE SET sha256 = excluded.sha256, size = excluded.size,"
            " mtime = excluded.mtime, created_at = excluded.created_at, updated_at = excluded.updated_at,"
            " kind = excluded.kind, title = excluded.title, tags = excluded.tags, ext = excluded.ext,"
            " is_test = excluded.is_test, meta = excluded.meta, chunking_version = excluded.chunking_version,"
            " opening_sha = NULL"  # new chunks: the opening is looked at again
            " RETURNING id",
            values,
        )
    )


CHUNK_COLUMNS = (
    "document_id, ord, title, kind, text, line_start, line_end, input_sha, doc_words, location,"
    " words, tf, tf_big, word_count, grams, gram_count"
)


def chunk_values(words: Words, doc_id: int, draft: ChunkDraft, embed_sha: str, doc_words: str) -> tuple[object, ...]:
    """A chunk's stored values in CHUNK_COLUMNS order (its text cleaned, its words
    tokenized): what the writer inserts, and what a bulk load copies (doc_words cleaned)."""
    title, text = clean_text(draft.title), clean_text(draft.text)
    w = words.chunk_words(indexed_title(title, doc_words), text)
    return (
        doc_id,
        draft.ord,
        title,
        draft.kind,
        text,
        draft.line_start,
        draft.line_end,
        embed_sha,
        doc_words,
        clean_text(draft.location),
        w.words,
        w.tf,
        w.tf_big,
        w.word_count,
        w.grams,
        w.gram_count,
    )


_ROW_TYPES = (
    "document_id bigint, ord int, title text, kind text, text text, line_start int, line_end int, input_sha text,"
    " doc_words text, location text, words text, tf text, tf_big text, word_count int, grams text[], gram_count int"
)
_ROW_KEYS = tuple(part.split()[0] for part in _ROW_TYPES.split(","))


def _insert_chunks(
    store: PgStore, doc_id: int, drafts: list[ChunkDraft], embed_shas: dict[int, str], doc_words: str
) -> dict[int, int]:
    """Insert the chunks in one statement; ord -> new chunk id.

    The rows travel as one JSON text (json_to_recordset): encoded by the json module in
    C and read by the server in C, where a text[] of thousands of trigrams a row, sent
    as an array parameter, was dumped element by element in Python.  Every value is
    already clean text (chunk_values), so the one parameter holds no NUL and no lone
    surrogate."""
    if not drafts:
        return {}
    doc_words = clean_text(doc_words)
    rows = [dict(zip(_ROW_KEYS, chunk_values(store.words, doc_id, d, embed_shas[d.ord], doc_words))) for d in drafts]
    found = store.execute(
        f"INSERT INTO chunks ({CHUNK_COLUMNS})"
        " SELECT r.document_id, r.ord, r.title, r.kind, r.text, r.line_start, r.line_end, r.input_sha, r.doc_words,"
        " r.location, r.words::tsvector, r.tf::jsonb, r.tf_big::jsonb, r.word_count, r.grams, r.gram_count"
        f" FROM json_to_recordset(%s::json) AS r({_ROW_TYPES})"
        " RETURNING ord, id",
        (json.dumps(rows, ensure_ascii=False),),
    )
    return {int(ord_): int(cid) for ord_, cid in found}


def touch_document(store: PgStore, doc_id: int, mtime: float) -> None:
    with store.atomic():
        write_lock(store)
        store.execute("UPDATE documents SET mtime = %s WHERE id = %s", (mtime, doc_id))


def delete_documents(store: PgStore, doc_ids: list[int]) -> None:
    if not doc_ids:
        return
    with store.atomic():
        write_lock(store)
        store.execute("DELETE FROM documents WHERE id = ANY(%s)", (list(doc_ids),))


def delete_parts_after(store: PgStore, source_id: int, container: str, count: int) -> int:
    prefix = container + "#"
    rows = store.execute(
        "SELECT id, rel_path FROM documents WHERE source_id = %s AND left(rel_path, %s) = %s",
        (source_id, len(prefix), prefix),
    )
    numbers = ((doc_id, part_number(container, rel)) for doc_id, rel in rows)
    gone = [doc_id for doc_id, number in numbers if number is not None and number > count]
    delete_documents(store, gone)
    return len(gone)


def update_skipped(store: PgStore, source_id: int, checked: set[str], skipped: list[SkippedFile]) -> None:
    """The watcher's share of the list (the SQLite store's documents.update_skipped)."""
    with store.atomic():
        write_lock(store)
        if checked:
            store.execute(
                "DELETE FROM skipped_files WHERE source_id = %s AND rel_path = ANY(%s::text[])",
                (source_id, [clean_text(r) for r in checked]),
            )
        latest = {s.rel_path: s for s in skipped}
        if latest:
            store.execute(
                "INSERT INTO skipped_files (source_id, rel_path, reason, detail)"
                " SELECT %s, * FROM unnest(%s::text[], %s::text[], %s::text[])"
                " ON CONFLICT (source_id, rel_path) DO UPDATE SET reason = excluded.reason, detail = excluded.detail",
                (
                    source_id,
                    [clean_text(s.rel_path) for s in latest.values()],
                    [s.reason for s in latest.values()],
                    [clean_text(s.detail) for s in latest.values()],
                ),
            )


def replace_skipped(store: PgStore, source_id: int, skipped: list[SkippedFile]) -> None:
    with store.atomic():
        write_lock(store)
        store.execute("DELETE FROM skipped_files WHERE source_id = %s", (source_id,))
        latest = {s.rel_path: s for s in skipped}
        if latest:
            store.execute(
                "INSERT INTO skipped_files (source_id, rel_path, reason, detail)"
                " SELECT %s, * FROM unnest(%s::text[], %s::text[], %s::text[])",
                (
                    source_id,
                    [clean_text(s.rel_path) for s in latest.values()],
                    [s.reason for s in latest.values()],
                    [clean_text(s.detail) for s in latest.values()],
                ),
            )


def skipped_files(store: PgStore, source_id: int | None = None) -> list[tuple[str, SkippedFile]]:
    sql = "SELECT s.name, k.rel_path, k.reason, k.detail FROM skipped_files k JOIN sources s ON s.id = k.source_id"
    params: tuple[int, ...] = ()
    if source_id is not None:
        sql += " WHERE k.source_id = %s"
        params = (source_id,)
    rows = store.execute(sql + " ORDER BY s.name, k.rel_path", params)
    return [(name, SkippedFile(rel, reason, detail)) for name, rel, reason, detail in rows]


def document_kind(store: PgStore, source_name: str, rel_path: str) -> str | None:
    kind = store.scalar(
        "SELECT d.kind FROM documents d JOIN sources s ON s.id = d.source_id WHERE s.name = %s AND d.rel_path = %s",
        (source_name, rel_path),
    )
    return None if kind is None else str(kind)


def document_lines(store: PgStore, source_name: str, rel_path: str) -> list[tuple[int, str]]:
    """(line_start, text) of a document's chunks in order (the text is rebuilt from them above)."""
    rows = store.execute(
        "SELECT c.line_start, c.text FROM chunks c JOIN documents d ON d.id = c.document_id"
        " JOIN sources s ON s.id = d.source_id WHERE s.name = %s AND d.rel_path = %s ORDER BY c.ord",
        (source_name, rel_path),
    )
    return [(int(a), str(b)) for a, b in rows]


def replace_git_paths(store: PgStore, source_id: int, last_commit: dict[str, float | None]) -> None:
    with store.atomic():
        write_lock(store)
        store.execute("DELETE FROM git_recent WHERE source_id = %s", (source_id,))
        if last_commit:
            store.execute(
                "INSERT INTO git_recent (source_id, path, last_commit)"
                " SELECT %s, * FROM unnest(%s::text[], %s::float8[])",
                (source_id, [clean_text(p) for p in last_commit], list(last_commit.values())),
            )


def git_path_times(store: PgStore, paths: list[str]) -> dict[str, float | None]:
    rows = store.execute(
        "SELECT path, max(last_commit) FROM git_recent WHERE path = ANY(%s) GROUP BY path", (list(paths),)
    )
    return {p: w for p, w in rows}


def source_path_times(store: PgStore, source_id: int, paths: list[str]) -> dict[str, float | None]:
    rows = store.execute(
        "SELECT path, last_commit FROM git_recent WHERE source_id = %s AND path = ANY(%s)", (source_id, list(paths))
    )
    return {p: w for p, w in rows}
