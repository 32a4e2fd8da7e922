"""Documents, their chunks, references, skipped files and git state in the team store.

A document and its chunks are replaced in one transaction, so an indexer killed (or a
connection lost) in the middle of a document leaves the store exactly as it was before
that document: PostgreSQL rolls the open transaction back.  Chunk rows are written with
one multi-row statement per document: the statement-level triggers then update the
word statistics once per document, not once per chunk.
"""

from __future__ import annotations

from dataclasses import dataclass

from kenning.core.fsnames import part_number
from kenning.core.types import ChunkDraft, Document, NoteLink, SkippedFile
from kenning.storage.postgres.connection import PgStore, clean_str
from kenning.storage.postgres.schema import LOCK_SPACE, WRITE_LOCK
from kenning.storage.postgres.words import indexed_title


def clean_text(text: str) -> str:
    """Text PostgreSQL (and the tokenizer) can take: NUL and lone surrogates become U+FFFD."""
    return clean_str(text)


def write_lock(store: PgStore) -> None:
    """Take the store's write lock for the open transaction (see schema.py)."""
    store.execute("SELECT pg_advisory_xact_lock(%s, %s)", (LOCK_SPACE, WRITE_LOCK))


@dataclass(frozen=True)
class KnownDocument:
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
            " is_test = excluded.is_test, meta = excluded.meta, chunking_version = excluded.chunking_version"
            " RETURNING id",
            values,
        )
    )


_CHUNK_COLUMNS = (
    "document_id, ord, title, kind, text, line_start, line_end, input_sha, doc_words, location,"
    " words, tf, tf_big, word_count, grams, gram_count"
)


def _insert_chunks(
    store: PgStore, doc_id: int, drafts: list[ChunkDraft], embed_shas: dict[int, str], doc_words: str
) -> dict[int, int]:
    """Insert the chunks in one statement; ord -> new chunk id."""
    if not drafts:
        return {}
    doc_words = clean_text(doc_words)
    columns: list[list[object]] = [[] for _ in range(17)]
    grams: list[str] = []  # every row's trigrams, one after the other (a row's are a slice)
    for d in drafts:
        title, text = clean_text(d.title), clean_text(d.text)
        w = store.words.chunk_words(indexed_title(title, doc_words), text)
        row = (
            doc_id,
            d.ord,
            title,
            d.kind,
            text,
            d.line_start,
            d.line_end,
            embed_shas[d.ord],
            doc_words,
            clean_text(d.location),
            w.words,
            w.tf,
            w.tf_big,
            w.word_count,
            w.gram_count,
            len(grams) + 1,  # where its trigrams start and end in `grams` (1-based, inclusive)
            len(grams) + len(w.grams),
        )
        for column, value in zip(columns, row):
            column.append(value)
        grams.extend(w.grams)
    types = [
        "bigint[]", "int[]", "text[]", "text[]", "text[]", "int[]", "int[]", "text[]", "text[]", "text[]",
        "text[]", "text[]", "text[]", "int[]", "int[]", "int[]", "int[]",
    ]  # fmt: skip
    # Binary parameters (%b): a text[] of thousands of trigrams is not escaped element by element.
    select = ", ".join(f"%b::{t}" for t in types)
    rows = store.execute(
        f"INSERT INTO chunks ({_CHUNK_COLUMNS})"
        " SELECT u.c1, u.c2, u.c3, u.c4, u.c5, u.c6, u.c7, u.c8, u.c9, u.c10, u.c11::tsvector, u.c12::jsonb,"
        " u.c13::jsonb, u.c14, coalesce(g.all[u.g_from:u.g_to], '{}'), u.c15"
        f" FROM unnest({select}) AS u(c1, c2, c3, c4, c5, c6, c7, c8, c9, c10, c11, c12, c13, c14, c15, g_from, g_to),"
        " (SELECT %b::text[] AS all) g"
        " RETURNING ord, id",
        (*columns, grams),
    )
    return {int(ord_): int(cid) for ord_, cid in rows}


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
