"""Named schema migrations, applied in order, each in its own transaction."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import apsw

from kenning.core.cjk import BMP_RANGE
from kenning.core.errors import StoreUnusable
from kenning.storage.connection import Store, unusable


def m001_initial(store: Store) -> None:
    store.conn.execute(
        """
        CREATE TABLE sources (
            id INTEGER PRIMARY KEY,
            kind TEXT NOT NULL CHECK (kind IN ('folder', 'git')),
            root TEXT NOT NULL UNIQUE,
            name TEXT NOT NULL UNIQUE,
            include_globs TEXT NOT NULL DEFAULT '[]',
            exclude_globs TEXT NOT NULL DEFAULT '[]',
            enabled INTEGER NOT NULL DEFAULT 1,
            added_at REAL NOT NULL,
            last_indexed_at REAL
        );
        CREATE TABLE documents (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            source_id INTEGER NOT NULL REFERENCES sources(id) ON DELETE CASCADE,
            rel_path TEXT NOT NULL,
            sha256 TEXT NOT NULL,
            size INTEGER NOT NULL,
            mtime REAL NOT NULL,
            created_at REAL,
            updated_at REAL,
            kind TEXT NOT NULL,
            title TEXT NOT NULL,
            tags TEXT NOT NULL DEFAULT '',      -- ' tag1 tag2 ' so instr() matches whole tags
            ext TEXT NOT NULL DEFAULT '',
            is_test INTEGER NOT NULL DEFAULT 0,
            UNIQUE (source_id, rel_path)
        );
        -- AUTOINCREMENT: a chunk id is never reused, so a stale id held by a GUI or an
        -- orphaned vector can never point at someone else's text.
        CREATE TABLE chunks (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            document_id INTEGER NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
            ord INTEGER NOT NULL,
            title TEXT NOT NULL,
            kind TEXT NOT NULL,
            text TEXT NOT NULL,
            line_start INTEGER NOT NULL,
            line_end INTEGER NOT NULL,
            input_sha TEXT NOT NULL,           -- sha256 of what the model reads (embedtext.py)
            vector_fp TEXT                      -- fingerprint of its current vector, NULL = pending
        );
        CREATE INDEX chunks_by_document ON chunks(document_id, ord);
        CREATE INDEX chunks_pending ON chunks(id) WHERE vector_fp IS NULL;
        CREATE INDEX chunks_by_input_sha ON chunks(input_sha);

        CREATE VIRTUAL TABLE chunks_fts USING fts5(
            title, text, content='chunks', content_rowid='id', tokenize='porter unicode61'
        );
        CREATE VIRTUAL TABLE chunks_tri USING fts5(
            title, text, content='chunks', content_rowid='id', tokenize='trigram'
        );
        CREATE VIRTUAL TABLE chunks_vocab USING fts5vocab(chunks_fts, 'row');

        CREATE TRIGGER chunks_ai AFTER INSERT ON chunks BEGIN
            INSERT INTO chunks_fts(rowid, title, text) VALUES (new.id, new.title, new.text);
            INSERT INTO chunks_tri(rowid, title, text) VALUES (new.id, new.title, new.text);
        END;
        CREATE TRIGGER chunks_ad AFTER DELETE ON chunks BEGIN
            INSERT INTO chunks_fts(chunks_fts, rowid, title, text)
                VALUES ('delete', old.id, old.title, old.text);
            INSERT INTO chunks_tri(chunks_tri, rowid, title, text)
                VALUES ('delete', old.id, old.title, old.text);
            INSERT INTO vector_tombstones(chunk_id) VALUES (old.id);
        END;
        CREATE TRIGGER chunks_au AFTER UPDATE OF title, text ON chunks BEGIN
            INSERT INTO chunks_fts(chunks_fts, rowid, title, text)
                VALUES ('delete', old.id, old.title, old.text);
            INSERT INTO chunks_tri(chunks_tri, rowid, title, text)
                VALUES ('delete', old.id, old.title, old.text);
            INSERT INTO chunks_fts(rowid, title, text) VALUES (new.id, new.title, new.text);
            INSERT INTO chunks_tri(rowid, title, text) VALUES (new.id, new.title, new.text);
        END;

        -- The vec0 table may be unusable when sqlite-vec fails to load, so a trigger
        -- cannot delete from it; deleted chunk ids wait here for the vector store.
        CREATE TABLE vector_tombstones (chunk_id INTEGER PRIMARY KEY);

        -- Embedding cache: unchanged text is never embedded twice, whatever file it moves to.
        CREATE TABLE embeddings (
            fingerprint TEXT NOT NULL,
            input_sha TEXT NOT NULL,
            vector BLOB NOT NULL,
            PRIMARY KEY (fingerprint, input_sha)
        ) WITHOUT ROWID;

        CREATE TABLE chunk_refs (
            chunk_id INTEGER NOT NULL REFERENCES chunks(id) ON DELETE CASCADE,
            path TEXT NOT NULL,
            PRIMARY KEY (chunk_id, path)
        ) WITHOUT ROWID;
        CREATE INDEX chunk_refs_by_path ON chunk_refs(path);

        CREATE TABLE git_recent (
            source_id INTEGER NOT NULL REFERENCES sources(id) ON DELETE CASCADE,
            path TEXT NOT NULL,                 -- every file git lists now
            last_commit REAL,                   -- NULL: never committed (untracked)
            PRIMARY KEY (source_id, path)
        ) WITHOUT ROWID;

        CREATE TABLE skipped_files (
            source_id INTEGER NOT NULL REFERENCES sources(id) ON DELETE CASCADE,
            rel_path TEXT NOT NULL,
            reason TEXT NOT NULL,
            detail TEXT NOT NULL DEFAULT '',
            PRIMARY KEY (source_id, rel_path)
        ) WITHOUT ROWID;

        CREATE TABLE settings (key TEXT PRIMARY KEY, value TEXT NOT NULL);
        """
    )


# What the full-text tables index as a chunk's title: its own title (heading path or
# file + symbol) and its document's front-matter title and tags, so those are words
# every chunk of the note can be found by, weighted like a title.
_INDEXED_TITLE = "CASE WHEN {row}.doc_words = '' THEN {row}.title ELSE {row}.title || char(10) || {row}.doc_words END"


def _fts_triggers() -> str:
    new, old = _INDEXED_TITLE.format(row="new"), _INDEXED_TITLE.format(row="old")
    add = "INSERT INTO {t}(rowid, title, text) VALUES (new.id, " + new + ", new.text);"
    remove = "INSERT INTO {t}({t}, rowid, title, text) VALUES ('delete', old.id, " + old + ", old.text);"

    def both(sql: str) -> str:
        return "\n".join(sql.format(t=t) for t in ("chunks_fts", "chunks_tri"))

    return f"""
        CREATE TRIGGER chunks_ai AFTER INSERT ON chunks BEGIN
            {both(add)}
        END;
        CREATE TRIGGER chunks_ad AFTER DELETE ON chunks BEGIN
            {both(remove)}
        END;
        CREATE TRIGGER chunks_au AFTER UPDATE OF title, text, doc_words ON chunks BEGIN
            {both(remove)}
            {both(add)}
        END;
    """


def m002_front_matter_words(store: Store) -> None:
    """Front-matter titles and tags become searchable words, not only filters.

    Each chunk carries its document's words (chunks.doc_words); both full-text tables
    index them with the title, reading through the view chunks_indexed so that
    'rebuild' and 'integrity-check' see exactly what the triggers indexed.  Tags are
    known here and fill in at once; front-matter titles are only known by reading the
    notes again, so markdown documents are marked changed and the next index run
    rewrites them (their vectors come from the embedding cache: the text is the same).
    """
    store.conn.execute(
        f"""
        DROP TRIGGER chunks_ai;
        DROP TRIGGER chunks_ad;
        DROP TRIGGER chunks_au;
        DROP TABLE chunks_vocab;
        DROP TABLE chunks_fts;
        DROP TABLE chunks_tri;
        ALTER TABLE chunks ADD COLUMN doc_words TEXT NOT NULL DEFAULT '';
        UPDATE chunks SET doc_words = (SELECT trim(d.tags) FROM documents d WHERE d.id = chunks.document_id);
        CREATE VIEW chunks_indexed AS SELECT id, {_INDEXED_TITLE.format(row="chunks")} AS title, text FROM chunks;
        CREATE VIRTUAL TABLE chunks_fts USING fts5(
            title, text, content='chunks_indexed', content_rowid='id', tokenize='porter unicode61'
        );
        CREATE VIRTUAL TABLE chunks_tri USING fts5(
            title, text, content='chunks_indexed', content_rowid='id', tokenize='trigram'
        );
        CREATE VIRTUAL TABLE chunks_vocab USING fts5vocab(chunks_fts, 'row');
        INSERT INTO chunks_fts(chunks_fts) VALUES ('rebuild');
        INSERT INTO chunks_tri(chunks_tri) VALUES ('rebuild');
        UPDATE documents SET sha256 = '', mtime = -1 WHERE kind = 'markdown';
        {_fts_triggers()}
        """
    )


def m003_extracted_documents(store: Store) -> None:
    """Where a chunk sits in an extracted document (page, cell), and what the extractor recorded.

    HTML used to be indexed as code; clearing the stored hash and mtime of HTML documents
    makes the next index run read them again through the HTML extractor.
    """
    store.conn.execute(
        """
        ALTER TABLE chunks ADD COLUMN location TEXT NOT NULL DEFAULT '';
        ALTER TABLE documents ADD COLUMN meta TEXT NOT NULL DEFAULT '';
        UPDATE documents SET sha256 = '', mtime = 0 WHERE ext IN ('html', 'htm', 'xhtml');
        """
    )


def m004_obsidian_links_and_tags(store: Store) -> None:
    """Markdown's inline #tags and [[wiki links]] are read when indexing: the next index run
    reads every note again (its chunks are unchanged, so no vector is recomputed)."""
    store.conn.execute("UPDATE documents SET sha256 = '', mtime = -1 WHERE kind = 'markdown'")


def m005_chunking_version(store: Store) -> None:
    """Each document remembers the chunker version that cut it, so a chunker change
    re-chunks it on the next index run.  Existing documents were cut by version 1."""
    store.conn.execute("ALTER TABLE documents ADD COLUMN chunking_version INTEGER NOT NULL DEFAULT 1")


def m006_vectors_stored_once(store: Store) -> None:
    """Each vector stored once (issue #15), carried over without re-embedding.

    Before: the embedding cache was a WITHOUT ROWID table whose 1.5 KB rows spilled into
    overflow pages (a page and more per vector), and sqlite-vec held a second float32
    copy of every current vector.  After: the cache is an ordinary table (rows of that
    size fit two to a page) and each current chunk has its 48-byte sign code in
    vector_codes, which is what search keeps in memory.  The old vec0 table is dropped
    without sqlite-vec (see _drop_legacy_vector_table).
    VACUUM (after the transaction: see migrate) returns the freed pages to the disk.
    """
    store.conn.execute(
        """
        CREATE TABLE embeddings_compact (
            fingerprint TEXT NOT NULL,
            input_sha TEXT NOT NULL,
            vector BLOB NOT NULL,
            UNIQUE (fingerprint, input_sha)
        );
        INSERT INTO embeddings_compact (fingerprint, input_sha, vector)
            SELECT fingerprint, input_sha, vector FROM embeddings;
        DROP TABLE embeddings;
        ALTER TABLE embeddings_compact RENAME TO embeddings;
        CREATE TABLE vector_codes (
            chunk_id INTEGER PRIMARY KEY REFERENCES chunks(id) ON DELETE CASCADE,
            code BLOB NOT NULL
        );
        """
    )
    _fill_vector_codes(store)
    _drop_legacy_vector_table(store)
    store.conn.execute("DELETE FROM vector_tombstones")


def _drop_legacy_vector_table(store: Store) -> None:
    """Remove the sqlite-vec table stores made before issue #15 kept (`chunk_vectors`),
    without loading sqlite-vec: DROP TABLE of a virtual table needs its module.  Its
    shadow tables are ordinary tables, dropped as such; the virtual table's own schema
    row is then deleted, as SQLite documents for a virtual table whose module is gone
    (https://sqlite.org/lang_droptable.html: writable_schema)."""
    conn = store.conn
    if not conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'chunk_vectors'").get:
        return
    shadows = conn.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'chunk\\_vectors\\_%' ESCAPE '\\'"
    ).fetchall()
    for (name,) in shadows:
        conn.execute(f'DROP TABLE "{name}"')
    conn.execute("PRAGMA writable_schema = ON")
    try:
        conn.execute("DELETE FROM sqlite_master WHERE type = 'table' AND name = 'chunk_vectors'")
    finally:
        conn.execute("PRAGMA writable_schema = OFF")


def _fill_vector_codes(store: Store, page_size: int = 20_000) -> None:
    from kenning.storage.vectors import sign_bits  # numpy: only when there are vectors to convert

    after = 0
    while True:
        rows = list(
            store.conn.execute(
                "SELECT c.id, e.vector FROM chunks c CROSS JOIN embeddings e"
                "  ON e.fingerprint = c.vector_fp AND e.input_sha = c.input_sha"
                " WHERE c.vector_fp IS NOT NULL AND c.id > ? ORDER BY c.id LIMIT ?",
                (after, page_size),
            )
        )
        if not rows:
            return
        after = rows[-1][0]
        import numpy as np

        codes = sign_bits(np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32).reshape(len(rows), -1))
        store.conn.executemany(
            "INSERT INTO vector_codes (chunk_id, code) VALUES (?, ?)",
            [(r[0], code.tobytes()) for r, code in zip(rows, codes)],
        )


def m007_half_vectors_and_substring_index(store: Store) -> None:
    """Vectors stored in half the space, a smaller substring index (nothing is re-embedded).

    Issue #15: the 100k-chunk store from 9× its text to under 5×.  The cached vectors become float16 (768 bytes at 384 dimensions: cosines move by
    ~1e-4, storage/vectors.py); the trigram index keeps which rows hold each trigram
    but no positions (detail=none: 31 MB where it took 197 MB at 100k chunks), and
    substrings are verified and ranked from the text (storage/substrings.py).  The
    triggers name the table, so they keep feeding the new one.  VACUUM follows.
    """
    _halve_vectors(store)
    store.conn.execute(
        """
        DROP TABLE chunks_tri;
        CREATE VIRTUAL TABLE chunks_tri USING fts5(
            title, text, content='chunks_indexed', content_rowid='id', tokenize='trigram', detail='none'
        );
        INSERT INTO chunks_tri(chunks_tri) VALUES ('rebuild');
        INSERT INTO chunks_tri(chunks_tri) VALUES ('optimize');
        """
    )


def _halve_vectors(store: Store, page_size: int = 20_000) -> None:
    import numpy as np  # only when there are vectors to convert

    after = 0
    while True:
        rows = list(
            store.conn.execute(
                "SELECT rowid, vector FROM embeddings WHERE rowid > ? ORDER BY rowid LIMIT ?", (after, page_size)
            )
        )
        if not rows:
            return
        after = rows[-1][0]
        store.conn.executemany(
            "UPDATE embeddings SET vector = ? WHERE rowid = ?",
            [(np.frombuffer(blob, dtype=np.float32).astype(np.float16).tobytes(), rowid) for rowid, blob in rows],
        )


def m008_remembered_query_vectors(store: Store) -> None:
    """A memory of query vectors, so a search repeated in a new process needs no model.

    Issue #15: storage/query_vectors.py.  A rowid table: a 1.5 KB vector fits in its
    row's page, where rows of a WITHOUT ROWID table spill into overflow pages past ~1 KB.
    """
    from kenning.storage.query_vectors import TABLE_DDL

    store.conn.execute(TABLE_DDL)


def m009_note_links(store: Store) -> None:
    """Links between notes and the other names of notes, for backlinks and unresolved links.

    Issue #26: each link a note's chunk makes, as written (`[[Deploy#Rollback]]` is kept
    as "Deploy", with its line), and each front-matter alias of a document.  Links are
    resolved when asked (workspace/links.py), so a note added or renamed later needs no
    re-index of the notes that link to it.  Notes indexed before carry no links and no
    aliases: marking them as cut by no chunker has the next run read every Markdown
    note again (their vectors come from the embedding cache), and nothing else.
    """
    store.conn.execute(
        """
        CREATE TABLE chunk_links (
            chunk_id INTEGER NOT NULL REFERENCES chunks(id) ON DELETE CASCADE,
            ord INTEGER NOT NULL,
            target TEXT NOT NULL,
            line INTEGER NOT NULL,
            embed INTEGER NOT NULL DEFAULT 0,
            PRIMARY KEY (chunk_id, ord)
        ) WITHOUT ROWID;
        CREATE TABLE document_aliases (
            document_id INTEGER NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
            alias TEXT NOT NULL,
            PRIMARY KEY (document_id, alias)
        ) WITHOUT ROWID;
        UPDATE documents SET chunking_version = 0 WHERE kind = 'markdown';
        """
    )


def m010_vector_code_generation(store: Store) -> None:
    """Each sign code records the vector generation that wrote it (issue #22).

    The semantic scan (storage/vector_scan.py) keeps the codes in memory and, between
    full reloads, reads only what was written since its copy.  It read the codes of
    chunk ids above its last one, which misses a vector written later for a lower id:
    the embedding queue goes by value, not by id, and another writer may commit any
    id.  Codes written before this migration count as generation 0 (already in any copy
    made after it)."""
    store.conn.execute(
        """
        ALTER TABLE vector_codes ADD COLUMN generation INTEGER NOT NULL DEFAULT 0;
        CREATE INDEX vector_codes_by_generation ON vector_codes (generation);
        """
    )


def m011_without_sqlite_vec(store: Store) -> None:
    """Nothing of sqlite-vec is left (issue #22: it was loaded and did no work).

    A store converted by m006 while sqlite-vec could not be loaded still holds the old
    vec0 table: it goes, without the module.  The deleted chunks' ids the vec0 table
    needed (vector_tombstones, written by the delete trigger) are no longer kept."""
    _drop_legacy_vector_table(store)
    store.conn.execute(
        f"""
        DROP TRIGGER IF EXISTS chunks_ai;
        DROP TRIGGER IF EXISTS chunks_ad;
        DROP TRIGGER IF EXISTS chunks_au;
        {_fts_triggers()}
        DROP TABLE IF EXISTS vector_tombstones;
        """
    )


CJK_GLOB = BMP_RANGE  # core.cjk's characters below the astral planes, for a GLOB range


def m012_cjk_bigrams(store: Store) -> None:
    """An index of the character pairs of Chinese, Japanese and Korean text (issue #26).

    The trigram index cannot find a two-character word, the commonest length of a Chinese
    word, and the word index reads a run of CJK characters as one token.  chunks_cjk
    holds each chunk's distinct CJK bigrams (core/cjk.py) as words, without positions
    (detail=none) or a copy of the text (contentless): storage/substrings.py finds a
    two-character CJK term's candidate rows through it and verifies them against the
    text, as it does trigrams.  Rows are written with their chunk (documents.py) and
    removed by a trigger; chunks indexed before are read here once."""
    from kenning.core.cjk import cjk_bigrams

    store.conn.execute(
        """
        CREATE VIRTUAL TABLE chunks_cjk USING fts5(
            grams, content='', contentless_delete=1, detail='none', tokenize='unicode61'
        );
        CREATE TRIGGER chunks_ad_cjk AFTER DELETE ON chunks BEGIN
            DELETE FROM chunks_cjk WHERE rowid = old.id;
        END;
        """
    )
    # GLOB compares code points: a cheap first cut, so Latin-only stores read nothing in Python.
    rows = store.conn.execute(f"SELECT id, title, text FROM chunks_indexed WHERE (title || text) GLOB '*[{CJK_GLOB}]*'")
    for chunk_id, title, text in rows:
        grams = cjk_bigrams(f"{title}\n{text}")
        if grams:
            store.conn.execute("INSERT INTO chunks_cjk (rowid, grams) VALUES (?, ?)", (chunk_id, " ".join(grams)))


def m013_document_titles(store: Store) -> None:
    """Extracted documents whose title field held a generator's default ("Enscript Output",
    "Microsoft Word - x.docx", their own file name) are titled by their first line now: the
    next index run reads them again (their chunks are unchanged, so no vector is recomputed)."""
    store.conn.execute(
        "UPDATE documents SET sha256 = '', mtime = -1"
        " WHERE ext IN ('pdf', 'docx', 'odt', 'html', 'htm', 'xhtml', 'ipynb')"
    )


def m014_roots_stored_as_names(store: Store) -> None:
    """A source's root is kept as core.fsnames.storable_name(root), as a file's path is
    (issue #24 case 23: a folder whose path is not UTF-8 can be a source).  Roots were
    kept as they are; the few holding a backslash the escape could misread are re-stored."""
    from kenning.core.fsnames import storable_name

    for source_id, root in store.conn.execute("SELECT id, root FROM sources WHERE instr(root, '\\') > 0").fetchall():
        store.conn.execute("UPDATE sources SET root = ? WHERE id = ?", (storable_name(str(root)), source_id))


def m015_document_openings(store: Store) -> None:
    """Each document's opening (what the model reads of its start, ingest.embedtext) is
    keyed by `documents.opening_sha`: NULL until the embedding phase has looked at it
    (so every document of a store made before is looked at by the next `kenning index`,
    which embeds only the openings), '' for a document that has none (one chunk, code),
    else the sha of its input, whose vector is in `embeddings` (the cache) like a chunk's."""
    store.conn.execute("ALTER TABLE documents ADD COLUMN opening_sha TEXT")
    store.conn.execute("CREATE INDEX documents_by_opening ON documents(opening_sha) WHERE opening_sha <> ''")


MIGRATIONS: list[Callable[[Store], None]] = [
    m001_initial,
    m002_front_matter_words,
    m003_extracted_documents,
    m004_obsidian_links_and_tags,
    m005_chunking_version,
    m006_vectors_stored_once,
    m007_half_vectors_and_substring_index,
    m008_remembered_query_vectors,
    m009_note_links,
    m010_vector_code_generation,
    m011_without_sqlite_vec,
    m012_cjk_bigrams,
    m013_document_titles,
    m014_roots_stored_as_names,
    m015_document_openings,
]
# Migrations after which the file holds many free pages: VACUUM gives them back.
_VACUUM_AFTER = {"m006_vectors_stored_once", "m007_half_vectors_and_substring_index"}


def _recorded(store: Store) -> list[str] | None:
    """The migrations applied, read without the write lock (None: no record yet).

    An up-to-date store is opened without writing: a search answers while an indexer
    holds the write lock, and a read-only store can be searched."""
    try:
        return [row[0] for row in store.execute("SELECT name FROM migrations ORDER BY rowid")]
    except apsw.SQLError:  # no such table: a new store
        return None


def _applied(store: Store) -> list[str]:
    """The migrations applied, the record made first if the store has none (under the write lock)."""
    store.conn.execute("CREATE TABLE IF NOT EXISTS migrations (name TEXT PRIMARY KEY, applied_at REAL NOT NULL)")
    return _recorded(store) or []


UpgradeReport = Callable[[str], None]


def migrate(store: Store, report: UpgradeReport | None = None) -> list[str]:
    """Apply pending migrations; return the names applied now.

    Converting a large existing store takes a while (m007 at 100k chunks: see
    docs/architecture.md §10), so each step of it is reported as it starts."""
    known = [m.__name__ for m in MIGRATIONS]
    try:
        applied = _recorded(store)
        if applied is None or any(name not in applied for name in known):
            with store.atomic():
                applied = _applied(store)
    except apsw.Error as exc:
        raise unusable(store.path, exc) from exc
    unknown = [name for name in applied if name not in known]
    if unknown:
        raise StoreUnusable(str(store.path), "newer", unknown[-1])  # workspace.messages says what to do
    pending = [m for m in MIGRATIONS if m.__name__ not in applied]
    if report is None or not applied:  # a new store is empty: nothing worth saying
        report = _silent
    started = time.monotonic()
    done = []
    for number, migration in enumerate(pending, 1):
        report(f"Upgrading the store {store.path} ({number}/{len(pending)}): {_summary(migration)}")
        with store.atomic():
            migration(store)
            store.conn.execute(
                "INSERT INTO migrations (name, applied_at) VALUES (?, ?)",
                (migration.__name__, time.time()),
            )
        done.append(migration.__name__)
    if _VACUUM_AFTER & set(done) and applied:
        report("Compacting the store (VACUUM): this rewrites the whole file once")
        store.conn.execute("VACUUM")
        store.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # else the log keeps a second copy of the file
    if done:
        report(f"Store upgraded in {time.monotonic() - started:.0f} s")
    return done


def needs_upgrade(path: Path) -> bool:
    """Whether opening the store at path will convert it (a front end warns first);
    False where it cannot tell (no file, unreadable): opening it then says why."""
    if not path.is_file():
        return False
    applied = applied_in_file(path) or set()
    return bool(applied) and any(m.__name__ not in applied for m in MIGRATIONS)


def applied_in_file(path: Path) -> set[str] | None:
    """The migrations a store file records, read without writing to it (None: unreadable)."""
    try:
        conn = apsw.Connection(f"file:{path}?mode=ro", flags=apsw.SQLITE_OPEN_READONLY | apsw.SQLITE_OPEN_URI)
        try:
            return {row[0] for row in conn.execute("SELECT name FROM migrations")}
        finally:
            conn.close()
    except apsw.Error:
        return None


def _silent(_: str) -> None:
    """Where upgrade steps go when nobody listens."""


def _summary(migration: Callable[[Store], None]) -> str:
    return (migration.__doc__ or migration.__name__).strip().splitlines()[0]
