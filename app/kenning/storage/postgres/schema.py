"""The team store's schema, as named migrations applied in order (like the SQLite ones).

Everything lives in the schema `kenning` of the database the user names.  Migrations
run on first connect by a role allowed to create tables there (the owner), or by
`kenning store upgrade`; a role that may not (a reader) is told what to ask for.  Two
upgraders never run at once: each takes a transaction-level advisory lock.

Writers take the store's write lock (a transaction-level advisory lock, see
WRITE_LOCK) before their first write, as SQLite's BEGIN IMMEDIATE does: the statistics
bm25 reads (`terms`, `corpus`) and the change token (`store_state`) are rows every
writer updates, and taking them in one order everywhere means two writers wait for
each other instead of deadlocking.  Triggers keep them in step with `chunks` whoever
writes, cascades from a removed source or document included.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import psycopg

from kenning.core.errors import StoreError, StoreUnusable
from kenning.storage.postgres.connection import SCHEMA, PgStore

# pg_advisory_xact_lock(LOCK_SPACE, key): Kenning's keys, in a space of its own.
LOCK_SPACE = 0x4B454E  # "KEN"
WRITE_LOCK = 1
UPGRADE_LOCK = 2
CHANNEL = "kenning_store"
TF_INLINE_BYTES = 3000  # a chunk's term counts kept in its row up to this size (m002)  # NOTIFY on every commit that changed the store


def _row_terms_m001(rows: str) -> str:
    """Each (row, term, occurrences in its title and text) of a transition table (m001's layout)."""
    return (
        "(SELECT r.id, k.key AS term, sum(k.value::bigint) AS n FROM " + rows + " r, LATERAL"
        " (SELECT * FROM jsonb_each_text(r.title_tf) UNION ALL SELECT * FROM jsonb_each_text(r.text_tf)) k"
        " GROUP BY r.id, k.key) AS per_row"
    )


_FUNCTIONS = f"""
CREATE FUNCTION store_write_lock() RETURNS void LANGUAGE sql
    SET search_path = {SCHEMA}, public
    AS $$ SELECT pg_advisory_xact_lock({LOCK_SPACE}, {WRITE_LOCK}) $$;

CREATE FUNCTION store_changed() RETURNS trigger LANGUAGE plpgsql
    SET search_path = {SCHEMA}, public AS $$
BEGIN
    PERFORM store_write_lock();
    UPDATE store_state SET generation = generation + 1, changed_at = extract(epoch FROM clock_timestamp());
    PERFORM pg_notify('{CHANNEL}', TG_TABLE_NAME);
    RETURN NULL;
END $$;

CREATE FUNCTION chunk_words_added() RETURNS trigger LANGUAGE plpgsql
    SET search_path = {SCHEMA}, public AS $$
BEGIN
    PERFORM store_write_lock();
    INSERT INTO terms (term, chunks, occurrences)
        SELECT term, count(*), sum(n) FROM {_row_terms_m001("added")} GROUP BY term ORDER BY term
        ON CONFLICT (term) DO UPDATE
            SET chunks = terms.chunks + excluded.chunks, occurrences = terms.occurrences + excluded.occurrences;
    UPDATE corpus SET chunks = corpus.chunks + a.n, words = corpus.words + a.w, grams = corpus.grams + a.g
        FROM (SELECT count(*) AS n, coalesce(sum(word_count), 0) AS w, coalesce(sum(gram_count), 0) AS g
              FROM added) a;
    RETURN NULL;
END $$;

CREATE FUNCTION chunk_words_fixed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'a chunk''s words are written once: replace the chunk instead';
END $$;

CREATE FUNCTION chunk_words_removed() RETURNS trigger LANGUAGE plpgsql
    SET search_path = {SCHEMA}, public AS $$
BEGIN
    PERFORM store_write_lock();
    UPDATE terms SET chunks = terms.chunks - gone.chunks, occurrences = terms.occurrences - gone.n
        FROM (SELECT term, count(*) AS chunks, sum(n) AS n FROM {_row_terms_m001("removed")} GROUP BY term) gone
        WHERE terms.term = gone.term;
    DELETE FROM terms USING (SELECT DISTINCT term FROM {_row_terms_m001("removed")}) gone
        WHERE terms.term = gone.term AND terms.chunks <= 0;
    UPDATE corpus SET chunks = corpus.chunks - r.n, words = corpus.words - r.w, grams = corpus.grams - r.g
        FROM (SELECT count(*) AS n, coalesce(sum(word_count), 0) AS w, coalesce(sum(gram_count), 0) AS g
              FROM removed) r;
    RETURN NULL;
END $$;
"""

_TABLES = """
CREATE TABLE sources (
    id bigserial PRIMARY KEY,
    kind text NOT NULL CHECK (kind IN ('folder', 'git')),
    root text NOT NULL UNIQUE,
    name text NOT NULL UNIQUE,
    include_globs text NOT NULL DEFAULT '[]',
    exclude_globs text NOT NULL DEFAULT '[]',
    enabled boolean NOT NULL DEFAULT true,
    added_at double precision NOT NULL,
    last_indexed_at double precision
);
CREATE TABLE documents (
    id bigserial PRIMARY KEY,
    source_id bigint NOT NULL REFERENCES sources(id) ON DELETE CASCADE,
    rel_path text NOT NULL,
    sha256 text NOT NULL,
    size bigint NOT NULL,
    mtime double precision NOT NULL,
    created_at double precision,
    updated_at double precision,
    kind text NOT NULL,
    title text NOT NULL,
    tags text NOT NULL DEFAULT '',          -- ' tag1 tag2 ', as in the SQLite store
    ext text NOT NULL DEFAULT '',
    is_test boolean NOT NULL DEFAULT false,
    meta text NOT NULL DEFAULT '',
    chunking_version integer NOT NULL DEFAULT 1,
    UNIQUE (source_id, rel_path)
);
-- A sequence never hands out an id twice: a stale chunk id can never name other text.
CREATE TABLE chunks (
    id bigserial PRIMARY KEY,
    document_id bigint NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
    ord integer NOT NULL,
    title text NOT NULL,
    kind text NOT NULL,
    text text NOT NULL,
    line_start integer NOT NULL,
    line_end integer NOT NULL,
    input_sha text NOT NULL,
    doc_words text NOT NULL DEFAULT '',
    location text NOT NULL DEFAULT '',
    vector_fp text,                          -- fingerprint of its current vector, NULL = pending
    embedding vector,                        -- pgvector; indexed per dimension (vectors.prepare)
    words tsvector NOT NULL,                 -- see words.py
    title_tf jsonb NOT NULL,
    text_tf jsonb NOT NULL,
    word_count integer NOT NULL,
    grams text[] NOT NULL,
    gram_count integer NOT NULL
);
CREATE INDEX chunks_by_document ON chunks (document_id, ord);
CREATE INDEX chunks_pending ON chunks (id) WHERE vector_fp IS NULL;
CREATE INDEX chunks_by_input_sha ON chunks (input_sha);
CREATE INDEX chunks_words ON chunks USING gin (words);
CREATE INDEX chunks_grams ON chunks USING gin (grams);

-- bm25's statistics, kept by the triggers: chunks holding each term (and its occurrences), and the totals.
CREATE TABLE terms (term text PRIMARY KEY, chunks bigint NOT NULL, occurrences bigint NOT NULL);
CREATE TABLE corpus (
    id integer PRIMARY KEY CHECK (id = 1),
    chunks bigint NOT NULL,
    words bigint NOT NULL,
    grams bigint NOT NULL
);
INSERT INTO corpus VALUES (1, 0, 0, 0);
-- The change token: bumped by every statement that writes (store_changed).
CREATE TABLE store_state (
    id integer PRIMARY KEY CHECK (id = 1),
    generation bigint NOT NULL,
    changed_at double precision
);
INSERT INTO store_state VALUES (1, 0, NULL);

-- Embedding cache, float16 as in the SQLite store: unchanged text is never embedded twice.
CREATE TABLE embeddings (
    fingerprint text NOT NULL,
    input_sha text NOT NULL,
    vector bytea NOT NULL,
    PRIMARY KEY (fingerprint, input_sha)
);
CREATE TABLE chunk_refs (
    chunk_id bigint NOT NULL REFERENCES chunks(id) ON DELETE CASCADE,
    path text NOT NULL,
    PRIMARY KEY (chunk_id, path)
);
CREATE INDEX chunk_refs_by_path ON chunk_refs (path);
CREATE TABLE git_recent (
    source_id bigint NOT NULL REFERENCES sources(id) ON DELETE CASCADE,
    path text NOT NULL,
    last_commit double precision,
    PRIMARY KEY (source_id, path)
);
CREATE INDEX git_recent_by_path ON git_recent (path);
CREATE TABLE skipped_files (
    source_id bigint NOT NULL REFERENCES sources(id) ON DELETE CASCADE,
    rel_path text NOT NULL,
    reason text NOT NULL,
    detail text NOT NULL DEFAULT '',
    PRIMARY KEY (source_id, rel_path)
);
CREATE TABLE settings (key text PRIMARY KEY, value text NOT NULL);
-- The links notes make, as written, and documents' other names (the link graph, issue #26).
CREATE TABLE chunk_links (
    chunk_id bigint NOT NULL REFERENCES chunks(id) ON DELETE CASCADE,
    ord integer NOT NULL,
    target text NOT NULL,
    line integer NOT NULL,
    embed integer NOT NULL DEFAULT 0,
    PRIMARY KEY (chunk_id, ord)
);
CREATE TABLE document_aliases (
    document_id bigint NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
    alias text NOT NULL,
    PRIMARY KEY (document_id, alias)
);
"""

_TRIGGERS = """
CREATE TRIGGER chunks_words_added AFTER INSERT ON chunks
    REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION chunk_words_added();
CREATE TRIGGER chunks_words_removed AFTER DELETE ON chunks
    REFERENCING OLD TABLE AS removed FOR EACH STATEMENT EXECUTE FUNCTION chunk_words_removed();
-- The statistics follow inserts and deletes; a chunk's words are never rewritten in place
-- (new text is a new chunk), and a statement that tried would leave them wrong: refused.
CREATE TRIGGER chunks_words_fixed BEFORE UPDATE OF words, title_tf, text_tf, word_count, gram_count ON chunks
    FOR EACH ROW EXECUTE FUNCTION chunk_words_fixed();
"""

CHANGE_TRACKED = (
    "sources",
    "documents",
    "chunks",
    "chunk_refs",
    "git_recent",
    "skipped_files",
    "settings",
    "embeddings",
    "chunk_links",
    "document_aliases",
)


def _change_triggers() -> str:
    return "\n".join(
        f"CREATE TRIGGER {table}_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON {table}"
        " FOR EACH STATEMENT EXECUTE FUNCTION store_changed();"
        for table in CHANGE_TRACKED
    )


def m001_team_store(store: PgStore) -> None:
    """The team store: sources, documents, chunks with their words and vectors, statistics."""
    store.execute(_FUNCTIONS)
    store.execute(_TABLES)
    store.execute(_TRIGGERS)
    store.execute(_change_triggers())


TF_SHIFT = 16  # tf = title occurrences << TF_SHIFT | text occurrences (see words.py)
K1 = 1.2  # bm25's k1 and b (lexical.py reads them from here)
B = 0.75


def _row_terms(rows: str) -> str:
    """Each (row, term, occurrences in its title and text) of a transition table."""
    return (
        "(SELECT r.id, k.key AS term, (k.value::bigint >> " + str(TF_SHIFT) + ")"
        " + (k.value::bigint & " + str((1 << TF_SHIFT) - 1) + ") AS n FROM " + rows + " r, LATERAL"
        " (SELECT * FROM jsonb_each_text(r.tf) UNION ALL SELECT * FROM jsonb_each_text(coalesce(r.tf_big, '{}'))) k)"
        " AS per_row"
    )


def m002_term_frequencies_uncompressed(store: PgStore) -> None:
    """A chunk's term frequencies in one uncompressed column that bm25 reads fast.

    bm25 reads a few terms' counts of every matching row; from the compressed title_tf /
    text_tf each lookup decompressed the whole value again (28 lookups a row for a
    14-word query: 107 ms over CISI's 1,572 chunks, against 31 ms stored plain).  Now
    `tf` holds both counts of a term in one number (title << 16 | text) and is stored
    PLAIN (never compressed or moved out of the row); a chunk whose counts would not fit
    comfortably in a row (TF_INLINE_BYTES) keeps them in `tf_big` (compressed), `tf`
    then being empty."""
    store.execute(
        f"""
        DROP TRIGGER chunks_words_fixed ON chunks;
        ALTER TABLE chunks ADD COLUMN tf jsonb, ADD COLUMN tf_big jsonb;
        ALTER TABLE chunks ALTER COLUMN tf SET STORAGE PLAIN;
        WITH combined AS (
            SELECT c.id, coalesce(jsonb_object_agg(k.key,
                (coalesce((c.title_tf ->> k.key)::bigint, 0) << {TF_SHIFT}) + coalesce((c.text_tf ->> k.key)::bigint, 0)),
                '{{}}'::jsonb) AS tf
            FROM chunks c LEFT JOIN LATERAL
                (SELECT jsonb_object_keys(c.title_tf) AS key UNION SELECT jsonb_object_keys(c.text_tf)) k ON true
            GROUP BY c.id
        )
        UPDATE chunks c SET
            tf = CASE WHEN octet_length(m.tf::text) > {TF_INLINE_BYTES} THEN '{{}}'::jsonb ELSE m.tf END,
            tf_big = CASE WHEN octet_length(m.tf::text) > {TF_INLINE_BYTES} THEN m.tf END
        FROM combined m WHERE m.id = c.id;
        ALTER TABLE chunks ALTER COLUMN tf SET NOT NULL, DROP COLUMN title_tf, DROP COLUMN text_tf;

        CREATE OR REPLACE FUNCTION chunk_words_added() RETURNS trigger LANGUAGE plpgsql
            SET search_path = {SCHEMA}, public AS $$
        BEGIN
            PERFORM store_write_lock();
            INSERT INTO terms (term, chunks, occurrences)
                SELECT term, count(*), sum(n) FROM {_row_terms("added")} GROUP BY term ORDER BY term
                ON CONFLICT (term) DO UPDATE
                    SET chunks = terms.chunks + excluded.chunks, occurrences = terms.occurrences + excluded.occurrences;
            UPDATE corpus SET chunks = corpus.chunks + a.n, words = corpus.words + a.w, grams = corpus.grams + a.g
                FROM (SELECT count(*) AS n, coalesce(sum(word_count), 0) AS w, coalesce(sum(gram_count), 0) AS g
                      FROM added) a;
            RETURN NULL;
        END $$;
        CREATE OR REPLACE FUNCTION chunk_words_removed() RETURNS trigger LANGUAGE plpgsql
            SET search_path = {SCHEMA}, public AS $$
        BEGIN
            PERFORM store_write_lock();
            UPDATE terms SET chunks = terms.chunks - gone.chunks, occurrences = terms.occurrences - gone.n
                FROM (SELECT term, count(*) AS chunks, sum(n) AS n FROM {_row_terms("removed")} GROUP BY term) gone
                WHERE terms.term = gone.term;
            DELETE FROM terms USING (SELECT DISTINCT term FROM {_row_terms("removed")}) gone
                WHERE terms.term = gone.term AND terms.chunks <= 0;
            UPDATE corpus SET chunks = corpus.chunks - r.n, words = corpus.words - r.w, grams = corpus.grams - r.g
                FROM (SELECT count(*) AS n, coalesce(sum(word_count), 0) AS w, coalesce(sum(gram_count), 0) AS g
                      FROM removed) r;
            RETURN NULL;
        END $$;
        CREATE TRIGGER chunks_words_fixed BEFORE UPDATE OF words, tf, tf_big, word_count, gram_count ON chunks
            FOR EACH ROW EXECUTE FUNCTION chunk_words_fixed();
        """
    )


def m003_cjk_pairs(store: PgStore) -> None:
    """Two-character Chinese, Japanese and Korean words found as substrings (issue #26 item 10).

    A row's `grams` gain the pairs of characters of its CJK runs (words.row_grams), as the
    SQLite store's chunks_cjk (its m012) holds them: no trigram holds a two-character
    word, the commonest length of a Chinese one.  Rows written before are read once
    here; a regular expression over a range of the CJK characters is the cheap first cut,
    so a store without such text reads nothing in Python."""
    from kenning.core.cjk import BMP_RANGE
    from kenning.storage.postgres.words import indexed_title, row_grams

    rows = store.execute(
        "SELECT id, title, doc_words, text FROM chunks WHERE title ~ %s OR doc_words ~ %s OR text ~ %s",
        (f"[{BMP_RANGE}]",) * 3,
    )
    for chunk_id, title, doc_words, text in rows:
        grams = row_grams(indexed_title(title, doc_words).lower(), text.lower())
        store.execute("UPDATE chunks SET grams = %s WHERE id = %s", (grams, chunk_id))


def _make_vector_index_function(options: str) -> str:
    """make_vector_index(dim, old_dim): the vector index of a dimension, built WITH (options)."""
    from kenning.storage.postgres.vectors import INDEX_PREFIX

    return f"""
        CREATE OR REPLACE FUNCTION make_vector_index(dim integer, old_dim integer) RETURNS void LANGUAGE plpgsql
            SECURITY DEFINER SET search_path = {SCHEMA}, public AS $$
        BEGIN
            IF NOT has_table_privilege(session_user, '{SCHEMA}.chunks', 'UPDATE') THEN
                RAISE EXCEPTION 'permission denied for table chunks' USING ERRCODE = 'insufficient_privilege';
            END IF;
            IF old_dim IS NOT NULL AND old_dim <> dim THEN
                EXECUTE format('DROP INDEX IF EXISTS %I', '{INDEX_PREFIX}' || old_dim);
            END IF;
            EXECUTE format(
                'CREATE INDEX IF NOT EXISTS %I ON chunks USING hnsw ((embedding::vector(%s)) vector_cosine_ops)'
                ' WITH ({options})',
                '{INDEX_PREFIX}' || dim, dim);
        END $$;
        """


def m004_vector_index_for_writers(store: PgStore) -> None:
    """Writers may make the vector index of their model's dimension (issue #23 item 4).

    An index is its table owner's to create or drop, and the writers' role of the README
    owns nothing: a writer's first `kenning index` with a model (vectors.prepare) failed
    with "must be owner of table chunks".  make_vector_index runs as the schema's owner
    (SECURITY DEFINER, its search_path fixed, integers only) for a caller who may write
    chunks, so a reader still changes nothing.  (The build options as they were then:
    m006 replaces the function.)"""
    store.execute(_make_vector_index_function("m = 16, ef_construction = 64"))


def m005_roots_stored_as_names(store: PgStore) -> None:
    """A source's root is kept as core.fsnames.storable_name(root), as in the SQLite
    store's m014 (issue #24 case 23); the few roots holding a backslash are re-stored."""
    from kenning.core.fsnames import storable_name

    for source_id, root in store.execute("SELECT id, root FROM sources WHERE strpos(root, '\\') > 0"):
        store.execute("UPDATE sources SET root = %s WHERE id = %s", (storable_name(root), source_id))


def m006_vector_index_rebuilt(store: PgStore) -> None:
    """Rebuilding the vector index with a wider graph (ef_construction 128; minutes on a large store).

    Built at 64, the index found 0.904 of the true top 100 at a million chunks at the
    shipped ef_search (vectors.HNSW_EF_CONSTRUCTION says what 128 finds).  The new index
    is built beside the old one, which searches keep walking meanwhile (a build blocks
    writes, not reads); the old one is dropped and the new takes its name at the end."""
    from kenning.storage.postgres.vectors import INDEX_OPTIONS, INDEX_PREFIX, INDEX_RELOPTIONS

    store.execute(_make_vector_index_function(INDEX_OPTIONS))
    rows = store.execute(
        "SELECT c.relname, c.reloptions FROM pg_class c JOIN pg_index i ON i.indexrelid = c.oid"
        " WHERE i.indrelid = %s::regclass AND c.relname ~ %s",
        (f"{SCHEMA}.chunks", f"^{INDEX_PREFIX}[0-9]+$"),
    )
    for name, options in rows:
        if sorted(options or []) == sorted(INDEX_RELOPTIONS):
            continue
        dim = int(name.removeprefix(INDEX_PREFIX))
        store.execute(
            f"CREATE INDEX {name}_m006 ON chunks USING hnsw ((embedding::vector({dim})) vector_cosine_ops)"
            f" WITH ({INDEX_OPTIONS})"
        )
        store.execute(f"DROP INDEX {name}")
        store.execute(f"ALTER INDEX {name}_m006 RENAME TO {name}")


# Impact-ordered postings (m007): a term's chunks in the order of bm25's term-frequency
# part, at these reference weights and length (a pure function of the row, so the delete
# trigger finds a row's postings again); the query's idf, weights and mean length are
# applied when the candidates are scored exactly (lexical.py).
IMPACT_TITLE_WEIGHT = 3
IMPACT_MEAN_LENGTH = 80


def _row_postings(rows: str) -> str:
    """Each (term, impact, chunk, document) of a transition table's rows."""
    return (
        "(SELECT k.key AS term, posting_impact(k.value::bigint, r.word_count) AS impact, r.id AS chunk,"
        " r.document_id AS document FROM " + rows + " r, LATERAL"
        " (SELECT * FROM jsonb_each_text(r.tf) UNION ALL SELECT * FROM jsonb_each_text(coalesce(r.tf_big, '{}'))) k)"
        " AS posting"
    )


def _words_triggers_m007() -> str:
    return f"""
        CREATE OR REPLACE FUNCTION chunk_words_added() RETURNS trigger LANGUAGE plpgsql
            SET search_path = {SCHEMA}, public AS $$
        BEGIN
            PERFORM store_write_lock();
            INSERT INTO terms (term, chunks, occurrences)
                SELECT term, count(*), sum(n) FROM {_row_terms("added")} GROUP BY term ORDER BY term
                ON CONFLICT (term) DO UPDATE
                    SET chunks = terms.chunks + excluded.chunks, occurrences = terms.occurrences + excluded.occurrences;
            INSERT INTO postings (term, impact, chunk, document) SELECT * FROM {_row_postings("added")};
            UPDATE corpus SET chunks = corpus.chunks + a.n, words = corpus.words + a.w, grams = corpus.grams + a.g
                FROM (SELECT count(*) AS n, coalesce(sum(word_count), 0) AS w, coalesce(sum(gram_count), 0) AS g
                      FROM added) a;
            RETURN NULL;
        END $$;
        CREATE OR REPLACE FUNCTION chunk_words_removed() RETURNS trigger LANGUAGE plpgsql
            SET search_path = {SCHEMA}, public AS $$
        BEGIN
            PERFORM store_write_lock();
            UPDATE terms SET chunks = terms.chunks - gone.chunks, occurrences = terms.occurrences - gone.n
                FROM (SELECT term, count(*) AS chunks, sum(n) AS n FROM {_row_terms("removed")} GROUP BY term) gone
                WHERE terms.term = gone.term;
            DELETE FROM terms USING (SELECT DISTINCT term FROM {_row_terms("removed")}) gone
                WHERE terms.term = gone.term AND terms.chunks <= 0;
            DELETE FROM postings p USING {_row_postings("removed")}
                WHERE p.term = posting.term AND p.impact = posting.impact AND p.chunk = posting.chunk;
            UPDATE corpus SET chunks = corpus.chunks - r.n, words = corpus.words - r.w, grams = corpus.grams - r.g
                FROM (SELECT count(*) AS n, coalesce(sum(word_count), 0) AS w, coalesce(sum(gram_count), 0) AS g
                      FROM removed) r;
            RETURN NULL;
        END $$;
        """


POSTINGS_INDEX = "CREATE INDEX postings_by_impact ON postings (term, impact DESC, chunk) INCLUDE (document)"


def m007_impact_ordered_postings(store: PgStore) -> None:
    """Each term's chunks in impact order, so a common word's keyword list reads its best
    chunks instead of scoring every one (minutes on a large store).

    `postings` (term, impact, chunk, document) holds one row per term of a chunk, kept
    by the same statement-level triggers as bm25's statistics, in the writer's
    transaction; impact is posting_impact() of the row's counts and length.  A word in
    more chunks than lexical.PRUNE_DEPTH offers its best postings the filter allows, and
    the chunks so found are scored by the exact bm25 statement (lexical.py)."""
    store.execute(
        f"""
        CREATE FUNCTION posting_impact(tf bigint, length integer) RETURNS real
            LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
            SELECT ((f * {K1} + f) / (f + {K1} * ({1 - B} + {B} * length / {IMPACT_MEAN_LENGTH}.0)))::real
            FROM (SELECT ((tf >> {TF_SHIFT}) * {IMPACT_TITLE_WEIGHT} + (tf & {(1 << TF_SHIFT) - 1}))::float8 AS f) t
        $$;
        CREATE TABLE postings (term text NOT NULL, impact real NOT NULL, chunk bigint NOT NULL, document bigint NOT NULL);
        INSERT INTO postings (term, impact, chunk, document) SELECT * FROM {_row_postings("chunks")};
        {POSTINGS_INDEX};
        ANALYZE postings;
        """
    )
    store.execute(_words_triggers_m007())


def m008_document_openings(store: PgStore) -> None:
    """Each document's opening (what the model reads of its start, ingest.embedtext) is
    keyed by `documents.opening_sha`, as in the SQLite store's m015: NULL until the
    embedding phase has looked at it, '' for none, else the sha of its input, whose
    vector is in `embeddings` (the cache)."""
    store.execute(
        "ALTER TABLE documents ADD COLUMN opening_sha text;"
        " CREATE INDEX documents_by_opening ON documents (opening_sha) WHERE opening_sha <> ''"
    )


# The columns a default search's filter reads of every document (source, test file), by id:
# the pruned keyword lists pass over the documents it leaves out (lexical._best_postings),
# worked out once a statement from every document row.  Read from the table, each row's
# is_test lies behind its text columns: 13.7-17 ms at 37,705 documents; from this index
# (an index-only scan) 4.7-7 ms, and the 123 pruned lists of 120 hybrid searches at
# 1,016,585 chunks took 5.6 -> 4.5 s (docs/architecture.md §10, round 12).
DOCUMENT_FILTER_INDEX = "CREATE INDEX documents_filter_columns ON documents (source_id, is_test, id)"


def m009_document_filter_index(store: PgStore) -> None:
    """The documents' filter columns indexed (source, test file, id): the keyword lists'
    filter reads them from the index, not every document's row."""
    store.execute(DOCUMENT_FILTER_INDEX)


MIGRATIONS: list[Callable[[PgStore], None]] = [
    m001_team_store,
    m002_term_frequencies_uncompressed,
    m003_cjk_pairs,
    m004_vector_index_for_writers,
    m005_roots_stored_as_names,
    m006_vector_index_rebuilt,
    m007_impact_ordered_postings,
    m008_document_openings,
    m009_document_filter_index,
]
UpgradeReport = Callable[[str], None]


def _recorded(store: PgStore) -> list[str] | None:
    """The migrations applied (None: no Kenning schema in this database yet)."""
    exists = store.scalar("SELECT to_regclass(%s) IS NOT NULL", (f"{SCHEMA}.migrations",))
    if not exists:
        return None
    return [r[0] for r in store.execute("SELECT name FROM migrations ORDER BY applied_at, name")]


def pending(store: PgStore) -> list[str]:
    applied = _recorded(store) or []
    return [m.__name__ for m in MIGRATIONS if m.__name__ not in applied]


def migrate(store: PgStore, report: UpgradeReport | None = None) -> list[str]:
    """Apply pending migrations (each in its own transaction); the names applied now."""
    known = [m.__name__ for m in MIGRATIONS]
    applied = _recorded(store)
    if applied is not None:
        unknown = [name for name in applied if name not in known]
        if unknown:
            raise StoreError(
                f"The team store {store.path} was set up by a newer Kenning (schema {unknown[-1]}). "
                "Upgrade Kenning to use it."
            )
        if all(name in applied for name in known):
            return []
    done: list[str] = []
    try:
        with store.atomic():
            store.execute("SELECT pg_advisory_xact_lock(%s, %s)", (LOCK_SPACE, UPGRADE_LOCK))
            store.execute(f"CREATE SCHEMA IF NOT EXISTS {SCHEMA}")
            store.execute("CREATE EXTENSION IF NOT EXISTS vector SCHEMA public")
            store.execute(
                "CREATE TABLE IF NOT EXISTS migrations (name text PRIMARY KEY, applied_at double precision NOT NULL)"
            )
            now_applied = {r[0] for r in store.execute("SELECT name FROM migrations")}
            for migration in MIGRATIONS:
                if migration.__name__ in now_applied:
                    continue
                if report is not None and now_applied:
                    report(f"Upgrading the team store {store.path}: {_summary(migration)}")
                with store.atomic():
                    migration(store)
                    store.execute(
                        "INSERT INTO migrations (name, applied_at) VALUES (%s, %s)", (migration.__name__, time.time())
                    )
                done.append(migration.__name__)
    except psycopg.errors.InsufficientPrivilege as exc:
        raise StoreUnusable(store.path, "not_set_up", _plain(exc)) from None  # workspace.messages words it
    return done


def _plain(exc: BaseException) -> str:
    first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
    return "".join(ch for ch in first if ch.isprintable())


def _summary(migration: Callable[[PgStore], None]) -> str:
    return (migration.__doc__ or migration.__name__).strip().splitlines()[0]
