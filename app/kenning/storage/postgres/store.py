"""The PostgreSQL backend's Store (kenning.storage.api): a team store and its members.

Each member is a thin adapter over this package's modules, which hold the SQL.

What stays local.  Searching a team store never writes to it: the remembered query
vectors (QueryVectors) are kept in a file on the user's machine, so a read-only role
or a read replica can search, and what a user searched for stays theirs.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from array import array
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

from kenning.core.errors import StoreLockedError
from kenning.core.filters import ChunkFilter
from kenning.core.fsnames import filesystem_name
from kenning.core.logger import get_logger
from kenning.core.types import ChunkDraft, Document, NoteLink, SkippedFile, Source
from kenning.storage import api, query_vectors
from kenning.storage.connection import Store as Connection
from kenning.storage.postgres import documents as docs_repo
from kenning.storage.postgres import lexical, records, vectors
from kenning.storage.postgres.connection import PgStore
from kenning.storage.postgres.filtering import JOIN_DOCUMENTS, filter_condition
from kenning.storage.postgres.schema import LOCK_SPACE
from kenning.storage.postgres.words import indexed_title

if TYPE_CHECKING:
    import numpy as np

    from kenning.core.types import SourceKind

log = get_logger(__name__)

RANKS_ONLY_BELOW = 1e-4  # the same bm25 as FTS5, so the same floor (storage.sqlite_words)
# The indexing locks, session-level advisory locks (they die with the connection):
# (LOCK_SPACE, INDEXING_LOCK) is held exclusively by an indexer of the whole store and
# shared by indexers of some sources, each of which also holds (SOURCE_LOCK_SPACE, id)
# of every source it writes: two machines index different sources side by side, never
# the same one, and never beside an indexer of everything.
INDEXING_LOCK = 10
SOURCE_LOCK_SPACE = 0x4B4553  # "KES": one key per source id
RATE_KEY = "embedding_rate"
RATE_SMOOTHING = 0.3


class _Sources:
    def __init__(self, store: PostgresStore) -> None:
        self._s = store

    def list(self) -> list[Source]:
        return records.list_sources(self._s)

    def get(self, name: str) -> Source:
        return records.get_source(self._s, name)

    def add(
        self, *, kind: SourceKind, root: str, name: str, include: tuple[str, ...] = (), exclude: tuple[str, ...] = ()
    ) -> Source:
        return records.insert_source(self._s, kind=kind, root=root, name=name, include=include, exclude=exclude)

    def remove(self, source_id: int) -> None:
        records.delete_source(self._s, source_id)

    def set_enabled(self, source_id: int, enabled: bool) -> None:
        records.set_enabled(self._s, source_id, enabled)

    def set_globs(self, source_id: int, include: tuple[str, ...], exclude: tuple[str, ...]) -> None:
        records.set_globs(self._s, source_id, include, exclude)

    def mark_indexed(self, source_id: int, when: float) -> None:
        records.mark_indexed(self._s, source_id, when)


def _document(row: tuple[Any, ...]) -> api.IndexedDocument:
    id_, source_id, rel_path, title, kind, tags = row
    return api.IndexedDocument(int(id_), int(source_id), rel_path, title, kind, tuple(tags.split()))


class _Documents:
    def __init__(self, store: PostgresStore) -> None:
        self._s = store

    def known(self, source_id: int) -> dict[str, api.KnownDocument]:
        return {
            rel: api.KnownDocument(k.rel_path, k.id, k.sha256, k.size, k.mtime, k.chunking_version)
            for rel, k in docs_repo.known_documents(self._s, source_id).items()
        }

    def replace(
        self,
        record: Document,
        chunks: list[ChunkDraft],
        refs: Mapping[int, set[str]],
        embed_shas: Mapping[int, str],
        links: Mapping[int, Sequence[NoteLink]] | None = None,
    ) -> int:
        notes = None if links is None else {o: list(found) for o, found in links.items()}
        return docs_repo.replace_document(self._s, record, chunks, dict(refs), dict(embed_shas), notes)

    def touch(self, document_id: int, mtime: float) -> None:
        docs_repo.touch_document(self._s, document_id, mtime)

    def delete(self, document_ids: Sequence[int]) -> None:
        docs_repo.delete_documents(self._s, list(document_ids))

    def delete_parts_after(self, source_id: int, container: str, count: int) -> int:
        return docs_repo.delete_parts_after(self._s, source_id, container, count)

    def replace_skipped(self, source_id: int, skipped: Sequence[SkippedFile]) -> None:
        docs_repo.replace_skipped(self._s, source_id, list(skipped))

    def update_skipped(self, source_id: int, checked: Collection[str], skipped: Sequence[SkippedFile]) -> None:
        docs_repo.update_skipped(self._s, source_id, set(checked), list(skipped))

    def skipped(self, source_id: int | None = None) -> list[tuple[str, SkippedFile]]:
        return docs_repo.skipped_files(self._s, source_id)

    def kind(self, source_name: str, rel_path: str) -> str | None:
        return docs_repo.document_kind(self._s, source_name, rel_path)

    def text(self, source_name: str, rel_path: str) -> str:
        lines: list[str] = []
        for line_start, text in docs_repo.document_lines(self._s, source_name, rel_path):
            parts = text.split("\n")
            if lines and line_start <= len(lines):  # the rest of a long line cut into several chunks
                lines[-1] += " " + parts.pop(0)
            lines.extend([""] * (line_start - 1 - len(lines)))
            lines.extend(parts)
        return "\n".join(lines)

    def find(self, source_id: int, rel_path: str) -> api.IndexedDocument | None:
        rows = self._s.execute(
            "SELECT id, source_id, rel_path, title, kind, tags FROM documents WHERE source_id = %s AND rel_path = %s",
            (source_id, rel_path),
        )
        return _document(rows[0]) if rows else None

    def at(self, rel_path: str) -> list[api.IndexedDocument]:
        rows = self._s.execute(
            "SELECT id, source_id, rel_path, title, kind, tags FROM documents WHERE rel_path = %s ORDER BY source_id",
            (rel_path,),
        )
        return [_document(r) for r in rows]

    def chunks(self, document_id: int) -> list[api.IndexedChunk]:
        rows = self._s.execute(
            "SELECT id, ord, line_start, line_end, text FROM chunks WHERE document_id = %s ORDER BY ord", (document_id,)
        )
        return [api.IndexedChunk(int(a), int(b), int(c), int(d), str(e)) for a, b, c, d, e in rows]


class _Links:
    def __init__(self, store: PostgresStore) -> None:
        self._s = store

    def notes(self) -> list[api.NoteRow]:
        rows = self._s.execute(
            "SELECT d.id, d.source_id, s.name, s.root, d.rel_path, d.title, d.kind"
            " FROM documents d JOIN sources s ON s.id = d.source_id WHERE s.enabled ORDER BY d.id"
        )
        return [api.NoteRow(int(a), int(b), c, filesystem_name(d), e, f, g) for a, b, c, d, e, f, g in rows]

    def aliases(self) -> list[tuple[int, str]]:
        rows = self._s.execute(
            "SELECT a.document_id, a.alias FROM document_aliases a JOIN documents d ON d.id = a.document_id"
            " JOIN sources s ON s.id = d.source_id WHERE s.enabled ORDER BY a.document_id, a.alias"
        )
        return [(int(d), str(a)) for d, a in rows]

    def links(self) -> list[api.LinkRow]:
        rows = self._s.execute(
            "SELECT c.document_id, l.chunk_id, l.target, l.line, l.embed FROM chunk_links l"
            " JOIN chunks c ON c.id = l.chunk_id JOIN documents d ON d.id = c.document_id"
            " JOIN sources s ON s.id = d.source_id WHERE s.enabled ORDER BY c.document_id, l.line, l.ord"
        )
        return [api.LinkRow(int(a), int(b), c, int(d), int(e)) for a, b, c, d, e in rows]

    def chunk_texts(self, chunk_ids: Sequence[int]) -> dict[int, api.ChunkText]:
        rows = self._s.execute(
            "SELECT id, document_id, line_start, text FROM chunks WHERE id = ANY(%s)", (sorted(set(chunk_ids)),)
        )
        return {int(a): api.ChunkText(int(a), int(b), int(c), d) for a, b, c, d in rows}

    def chunks_saying(self, words: str, source_id: int, limit: int) -> list[api.ChunkText]:
        from kenning.storage.postgres.words import phrase_query

        query = phrase_query(self._s.analyzer.tokenize(words))
        if not query:
            return []
        rows = self._s.execute(
            "SELECT c.id, c.document_id, c.line_start, c.text FROM chunks c JOIN documents d ON d.id = c.document_id"
            " WHERE c.words @@ %s::tsquery AND d.source_id = %s ORDER BY c.document_id, c.ord LIMIT %s",
            (query, source_id, limit),
        )
        return [api.ChunkText(int(a), int(b), int(c), d) for a, b, c, d in rows]


class _Chunks:
    def __init__(self, store: PostgresStore) -> None:
        self._s = store

    def rows(self, chunk_ids: Sequence[int]) -> dict[int, api.ChunkRow]:
        return {r["chunk_id"]: api.ChunkRow(**r) for r in records.chunk_rows(self._s, list(chunk_ids))}

    def mentioned_paths(self, chunk_ids: Sequence[int]) -> dict[int, list[str]]:
        return records.mentioned_paths(self._s, list(chunk_ids))

    def count(self) -> int:
        return records.count_chunks(self._s)

    def newest_documents(self, chunk_filter: ChunkFilter, limit: int) -> list[api.DatedChunk]:
        return [api.DatedChunk(a, b, c) for a, b, c in records.newest_documents(self._s, chunk_filter, limit)]


class _Keywords:
    def __init__(self, store: PostgresStore) -> None:
        self._s = store

    def _items(self, query: api.KeywordQuery) -> tuple[list[lexical.Item], list[lexical.Item]]:
        analyzer = self._s.analyzer
        items = [analyzer.tokens(t) for t in query.terms]
        items += [analyzer.tokenize(" ".join(p)) for p in dict.fromkeys(query.phrases)]
        return items, [analyzer.tokens(t) for t in query.also_scoring]

    def ranked(
        self,
        index: api.LexicalIndex,
        query: api.KeywordQuery,
        chunk_filter: ChunkFilter,
        limit: int,
        *,
        weights: tuple[float, float],
        selective: bool = False,
    ) -> api.KeywordList:
        if query.is_empty or limit <= 0:
            return api.KeywordList([])
        if index == "trigram":
            strings = [*query.terms, *(" ".join(p) for p in dict.fromkeys(query.phrases))]
            rows = lexical.ranked_substrings(
                self._s, strings, weights, limit, keep=lambda ids: records.allowed(self._s, ids, chunk_filter)
            )
        else:
            items, also = self._items(query)
            rows = lexical.ranked(self._s, items, weights, limit, chunk_filter, also_scoring=also)
        ranked = [api.Ranked(r.chunk_id, r.score) for r in rows]
        best = max((r.score for r in ranked), default=0.0)
        return api.KeywordList(ranked, by_rank_only=0.0 < best < RANKS_ONLY_BELOW)

    def count_total(
        self,
        queries: Mapping[api.LexicalIndex, api.KeywordQuery],
        also: Sequence[int],
        chunk_filter: ChunkFilter,
        cap: int,
    ) -> api.MatchCount:
        from kenning.storage.postgres.words import GRAM, any_query

        found: list[str] = ["SELECT unnest(%s::bigint[]) AS id"]
        params: list[object] = [list(also)]
        for index, query in queries.items():
            if query.is_empty:
                continue
            if index == "porter":
                items, _ = self._items(query)
                tsquery = any_query(items)
                if tsquery:
                    found.append("SELECT id FROM chunks WHERE words @@ %s::tsquery")
                    params.append(tsquery)
                continue
            from kenning.storage.substrings import spread_grams

            for term in [*query.terms, *(" ".join(p) for p in query.phrases)]:
                if len(term) < GRAM:
                    continue
                found.append(
                    "SELECT id FROM chunks WHERE grams @> %s::text[] AND (strpos(lower(text), %s) > 0"
                    " OR strpos(lower(CASE WHEN doc_words = '' THEN title ELSE title || E'\\n' || doc_words END), %s) > 0)"
                )
                params.extend([spread_grams(term), term.lower(), term.lower()])
        condition = filter_condition(chunk_filter)
        rows = self._s.execute(
            "WITH found(id) AS (" + " UNION ".join(found) + "),"
            f" allowed AS (SELECT c.document_id FROM found JOIN chunks c ON c.id = found.id {JOIN_DOCUMENTS}"
            f"   WHERE {condition.sql} LIMIT %s)"
            " SELECT count(*), count(DISTINCT document_id) FROM allowed",
            (*params, *condition.params, cap + 1),
        )
        chunks, files = (int(rows[0][0]), int(rows[0][1])) if rows else (0, 0)
        return api.MatchCount(min(chunks, cap), files, chunks > cap)


class _Terms:
    def __init__(self, store: PostgresStore) -> None:
        self._s = store

    def vocabulary(self) -> dict[str, int]:
        return lexical.vocabulary(self._s)

    def counts(self, term: str) -> api.TermCounts:
        return api.TermCounts(*lexical.term_counts(self._s, term))

    def counts_of(self, terms: Sequence[str]) -> dict[str, api.TermCounts]:
        found = lexical.terms_counts(self._s, list(dict.fromkeys(terms)))
        return {t: api.TermCounts(*found.get(t, (0, 0))) for t in terms}

    def chunks_with(self, words: str) -> int:
        tokens = self._s.analyzer.tokens(words)
        if not tokens:
            return 0
        if len(tokens) == 1:
            return lexical.term_chunks(self._s, tokens[0])
        return lexical.count_matching(self._s, [tokens], cap=2**62)

    def count_together(
        self, all_of: Sequence[str], any_of: Sequence[str], cap: int, chunk_filter: ChunkFilter | None = None
    ) -> int:
        from kenning.storage.postgres.words import any_query, phrase_query

        analyzer = self._s.analyzer
        parts = [f"({phrase_query(analyzer.tokens(w))})" for w in all_of if analyzer.tokens(w)]
        alternatives = any_query(analyzer.tokens(w) for w in any_of)
        if any_of and not alternatives:
            return 0
        if alternatives:
            parts.append(f"({alternatives})")
        if not parts or len(parts) < len(all_of) + (1 if any_of else 0):
            return 0  # a word of no token matches nothing (as an empty FTS5 string)
        return lexical.count_query(self._s, " & ".join(parts), cap, chunk_filter)

    def count_each(self, words: Sequence[str], cap: int, chunk_filter: ChunkFilter | None = None) -> dict[str, int]:
        from kenning.storage.postgres.words import phrase_query

        tokens = {w: self._s.analyzer.tokens(w) for w in dict.fromkeys(words)}
        asked = {w: t for w, t in tokens.items() if phrase_query(t)}
        counted = dict(zip(asked, lexical.count_items(self._s, list(asked.values()), cap, chunk_filter)))
        return {w: counted.get(w, 0) for w in dict.fromkeys(words)}  # a word of no token matches nothing

    def texts_with(self, word: str, limit: int, chunk_filter: ChunkFilter | None = None) -> list[str]:
        tokens = self._s.analyzer.tokens(word)
        return lexical.texts_with_term(self._s, tokens, limit, chunk_filter) if tokens else []


class _Vectors:
    # nearest() walks the index on a connection of its own, so a search runs it while
    # the keyword statements run on the store's connection (api.Vectors.concurrent).
    concurrent = True

    def __init__(self, store: PostgresStore) -> None:
        self._s = store
        self._walker: PgStore | None = None
        self._walker_lock = threading.Lock()
        # The model's settings a walk checks, with the change token they were read under:
        # while the store's token (its last read, a search's first ask) is the same, no
        # write changed them, and the walk does not ask again.
        self._settings: tuple[int, dict[str, str]] | None = None
        self._warming: threading.Thread | None = None
        self._stop_warming = threading.Event()
        self.warmed: vectors.WarmUp | None = None  # what the last warm() did, once done

    def _walk_on(self) -> PgStore:
        """The walk's connection (made on first use), or the store's own while a
        transaction of ours is open there (the walk must see what it wrote)."""
        if not self._s.idle():
            return self._s
        with self._walker_lock:
            if self._walker is None:
                self._walker = PgStore(self._s.target)
            return self._walker

    def close(self) -> None:
        self._stop_warming.set()
        self.wait_warm()
        with self._walker_lock:
            if self._walker is not None:
                self._walker.close()
                self._walker = None

    def prepare(self, fingerprint: str, dim: int) -> None:
        vectors.prepare(self._s, fingerprint, dim)

    def count_pending(self) -> int:
        return vectors.count_pending(self._s)

    def cached(self, fingerprint: str, shas: Sequence[str]) -> dict[str, bytes]:
        return vectors.cached_vectors(self._s, fingerprint, list(shas))

    def write(self, fingerprint: str, items: Sequence[tuple[int, str, bytes]]) -> None:
        vectors.write_vectors(self._s, fingerprint, list(items))

    def collect_unused(self) -> int:
        return vectors.collect_unused(self._s)

    def has_vectors(self, fingerprint: str) -> bool:
        return vectors.has_vectors(self._s, fingerprint)

    def count(self, fingerprint: str) -> int:
        return vectors.count_vectors(self._s, fingerprint)

    def vectors_of(self, fingerprint: str, chunk_ids: Sequence[int]) -> dict[int, np.ndarray]:
        return vectors.vectors_for_chunks(self._s, fingerprint, list(chunk_ids))

    def pending_openings(self, fingerprint: str, after_id: int, limit: int, parts: int) -> list[api.PendingOpening]:
        return vectors.pending_openings(self._s, fingerprint, after_id, limit, parts)

    def write_openings(self, fingerprint: str, items: Sequence[tuple[int, str, bytes | None]]) -> None:
        vectors.write_openings(self._s, fingerprint, list(items))

    def openings_of(self, fingerprint: str, chunk_ids: Sequence[int]) -> dict[int, np.ndarray]:
        return vectors.openings_of(self._s, fingerprint, list(chunk_ids))

    def nearest(
        self, fingerprint: str, query: np.ndarray, chunk_filter: ChunkFilter, k: int, also: Collection[int] = ()
    ) -> api.Candidates:
        """The index's nearest max(CANDIDATES, CANDIDATES_PER_RESULT * k) (as many as the
        SQLite scan hands on for rescoring, so meaning feedback re-ranks a pool as wide), or
        what one walk of the index leaves of them under the filter (vectors.nearest_rows)."""
        import numpy as np

        pool = max(vectors.CANDIDATES, vectors.CANDIDATES_PER_RESULT * k)
        walker = self._walk_on()
        token, known = self._s.last_version, self._settings
        held = known[1] if known is not None and token is not None and known[0] == token else None
        if held is None and token is not None:
            held = vectors.model_settings(walker)
            self._settings = (token, held)
        rows = vectors.nearest_rows(
            walker, fingerprint, query, chunk_filter, pool, with_vectors=True, needed=k, held=held
        )
        by_id = {cid: vec for cid, _, vec in rows if vec is not None}
        missing = sorted(set(also) - set(by_id))
        if missing:
            by_id.update(vectors.vectors_for_chunks(self._s, fingerprint, missing))
        if not by_id:
            return api.Candidates.empty()
        ids = np.fromiter(by_id.keys(), dtype=np.int64, count=len(by_id))
        return api.Candidates(ids, np.vstack([by_id[int(c)] for c in ids]).astype(np.float32))

    def warm(self, fingerprint: str, chunk_filter: ChunkFilter | None = None) -> None:
        """Start reading ahead what the first walks would read into the server's cache
        (vectors.warm_index), on a connection and a thread of its own: searches meanwhile
        run beside it, not after it.  Once per store unless a read-ahead failed."""
        with self._walker_lock:
            if self._warming is not None or self._stop_warming.is_set():
                return
            self._warming = threading.Thread(
                target=self._warm,
                args=(fingerprint, chunk_filter or ChunkFilter()),
                name="kenning-pg-warm",
                daemon=True,
            )
            self._warming.start()

    def _warm(self, fingerprint: str, chunk_filter: ChunkFilter) -> None:
        try:
            with PgStore(self._s.target) as own:
                self.warmed = vectors.warm_index(own, fingerprint, chunk_filter, stop=self._stop_warming)
        except Exception:  # a cache: the first searches read what it did not
            log.debug("reading the team store's vector index ahead failed", exc_info=True)
            with self._walker_lock:
                self._warming = None

    def wait_warm(self, timeout: float | None = None) -> vectors.WarmUp | None:
        """Wait for a read-ahead warm() started; what it did (None: none done)."""
        warming = self._warming
        if warming is not None:
            warming.join(timeout)
        return self.warmed


class _LocalQueryVectors:
    """The query vectors a team store's searches remember, kept on this machine.

    Searching never writes to the team store (a reader may not; a replica cannot), and
    what a user searched for is theirs: the vectors live in a small SQLite file in the
    user's Kenning folder (storage.paths.kenning_home), opened on first use, with the
    SQLite store's own cache code.  A vector depends only on the model and the text, so
    one file serves every team store."""

    FILE = "team-query-vectors.db"

    def __init__(self) -> None:
        self._local: Connection | None = None
        self._guard = threading.Lock()

    def _store(self) -> Connection:
        with self._guard:
            if self._local is None:
                from kenning.storage.paths import kenning_home

                local = Connection(kenning_home() / self.FILE)
                local.conn.execute(query_vectors.TABLE_DDL)
                self._local = local
            return self._local

    def recall(self, fingerprint: str, text: str, dim: int) -> tuple[np.ndarray, float] | None:
        return query_vectors.recall(self._store(), fingerprint, text, dim)

    def remember(
        self, fingerprint: str, new: Mapping[str, np.ndarray], used: Iterable[str], *, now: float, cap: int
    ) -> bool:
        return query_vectors.remember(self._store(), fingerprint, new, used, now=now, cap=cap)

    def count(self) -> int:
        return query_vectors.count(self._store())

    def close(self) -> None:
        with self._guard:
            if self._local is not None:
                self._local.close()
                self._local = None


class _Queue:
    def __init__(self, store: PostgresStore) -> None:
        self._s = store

    def order(self) -> array[int]:
        """The pending chunks, in embedding order; while an indexer holds some sources
        (indexing_lock), theirs only: another machine's indexer embeds its own."""
        held = self._s.indexing_sources
        only = "" if held is None else " AND d.source_id = ANY(%s)"
        rows = self._s.execute(
            "WITH pending_per_source AS (SELECT d.source_id, count(*) AS pending FROM chunks c"
            "   JOIN documents d ON d.id = c.document_id WHERE c.vector_fp IS NULL GROUP BY d.source_id)"
            " SELECT c.id FROM chunks c JOIN documents d ON d.id = c.document_id"
            " JOIN pending_per_source p ON p.source_id = d.source_id WHERE c.vector_fp IS NULL"
            + only
            + " ORDER BY d.kind LIKE 'code:%%', p.pending, coalesce(d.updated_at, d.mtime) DESC, d.id, c.ord",
            () if held is None else (list(held),),
        )
        return array("q", (int(r[0]) for r in rows))

    def pending_in_order(self, chunk_ids: Sequence[int]) -> list[api.PendingChunk]:
        rows = self._s.execute(
            "SELECT c.id, c.title, c.text, d.kind, d.rel_path, c.input_sha, d.source_id, c.doc_words FROM chunks c"
            " JOIN documents d ON d.id = c.document_id WHERE c.vector_fp IS NULL AND c.id = ANY(%s)",
            (list(chunk_ids),),
        )
        found = {
            int(r[0]): api.PendingChunk(int(r[0]), r[1], r[2], r[3], r[4], r[5], int(r[6]), r[7] or "") for r in rows
        }
        return [found[i] for i in chunk_ids if i in found]

    def record_rate(self, chunks_per_second: float, now: float | None = None) -> None:
        if chunks_per_second <= 0:
            return
        previous = self.rate()
        rate = chunks_per_second if previous is None else previous + RATE_SMOOTHING * (chunks_per_second - previous)
        value = {"chunks_per_second": rate, "measured_at": time.time() if now is None else now}
        records.set_setting(self._s, RATE_KEY, json.dumps(value))

    def rate(self) -> float | None:
        value = _json(records.get_setting(self._s, RATE_KEY))
        try:
            rate = float(value["chunks_per_second"])
        except (TypeError, KeyError, ValueError):
            return None
        return rate if rate > 0 else None


def _json(raw: str | None, default: Any = None) -> Any:
    if raw is None:
        return default
    try:
        return json.loads(raw)
    except ValueError:
        return default


class _Settings:
    def __init__(self, store: PostgresStore) -> None:
        self._s = store

    def get(self, key: str) -> str | None:
        return records.get_setting(self._s, key)

    def set(self, key: str, value: str) -> None:
        records.set_setting(self._s, key, value)

    def get_json(self, key: str, default: Any = None) -> Any:
        return _json(records.get_setting(self._s, key), default)

    def set_json(self, key: str, value: Any) -> None:
        records.set_setting(self._s, key, json.dumps(value))


class _GitState:
    def __init__(self, store: PostgresStore) -> None:
        self._s = store

    def replace(self, source_id: int, last_commit: Mapping[str, float | None]) -> None:
        docs_repo.replace_git_paths(self._s, source_id, dict(last_commit))

    def path_times(self, paths: Sequence[str]) -> dict[str, float | None]:
        return docs_repo.git_path_times(self._s, list(paths))

    def source_path_times(self, source_id: int, paths: Sequence[str]) -> dict[str, float | None]:
        return docs_repo.source_path_times(self._s, source_id, list(paths))

    def ending_with(self, tails: Sequence[str]) -> dict[str, dict[str, float | None]]:
        out: dict[str, dict[str, float | None]] = {}
        for tail in tails:
            lower = tail.lower()
            rows = self._s.execute(
                "SELECT path, max(last_commit) FROM git_recent WHERE lower(path) = %s OR right(lower(path), %s) = %s"
                " GROUP BY path",
                (lower, len(lower) + 1, "/" + lower),
            )
            out[tail] = {p: t for p, t in rows}
        return out


class _Stats:
    def __init__(self, store: PostgresStore) -> None:
        self._s = store

    def per_source(self) -> dict[int, api.SourceStats]:
        return {sid: api.SourceStats(sid, *counts) for sid, counts in records.source_stats(self._s).items()}

    def size_bytes(self) -> int:
        return records.store_size_bytes(self._s)

    def tag_counts(self) -> dict[str, int]:
        return records.tag_counts(self._s)


class PostgresStore(PgStore):
    """A team store in PostgreSQL (see kenning.storage.api for the contract)."""

    def __init__(self, target: str) -> None:
        super().__init__(target)
        self.sources: api.Sources = _Sources(self)
        self.documents: api.Documents = _Documents(self)
        self.links: api.Links = _Links(self)
        self.chunks: api.Chunks = _Chunks(self)
        self.keywords: api.Keywords = _Keywords(self)
        self.terms: api.Terms = _Terms(self)
        self.analyzer: api.Analyzer = self.words
        self._vectors = _Vectors(self)
        self.vectors: api.Vectors = self._vectors
        self._remembered = _LocalQueryVectors()
        self.query_vectors: api.QueryVectors = self._remembered
        self.queue: api.EmbeddingQueue = _Queue(self)
        self.settings: api.Settings = _Settings(self)
        self.git: api.GitState = _GitState(self)
        self.stats: api.Stats = _Stats(self)
        self.indexing_sources: tuple[int, ...] | None = None  # an indexer's sources, while it holds them

    @property
    def location(self) -> str:
        return self.path

    def last_change(self) -> float | None:
        """When anyone last wrote to the store (epoch seconds), None: never."""
        return records.last_change(self)

    def watching_lock(self) -> AbstractContextManager[None]:
        """Nothing moves a team store aside: watchers need no lock here."""
        return contextlib.nullcontext()

    @contextlib.contextmanager
    def indexing_lock(self, wait_seconds: float = 0.0, *, sources: Sequence[int] | None = None) -> Iterator[None]:
        """An indexer's hold on the sources it writes (None: the whole store), whichever
        machine it runs on: session-level advisory locks, released when the indexer ends
        or its connection is lost.  While some sources are held, the embedding queue
        hands out only their chunks (another indexer embeds its own)."""
        held = None if sources is None else tuple(sorted({int(s) for s in sources}))
        deadline = time.monotonic() + wait_seconds
        while not self._try_indexing_locks(held):
            if time.monotonic() >= deadline:
                raise StoreLockedError(self._locked_message(held))
            time.sleep(0.2)
        self.session_locks += 1
        self.indexing_sources = held
        try:
            yield
        finally:
            self.session_locks -= 1
            self.indexing_sources = None
            try:
                self._release_indexing_locks(held, len(held or ()))
            except Exception:  # the connection is gone: so are its locks
                pass

    def _try_indexing_locks(self, held: tuple[int, ...] | None) -> bool:
        """All of the locks or none; sources in one order everywhere, so two indexers
        never wait for each other in a circle."""
        if held is None:
            return bool(self.scalar("SELECT pg_try_advisory_lock(%s, %s)", (LOCK_SPACE, INDEXING_LOCK)))
        if not self.scalar("SELECT pg_try_advisory_lock_shared(%s, %s)", (LOCK_SPACE, INDEXING_LOCK)):
            return False
        for taken, source_id in enumerate(held):
            if not self.scalar("SELECT pg_try_advisory_lock(%s, %s)", (SOURCE_LOCK_SPACE, source_id)):
                self._release_indexing_locks(held, taken)
                return False
        return True

    def _release_indexing_locks(self, held: tuple[int, ...] | None, taken: int) -> None:
        """Give back the whole store's lock (held None) or the first `taken` sources' locks
        and the shared one."""
        if held is None:
            self.scalar("SELECT pg_advisory_unlock(%s, %s)", (LOCK_SPACE, INDEXING_LOCK))
            return
        for source_id in held[:taken]:
            self.scalar("SELECT pg_advisory_unlock(%s, %s)", (SOURCE_LOCK_SPACE, source_id))
        self.scalar("SELECT pg_advisory_unlock_shared(%s, %s)", (LOCK_SPACE, INDEXING_LOCK))

    def _locked_message(self, held: tuple[int, ...] | None) -> str:
        if held is None:
            return (
                f"Another Kenning indexer is working on the team store {self.path}; "
                "wait for it to finish (or stop it) and try again."
            )
        names = sorted(s.name for s in self.sources.list() if s.id in held)
        return (
            f"Another Kenning indexer is working on {', '.join(names) or 'these sources'} in the team store "
            f"{self.path} (or on the whole store); wait for it to finish (or stop it) and try again."
        )

    def close(self) -> None:
        self._remembered.close()
        self._vectors.close()
        super().close()

    def __enter__(self) -> PostgresStore:
        return self


def _conforms(store: PostgresStore) -> api.Store:
    """mypy checks here that PostgresStore is an api.Store."""
    return store


__all__ = ["PostgresStore", "indexed_title"]
