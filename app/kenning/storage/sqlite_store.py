"""The SQLite backend's Store (kenning.storage.api): one apsw connection and its members.

Each member is a thin adapter over this backend's repository modules (sources.py,
documents.py, lexical.py...), which hold the SQL.  The store is also the connection
those modules are handed (connection.Store: execute, fetch, atomic), so both can be
used while callers move over; above storage only the api's members are used.
"""

from __future__ import annotations

import contextlib
from array import array
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from functools import cached_property
from pathlib import Path

from kenning import TYPE_CHECKING
from kenning.core.filters import ChunkFilter
from kenning.core.types import ChunkDraft, Document, NoteLink, SkippedFile, Source
from kenning.storage import api, gitstate, lookup, stats, stemming
from kenning.storage import documents as docs_repo
from kenning.storage import links as links_repo
from kenning.storage import queue as queue_repo
from kenning.storage import settings as settings_repo
from kenning.storage import sources as sources_repo
from kenning.storage import vectors as vectors_repo
from kenning.storage.connection import Store as Connection
from kenning.storage.lock import indexing_lock, watching_lock

if TYPE_CHECKING:
    from typing import Any

    import numpy as np

    from kenning.core.types import SourceKind
    from kenning.storage.vector_scan import SignScan


class _Sources:
    def __init__(self, store: SqliteStore) -> None:
        self._store = store

    def list(self) -> list[Source]:
        return sources_repo.list_sources(self._store)

    def get(self, name: str) -> Source:
        return sources_repo.get_source(self._store, name)

    def add(
        self, *, kind: SourceKind, root: str, name: str, include: tuple[str, ...] = (), exclude: tuple[str, ...] = ()
    ) -> Source:
        return sources_repo.insert_source(
            self._store, kind=kind, root=root, name=name, include=include, exclude=exclude
        )

    def remove(self, source_id: int) -> None:
        sources_repo.delete_source(self._store, source_id)

    def set_enabled(self, source_id: int, enabled: bool) -> None:
        sources_repo.set_enabled(self._store, source_id, enabled)

    def set_globs(self, source_id: int, include: tuple[str, ...], exclude: tuple[str, ...]) -> None:
        sources_repo.set_globs(self._store, source_id, include, exclude)

    def mark_indexed(self, source_id: int, when: float) -> None:
        sources_repo.mark_indexed(self._store, source_id, when)


class _Documents:
    def __init__(self, store: SqliteStore) -> None:
        self._store = store

    def known(self, source_id: int) -> dict[str, api.KnownDocument]:
        return docs_repo.known_documents(self._store, source_id)

    def replace(
        self,
        record: Document,
        chunks: list[ChunkDraft],
        refs: Mapping[int, set[str]],
        embed_shas: Mapping[int, str],
        links: Mapping[int, Sequence[NoteLink]] | None = None,
    ) -> int:
        notes = None if links is None else {ord_: list(found) for ord_, found in links.items()}
        return docs_repo.replace_document(self._store, record, chunks, dict(refs), dict(embed_shas), notes)

    def touch(self, document_id: int, mtime: float) -> None:
        docs_repo.touch_document(self._store, document_id, mtime)

    def delete(self, document_ids: Sequence[int]) -> None:
        docs_repo.delete_documents(self._store, list(document_ids))

    def delete_parts_after(self, source_id: int, container: str, count: int) -> int:
        return docs_repo.delete_parts_after(self._store, source_id, container, count)

    def replace_skipped(self, source_id: int, skipped: Sequence[SkippedFile]) -> None:
        docs_repo.replace_skipped(self._store, source_id, list(skipped))

    def update_skipped(self, source_id: int, checked: Collection[str], skipped: Sequence[SkippedFile]) -> None:
        docs_repo.update_skipped(self._store, source_id, set(checked), list(skipped))

    def skipped(self, source_id: int | None = None) -> list[tuple[str, SkippedFile]]:
        return docs_repo.skipped_files(self._store, source_id)

    def kind(self, source_name: str, rel_path: str) -> str | None:
        return docs_repo.document_kind(self._store, source_name, rel_path)

    def text(self, source_name: str, rel_path: str) -> str:
        return docs_repo.document_text(self._store, source_name, rel_path)

    def find(self, source_id: int, rel_path: str) -> api.IndexedDocument | None:
        return lookup.find_document(self._store, source_id, rel_path)

    def at(self, rel_path: str) -> list[api.IndexedDocument]:
        return lookup.documents_at(self._store, rel_path)

    def chunks(self, document_id: int) -> list[api.IndexedChunk]:
        return lookup.document_chunks(self._store, document_id)


class _Links:
    def __init__(self, store: SqliteStore) -> None:
        self._store = store

    def notes(self) -> list[api.NoteRow]:
        return links_repo.notes(self._store)

    def aliases(self) -> list[tuple[int, str]]:
        return links_repo.aliases(self._store)

    def links(self) -> list[api.LinkRow]:
        return links_repo.links(self._store)

    def chunk_texts(self, chunk_ids: Sequence[int]) -> dict[int, api.ChunkText]:
        return links_repo.chunk_texts(self._store, list(chunk_ids))

    def chunks_saying(self, words: str, source_id: int, limit: int) -> list[api.ChunkText]:
        return links_repo.chunks_saying(self._store, words, source_id, limit)


class SqliteAnalyzer:
    """FTS5's porter unicode61 tokenizer (storage.stemming): the same for every SQLite store."""

    def tokenize(self, text: str) -> tuple[str, ...]:
        return stemming.tokenize(text)

    def tokens(self, word: str) -> tuple[str, ...]:
        return stemming.porter_tokens(word)

    def stems(self, words: Iterable[str]) -> Mapping[str, tuple[str, ...]]:
        return stemming.porter_stems(words)

    def known(self) -> Mapping[str, tuple[str, ...]]:
        return stemming.known_stems()


class _Vectors:
    concurrent = False  # api.Vectors.concurrent

    def __init__(self, store: SqliteStore) -> None:
        self._store = store
        self._scans: dict[str, SignScan] = {}

    def prepare(self, fingerprint: str, dim: int) -> None:
        vectors_repo.prepare(self._store, fingerprint, dim)

    def count_pending(self) -> int:
        return vectors_repo.count_pending(self._store)

    def cached(self, fingerprint: str, shas: Sequence[str]) -> dict[str, bytes]:
        return vectors_repo.cached_vectors(self._store, fingerprint, list(shas))

    def write(self, fingerprint: str, items: Sequence[tuple[int, str, bytes]]) -> None:
        vectors_repo.write_vectors(self._store, fingerprint, list(items))

    def collect_unused(self) -> int:
        return vectors_repo.collect_unused_embeddings(self._store)

    def has_vectors(self, fingerprint: str) -> bool:
        return vectors_repo.has_vectors(self._store, fingerprint)

    def count(self, fingerprint: str) -> int:
        return vectors_repo.count_vectors(self._store, fingerprint)

    def vectors_of(self, fingerprint: str, chunk_ids: Sequence[int]) -> dict[int, np.ndarray]:
        return vectors_repo.vectors_for_chunks(self._store, fingerprint, list(chunk_ids)) if chunk_ids else {}

    def pending_openings(self, fingerprint: str, after_id: int, limit: int, parts: int) -> list[api.PendingOpening]:
        return vectors_repo.pending_openings(self._store, fingerprint, after_id, limit, parts)

    def write_openings(self, fingerprint: str, items: Sequence[tuple[int, str, bytes | None]]) -> None:
        vectors_repo.write_openings(self._store, fingerprint, list(items))

    def openings_of(self, fingerprint: str, chunk_ids: Sequence[int]) -> dict[int, np.ndarray]:
        return vectors_repo.openings_of(self._store, fingerprint, list(chunk_ids)) if chunk_ids else {}

    def scan(self, fingerprint: str) -> SignScan:
        """This fingerprint's in-memory scan (one per store: every engine over it shares it)."""
        if fingerprint not in self._scans:
            from kenning.storage.vector_scan import SignScan  # numpy: only for meaning search

            self._scans[fingerprint] = SignScan(self._store, fingerprint)
        return self._scans[fingerprint]

    def nearest(
        self, fingerprint: str, query: np.ndarray, chunk_filter: ChunkFilter, k: int, also: Collection[int] = ()
    ) -> api.Candidates:
        return self.scan(fingerprint).nearest(query, chunk_filter, k, also)

    def warm(self, fingerprint: str, chunk_filter: ChunkFilter | None = None) -> None:
        self.scan(fingerprint).load(chunk_filter)


class _QueryVectors:
    """The remembered query vectors (storage.query_vectors, imported by a meaning search only)."""

    def __init__(self, store: SqliteStore) -> None:
        self._store = store

    def recall(self, fingerprint: str, text: str, dim: int) -> tuple[np.ndarray, float] | None:
        from kenning.storage import query_vectors

        return query_vectors.recall(self._store, fingerprint, text, dim)

    def remember(
        self, fingerprint: str, new: Mapping[str, np.ndarray], used: Iterable[str], *, now: float, cap: int
    ) -> bool:
        from kenning.storage import query_vectors

        return query_vectors.remember(self._store, fingerprint, new, used, now=now, cap=cap)

    def count(self) -> int:
        from kenning.storage import query_vectors

        return query_vectors.count(self._store)


class _Queue:
    def __init__(self, store: SqliteStore) -> None:
        self._store = store

    def order(self) -> array[int]:
        return queue_repo.embedding_queue(self._store)

    def pending_in_order(self, chunk_ids: Sequence[int]) -> list[api.PendingChunk]:
        return queue_repo.pending_chunks_in_order(self._store, list(chunk_ids))

    def record_rate(self, chunks_per_second: float, now: float | None = None) -> None:
        queue_repo.record_rate(self._store, chunks_per_second, now)

    def rate(self) -> float | None:
        return queue_repo.embedding_rate(self._store)


class _Settings:
    def __init__(self, store: SqliteStore) -> None:
        self._store = store

    def get(self, key: str) -> str | None:
        return settings_repo.get_setting(self._store, key)

    def set(self, key: str, value: str) -> None:
        settings_repo.set_setting(self._store, key, value)

    def get_json(self, key: str, default: Any = None) -> Any:
        return settings_repo.get_json(self._store, key, default)

    def set_json(self, key: str, value: Any) -> None:
        settings_repo.set_json(self._store, key, value)


class _GitState:
    def __init__(self, store: SqliteStore) -> None:
        self._store = store
        self._names = gitstate.PathsByName()

    def replace(self, source_id: int, last_commit: Mapping[str, float | None]) -> None:
        gitstate.replace_git_paths(self._store, source_id, dict(last_commit))

    def path_times(self, paths: Sequence[str]) -> dict[str, float | None]:
        return gitstate.git_path_times(self._store, list(paths))

    def source_path_times(self, source_id: int, paths: Sequence[str]) -> dict[str, float | None]:
        return gitstate.source_path_times(self._store, source_id, list(paths))

    def ending_with(self, tails: Sequence[str]) -> dict[str, dict[str, float | None]]:
        return self._names.ending_with(self._store, list(tails))


class _Stats:
    def __init__(self, store: SqliteStore) -> None:
        self._store = store

    def per_source(self) -> dict[int, api.SourceStats]:
        return stats.source_stats(self._store)

    def size_bytes(self) -> int:
        return stats.store_size_bytes(self._store)

    def tag_counts(self) -> dict[str, int]:
        return stats.tag_counts(self._store)


class SqliteStore(Connection):
    """A store in one SQLite file (see kenning.storage.api for the contract)."""

    def __init__(self, path: Path | str) -> None:
        super().__init__(path)
        self.sources: api.Sources = _Sources(self)
        self.documents: api.Documents = _Documents(self)
        self.links: api.Links = _Links(self)
        self.analyzer: api.Analyzer = SqliteAnalyzer()
        self._vectors = _Vectors(self)
        self.vectors: api.Vectors = self._vectors
        self.query_vectors: api.QueryVectors = _QueryVectors(self)
        self.queue: api.EmbeddingQueue = _Queue(self)
        self.settings: api.Settings = _Settings(self)
        self.git: api.GitState = _GitState(self)
        self.stats: api.Stats = _Stats(self)

    @cached_property
    def chunks(self) -> api.Chunks:
        from kenning.storage.sqlite_words import SqliteChunks

        return SqliteChunks(self)

    @cached_property
    def keywords(self) -> api.Keywords:
        from kenning.storage.sqlite_words import SqliteKeywords

        return SqliteKeywords(self)

    @cached_property
    def terms(self) -> api.Terms:
        from kenning.storage.sqlite_words import SqliteTerms

        return SqliteTerms(self)

    def vector_scan(self, fingerprint: str) -> SignScan:
        """The in-memory scan nearest() uses for this fingerprint (benchmarks read its size)."""
        return self._vectors.scan(fingerprint)

    @property
    def location(self) -> str:
        return str(self.path)

    @contextlib.contextmanager
    def indexing_lock(self, wait_seconds: float = 0.0, *, sources: Sequence[int] | None = None) -> Iterator[None]:
        """One indexer per file whatever `sources` names (one writer at a time anyway)."""
        with indexing_lock(self.path, wait_seconds=wait_seconds):
            yield

    def watching_lock(self) -> AbstractContextManager[None]:
        return watching_lock(self.path)

    def __enter__(self) -> SqliteStore:
        return self


def _conforms(store: SqliteStore) -> api.Store:
    """mypy checks here that SqliteStore is an api.Store (a Protocol is checked structurally)."""
    return store
