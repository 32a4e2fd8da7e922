"""Several stores searched as one (issue #23 item 6): the personal store and a team store.

A CombinedStore is a kenning.storage.api.Store over two or more stores, for searching
only: the search engine is handed it and ranks as over one store, by the same rules.

- Each retriever's list is the stores' lists merged by score, then cut: bm25 (both
  backends compute FTS5's bm25, storage/postgres/lexical.py) and cosine (the same model
  is required) are on one scale, so the fusion normalises the merged list by its one
  best score, as it does for a single store.  Nothing is fused twice.
- Ids.  Chunk, document and source ids are each store's own; here a store's id `i`
  becomes `i * n + k` (store k of n), so ids stay unique, ascending within a store, and
  ties still break by id.
- Filters go to every store as they are: `source:notes` finds the source named notes
  in whichever store has one.
- Every chunk row carries its store's label (ChunkRow.store_label, then Hit.store_label).
- The model: every store's vectors must have been made by one model (differing_models()),
  or searching them together would mix unrelated spaces; the caller says so clearly.
- Writes are refused; remembered query vectors are the first (personal) store's.
"""

from __future__ import annotations

import contextlib
import dataclasses
import heapq
from array import array
from collections.abc import Collection, Hashable, Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from kenning.core.errors import StoreError
from kenning.core.filters import ChunkFilter
from kenning.core.types import ChunkDraft, Document, NoteLink, SkippedFile, Source
from kenning.storage import api

if TYPE_CHECKING:
    import numpy as np

    from kenning.core.types import SourceKind

FINGERPRINT_KEY = "vector_fingerprint"  # both backends' setting of the model their vectors are from
READ_ONLY = "Several stores searched together can only be searched; change each store on its own."


def differing_models(stores: Mapping[str, api.Store]) -> dict[str, str] | None:
    """None when every store's vectors come from one model (or a store has none yet); else
    each store's vector fingerprint ("none" for a store without vectors).  The caller words
    it (workspace.messages.model_mismatch_message): storage names no command."""
    models = {label: s.settings.get(FINGERPRINT_KEY) or "none" for label, s in stores.items()}
    if len({fp for fp in models.values() if fp != "none"}) <= 1:
        return None
    return models


class _Ids:
    """Store k of n: its id i is i * n + k here."""

    def __init__(self, count: int) -> None:
        self.n = count

    def out(self, k: int, i: int) -> int:
        return int(i) * self.n + k

    def split(self, ids: Iterable[int]) -> dict[int, list[int]]:
        parts: dict[int, list[int]] = {}
        for c in ids:
            parts.setdefault(int(c) % self.n, []).append(int(c) // self.n)
        return parts


class _Part:
    def __init__(self, combined: CombinedStore) -> None:
        self._c = combined

    @property
    def _stores(self) -> list[api.Store]:
        return self._c.parts


class _Sources(_Part):
    def list(self) -> list[Source]:
        out = [
            dataclasses.replace(s, id=self._c.ids.out(k, s.id))
            for k, store in enumerate(self._stores)
            for s in store.sources.list()
        ]
        return sorted(out, key=lambda s: (s.name, s.id))

    def get(self, name: str) -> Source:
        for k, store in enumerate(self._stores):
            found = [s for s in store.sources.list() if s.name == name]
            if found:
                return dataclasses.replace(found[0], id=self._c.ids.out(k, found[0].id))
        return self._stores[0].sources.get(name)  # its error names the known sources

    def add(
        self, *, kind: SourceKind, root: str, name: str, include: tuple[str, ...] = (), exclude: tuple[str, ...] = ()
    ) -> Source:
        raise StoreError(READ_ONLY)

    def remove(self, source_id: int) -> None:
        raise StoreError(READ_ONLY)

    def set_enabled(self, source_id: int, enabled: bool) -> None:
        raise StoreError(READ_ONLY)

    def set_globs(self, source_id: int, include: tuple[str, ...], exclude: tuple[str, ...]) -> None:
        raise StoreError(READ_ONLY)

    def mark_indexed(self, source_id: int, when: float) -> None:
        raise StoreError(READ_ONLY)


class _Documents(_Part):
    def _doc(self, k: int, d: api.IndexedDocument) -> api.IndexedDocument:
        return dataclasses.replace(d, id=self._c.ids.out(k, d.id), source_id=self._c.ids.out(k, d.source_id))

    def known(self, source_id: int) -> dict[str, api.KnownDocument]:
        k, own = source_id % self._c.ids.n, source_id // self._c.ids.n
        return self._stores[k].documents.known(own)

    def replace(
        self,
        record: Document,
        chunks: list[ChunkDraft],
        refs: Mapping[int, set[str]],
        embed_shas: Mapping[int, str],
        links: Mapping[int, Sequence[NoteLink]] | None = None,
    ) -> int:
        raise StoreError(READ_ONLY)

    def touch(self, document_id: int, mtime: float) -> None:
        raise StoreError(READ_ONLY)

    def delete(self, document_ids: Sequence[int]) -> None:
        raise StoreError(READ_ONLY)

    def delete_parts_after(self, source_id: int, container: str, count: int) -> int:
        raise StoreError(READ_ONLY)

    def replace_skipped(self, source_id: int, skipped: Sequence[SkippedFile]) -> None:
        raise StoreError(READ_ONLY)

    def update_skipped(self, source_id: int, checked: Collection[str], skipped: Sequence[SkippedFile]) -> None:
        raise StoreError(READ_ONLY)

    def skipped(self, source_id: int | None = None) -> list[tuple[str, SkippedFile]]:
        return [row for store in self._stores for row in store.documents.skipped(None)] if source_id is None else []

    def kind(self, source_name: str, rel_path: str) -> str | None:
        for store in self._stores:
            found = store.documents.kind(source_name, rel_path)
            if found is not None:
                return found
        return None

    def text(self, source_name: str, rel_path: str) -> str:
        for store in self._stores:
            if store.documents.kind(source_name, rel_path) is not None:
                return store.documents.text(source_name, rel_path)
        return ""

    def find(self, source_id: int, rel_path: str) -> api.IndexedDocument | None:
        k, own = source_id % self._c.ids.n, source_id // self._c.ids.n
        found = self._stores[k].documents.find(own, rel_path)
        return None if found is None else self._doc(k, found)

    def at(self, rel_path: str) -> list[api.IndexedDocument]:
        return [self._doc(k, d) for k, store in enumerate(self._stores) for d in store.documents.at(rel_path)]

    def chunks(self, document_id: int) -> list[api.IndexedChunk]:
        k, own = document_id % self._c.ids.n, document_id // self._c.ids.n
        return [dataclasses.replace(c, id=self._c.ids.out(k, c.id)) for c in self._stores[k].documents.chunks(own)]


class _Links(_Part):
    def notes(self) -> list[api.NoteRow]:
        ids = self._c.ids
        return [
            dataclasses.replace(r, id=ids.out(k, r.id), source_id=ids.out(k, r.source_id))
            for k, store in enumerate(self._stores)
            for r in store.links.notes()
        ]

    def aliases(self) -> list[tuple[int, str]]:
        return [(self._c.ids.out(k, d), a) for k, store in enumerate(self._stores) for d, a in store.links.aliases()]

    def links(self) -> list[api.LinkRow]:
        ids = self._c.ids
        return [
            dataclasses.replace(r, document_id=ids.out(k, r.document_id), chunk_id=ids.out(k, r.chunk_id))
            for k, store in enumerate(self._stores)
            for r in store.links.links()
        ]

    def chunk_texts(self, chunk_ids: Sequence[int]) -> dict[int, api.ChunkText]:
        ids, out = self._c.ids, dict[int, api.ChunkText]()
        for k, own in ids.split(chunk_ids).items():
            for c in self._stores[k].links.chunk_texts(own).values():
                mapped = dataclasses.replace(c, chunk_id=ids.out(k, c.chunk_id), document_id=ids.out(k, c.document_id))
                out[mapped.chunk_id] = mapped
        return out

    def chunks_saying(self, words: str, source_id: int, limit: int) -> list[api.ChunkText]:
        ids = self._c.ids
        k, own = source_id % ids.n, source_id // ids.n
        return [
            dataclasses.replace(c, chunk_id=ids.out(k, c.chunk_id), document_id=ids.out(k, c.document_id))
            for c in self._stores[k].links.chunks_saying(words, own, limit)
        ]


class _Chunks(_Part):
    def rows(self, chunk_ids: Sequence[int]) -> dict[int, api.ChunkRow]:
        ids, out = self._c.ids, dict[int, api.ChunkRow]()
        for k, own in ids.split(chunk_ids).items():
            label = self._c.labels[k]
            for row in self._stores[k].chunks.rows(own).values():
                mapped = dataclasses.replace(
                    row, chunk_id=ids.out(k, row.chunk_id), source_id=ids.out(k, row.source_id), store_label=label
                )
                out[mapped.chunk_id] = mapped
        return out

    def mentioned_paths(self, chunk_ids: Sequence[int]) -> dict[int, list[str]]:
        ids, out = self._c.ids, dict[int, list[str]]()
        for k, own in ids.split(chunk_ids).items():
            out.update((ids.out(k, c), p) for c, p in self._stores[k].chunks.mentioned_paths(own).items())
        return out

    def count(self) -> int:
        return sum(s.chunks.count() for s in self._stores)

    def newest_documents(self, chunk_filter: ChunkFilter, limit: int) -> list[api.DatedChunk]:
        ids = self._c.ids
        every = [
            dataclasses.replace(d, chunk_id=ids.out(k, d.chunk_id))
            for k, store in enumerate(self._stores)
            for d in store.chunks.newest_documents(chunk_filter, limit)
        ]
        return sorted(every, key=lambda d: (-(d.date or float("-inf")), d.chunk_id))[:limit]


def _merged(ids: _Ids, lists: list[tuple[int, list[api.Ranked]]], limit: int) -> list[api.Ranked]:
    """The stores' ranked lists as one: best score first, ties by (combined) id."""
    every = [api.Ranked(ids.out(k, r.chunk_id), r.score) for k, ranked in lists for r in ranked]
    return heapq.nsmallest(limit, every, key=lambda r: (-r.score, r.chunk_id))


class _Keywords(_Part):
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
        found = [
            (k, store.keywords.ranked(index, query, chunk_filter, limit, weights=weights, selective=selective))
            for k, store in enumerate(self._stores)
        ]
        merged = _merged(self._c.ids, [(k, kl.ranked) for k, kl in found], limit)
        by_rank = [kl.by_rank_only for _, kl in found if kl.ranked]
        return api.KeywordList(merged, by_rank_only=bool(by_rank) and all(by_rank))

    def count_total(
        self,
        queries: Mapping[api.LexicalIndex, api.KeywordQuery],
        also: Sequence[int],
        chunk_filter: ChunkFilter,
        cap: int,
    ) -> api.MatchCount:
        parts = self._c.ids.split(also)
        counts = [
            store.keywords.count_total(queries, parts.get(k, []), chunk_filter, cap)
            for k, store in enumerate(self._stores)
        ]
        chunks = sum(c.chunks for c in counts)
        return api.MatchCount(
            min(chunks, cap), sum(c.files for c in counts), chunks > cap or any(c.capped for c in counts)
        )


class _Terms(_Part):
    def vocabulary(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for store in self._stores:
            for term, n in store.terms.vocabulary().items():
                out[term] = out.get(term, 0) + n
        return out

    def counts(self, term: str) -> api.TermCounts:
        found = [s.terms.counts(term) for s in self._stores]
        return api.TermCounts(sum(f.chunks for f in found), sum(f.occurrences for f in found))

    def count_each(self, words: Sequence[str], cap: int, chunk_filter: ChunkFilter | None = None) -> dict[str, int]:
        found = [s.terms.count_each(words, cap, chunk_filter) for s in self._stores]
        return {w: min(cap, sum(f[w] for f in found)) for w in dict.fromkeys(words)}

    def counts_of(self, terms: Sequence[str]) -> dict[str, api.TermCounts]:
        found = [s.terms.counts_of(terms) for s in self._stores]
        return {
            t: api.TermCounts(sum(f[t].chunks for f in found), sum(f[t].occurrences for f in found))
            for t in dict.fromkeys(terms)
        }

    def chunks_with(self, words: str) -> int:
        return sum(s.terms.chunks_with(words) for s in self._stores)

    def count_together(
        self, all_of: Sequence[str], any_of: Sequence[str], cap: int, chunk_filter: ChunkFilter | None = None
    ) -> int:
        return min(cap, sum(s.terms.count_together(all_of, any_of, cap, chunk_filter) for s in self._stores))

    def texts_with(self, word: str, limit: int, chunk_filter: ChunkFilter | None = None) -> list[str]:
        out: list[str] = []
        for store in self._stores:
            out += store.terms.texts_with(word, limit - len(out), chunk_filter) if len(out) < limit else []
        return out


class _Vectors(_Part):
    concurrent = False  # api.Vectors.concurrent: the parts are asked in turn

    def prepare(self, fingerprint: str, dim: int) -> None:
        raise StoreError(READ_ONLY)

    def count_pending(self) -> int:
        return sum(s.vectors.count_pending() for s in self._stores)

    def cached(self, fingerprint: str, shas: Sequence[str]) -> dict[str, bytes]:
        return self._stores[0].vectors.cached(fingerprint, shas)

    def write(self, fingerprint: str, items: Sequence[tuple[int, str, bytes]]) -> None:
        raise StoreError(READ_ONLY)

    def collect_unused(self) -> int:
        return 0

    def has_vectors(self, fingerprint: str) -> bool:
        return any(s.vectors.has_vectors(fingerprint) for s in self._stores)

    def count(self, fingerprint: str) -> int:
        return sum(s.vectors.count(fingerprint) for s in self._stores)

    def vectors_of(self, fingerprint: str, chunk_ids: Sequence[int]) -> dict[int, np.ndarray]:
        ids, out = self._c.ids, dict[int, "np.ndarray"]()
        for k, own in ids.split(chunk_ids).items():
            out.update((ids.out(k, c), v) for c, v in self._stores[k].vectors.vectors_of(fingerprint, own).items())
        return out

    def pending_openings(self, fingerprint: str, after_id: int, limit: int, parts: int) -> list[api.PendingOpening]:
        return []  # searched, never indexed

    def write_openings(self, fingerprint: str, items: Sequence[tuple[int, str, bytes | None]]) -> None:
        raise StoreError(READ_ONLY)

    def openings_of(self, fingerprint: str, chunk_ids: Sequence[int]) -> dict[int, np.ndarray]:
        ids, out = self._c.ids, dict[int, "np.ndarray"]()
        for k, own in ids.split(chunk_ids).items():
            out.update((ids.out(k, c), v) for c, v in self._stores[k].vectors.openings_of(fingerprint, own).items())
        return out

    def nearest(
        self, fingerprint: str, query: np.ndarray, chunk_filter: ChunkFilter, k: int, also: Collection[int] = ()
    ) -> api.Candidates:
        import numpy as np

        ids, parts = self._c.ids, self._c.ids.split(also)
        found = [
            (n, store.vectors.nearest(fingerprint, query, chunk_filter, k, parts.get(n, [])))
            for n, store in enumerate(self._stores)
        ]
        found = [(n, c) for n, c in found if len(c.ids)]
        if not found:
            return api.Candidates.empty()
        return api.Candidates(
            np.concatenate([c.ids.astype(np.int64) * ids.n + n for n, c in found]),
            np.vstack([c.matrix for _, c in found]).astype(np.float32),
        )

    def warm(self, fingerprint: str, chunk_filter: ChunkFilter | None = None) -> None:
        for store in self._stores:
            store.vectors.warm(fingerprint, chunk_filter)


class _Queue(_Part):
    def order(self) -> array[int]:
        return array("q")

    def pending_in_order(self, chunk_ids: Sequence[int]) -> list[api.PendingChunk]:
        return []

    def record_rate(self, chunks_per_second: float, now: float | None = None) -> None:
        """Embedding rates are each store's own."""

    def rate(self) -> float | None:
        return self._stores[0].queue.rate()


class _Settings(_Part):
    """The personal (first) store's settings: searching together takes the user's choices."""

    def get(self, key: str) -> str | None:
        return self._stores[0].settings.get(key)

    def set(self, key: str, value: str) -> None:
        raise StoreError(READ_ONLY)

    def get_json(self, key: str, default: Any = None) -> Any:
        return self._stores[0].settings.get_json(key, default)

    def set_json(self, key: str, value: Any) -> None:
        raise StoreError(READ_ONLY)


class _GitState(_Part):
    def replace(self, source_id: int, last_commit: Mapping[str, float | None]) -> None:
        raise StoreError(READ_ONLY)

    def path_times(self, paths: Sequence[str]) -> dict[str, float | None]:
        out: dict[str, float | None] = {}
        for store in self._stores:
            for path, when in store.git.path_times(paths).items():
                before = out.get(path)
                out[path] = when if before is None or (when is not None and when > before) else before
        return out

    def source_path_times(self, source_id: int, paths: Sequence[str]) -> dict[str, float | None]:
        k, own = source_id % self._c.ids.n, source_id // self._c.ids.n
        return self._stores[k].git.source_path_times(own, paths)

    def ending_with(self, tails: Sequence[str]) -> dict[str, dict[str, float | None]]:
        out: dict[str, dict[str, float | None]] = {t: {} for t in tails}
        for store in self._stores:
            for tail, found in store.git.ending_with(tails).items():
                out[tail].update(found)
        return out


class _Stats(_Part):
    def per_source(self) -> dict[int, api.SourceStats]:
        ids = self._c.ids
        return {
            ids.out(k, sid): dataclasses.replace(st, source_id=ids.out(k, sid))
            for k, store in enumerate(self._stores)
            for sid, st in store.stats.per_source().items()
        }

    def size_bytes(self) -> int:
        return sum(s.stats.size_bytes() for s in self._stores)

    def tag_counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for store in self._stores:
            for tag, n in store.stats.tag_counts().items():
                out[tag] = out.get(tag, 0) + n
        return out


class CombinedStore:
    """Stores searched as one (see the module docstring); labels name them in hits."""

    def __init__(self, stores: Mapping[str, api.Store]) -> None:
        if len(stores) < 2:
            raise ValueError("a combined store needs two stores or more")
        self.labels = list(stores)
        self.parts = list(stores.values())
        self.ids = _Ids(len(self.parts))
        self.sources: api.Sources = _Sources(self)
        self.documents: api.Documents = _Documents(self)
        self.links: api.Links = _Links(self)
        self.chunks: api.Chunks = _Chunks(self)
        self.keywords: api.Keywords = _Keywords(self)
        self.terms: api.Terms = _Terms(self)
        self.analyzer: api.Analyzer = self.parts[0].analyzer  # both backends: FTS5 porter unicode61
        self.vectors: api.Vectors = _Vectors(self)
        self.query_vectors: api.QueryVectors = self.parts[0].query_vectors
        self.queue: api.EmbeddingQueue = _Queue(self)
        self.settings: api.Settings = _Settings(self)
        self.git: api.GitState = _GitState(self)
        self.stats: api.Stats = _Stats(self)

    @property
    def location(self) -> str:
        return " + ".join(p.location for p in self.parts)

    @contextlib.contextmanager
    def atomic(self, *, wait_ms: int | None = None) -> Iterator[None]:
        raise StoreError(READ_ONLY)
        yield  # pragma: no cover

    def version(self) -> Hashable:
        return tuple(p.version() for p in self.parts)

    @contextlib.contextmanager
    def indexing_lock(self, wait_seconds: float = 0.0, *, sources: Sequence[int] | None = None) -> Iterator[None]:
        raise StoreError(READ_ONLY)
        yield  # pragma: no cover

    @contextlib.contextmanager
    def watching_lock(self) -> Iterator[None]:
        raise StoreError(READ_ONLY)
        yield  # pragma: no cover

    def close(self) -> None:
        """The stores are their opener's to close."""

    def __enter__(self) -> CombinedStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _conforms(store: CombinedStore) -> api.Store:
    return store
