"""The SQLite backend's nearest-vector search: sign bits in memory, rescored from the store.

The process holds one bit per dimension of every current vector (its sign: 48 bytes
at 384 dimensions, 48 MB at a million chunks, where the float32 matrix was 1.5 GB).
A query ranks every allowed row by Hamming distance to its own signs; the best
RESCORE_CANDIDATES are returned with their float32 vectors read from the store, and
search rescores them exactly (search.vector): the list is ordered by true cosine, and
tests/benchmarks/bench_quantised.py measures that it finds the exact top 10
(docs/architecture.md §10).  Filters become a boolean mask over the rows, computed
by the store before ranking, so the top k is taken among allowed chunks only.

One scan per (store connection, fingerprint): every engine over the store shares it.
Why not sqlite-vec's vec0: the same k=400 candidates under the default filter took
30-200x as long there at 100k-1M rows (tests/benchmarks/bench_vec0.py, figures in
docs/architecture.md §10).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Collection
from dataclasses import replace

import numpy as np

from kenning.core.filters import ChunkFilter
from kenning.core.records import Record
from kenning.storage import quantised
from kenning.storage import vectors as vectors_repo
from kenning.storage.api import STALE_SECONDS, Candidates
from kenning.storage.chunks import allowed_chunk_ids
from kenning.storage.connection import Store
from kenning.storage.lexical import allowed

# While an indexer writes vectors every second, reloading the whole matrix for each
# query would cost more than the search: newly embedded chunks join within this delay.
# A filter's mask (every chunk the filter allows) is rebuilt on the same clock: while the
# indexer commits, rebuilding it per query was 22 ms of a 90 ms search at 20k chunks
# (bench_gui_responsiveness.py --profile).  The few rows a scan picks are checked against
# the filter exactly when their mask is older than the store, so a chunk the filter no
# longer allows (its source disabled meanwhile) is never returned.
RELOAD_INTERVAL_SECONDS = STALE_SECONDS
# Between full reloads only the codes written since the copy's vector generation are
# read (each code row records the generation that wrote it: m010), merged into the copy
# in chunk-id order, and the filters' masks are extended by those rows: at a million
# chunks a full reload reads 48 MB of codes and every chunk's filter columns.  Writes
# come in any id order (the embedding queue goes by value, and a team store has several
# writers), so a generation, not the last id, says what the copy holds.
# A full reload now and then drops the codes of chunks deleted meanwhile (until then
# they only take a candidate's place: rescoring reads live vectors, and finds none).
FULL_RELOAD_SECONDS = 60.0
# Rows rescored at full precision after the binary scan; bench_quantised.py chose it
# (recall@10 against exact cosine on Cranfield and NPL).  A deeper list needs more: the
# sign bits blur the order further down, and with 400 rows for a 300-deep list (kenning
# eval's 100 documents) the meaning list's Recall@100 on NPL was 0.6059 against 0.6088
# with 4 rows per result asked for (nDCG@10 unchanged).
RESCORE_CANDIDATES = 400
RESCORE_PER_RESULT = 4


class _Loaded(Record):
    generation: int  # every code written up to this vector generation is held
    loaded_at: float
    full_at: float  # when every row was last read
    ids: np.ndarray  # int64, ascending: a chunk's row is found by binary search
    codes: quantised.SignCodes  # every row's sign bits, laid out for the scan

    def rows_of(self, chunk_ids: list[int]) -> tuple[list[int], np.ndarray]:
        """(the chunk ids present, their rows)."""
        wanted = np.asarray(chunk_ids, dtype=np.int64)
        rows = np.searchsorted(self.ids, wanted)
        rows = np.minimum(rows, max(len(self.ids) - 1, 0))
        present = self.ids[rows] == wanted if len(self.ids) else np.zeros(len(wanted), dtype=bool)
        return [int(c) for c in wanted[present]], rows[present]


class _Mask(Record, frozen=True):
    """The loaded rows a filter allows, as of one store version."""

    generation: int
    version: tuple[int, int]
    built_at: float
    rows: np.ndarray  # bool per loaded row
    exact: bool = True  # False: the store changed since; the scan's picks are checked again


class SignScan:
    """Quantised copies of the current vectors of one fingerprint, reloaded when the store changes."""

    def __init__(self, store: Store, fingerprint: str) -> None:
        self.store = store
        self.fingerprint = fingerprint
        self._loaded: _Loaded | None = None
        self._masks: dict[ChunkFilter, _Mask] = {}
        self._lock = threading.Lock()

    @property
    def memory_bytes(self) -> int:
        """What the scan holds in memory (for benchmarks and the docs' figures)."""
        loaded = self._loaded
        return 0 if loaded is None else int(loaded.ids.nbytes) + loaded.codes.nbytes

    @property
    def rows_held(self) -> int:
        loaded = self._loaded
        return 0 if loaded is None else len(loaded.ids)

    def load(self, condition: ChunkFilter | None = None) -> None:
        """Read the codes now rather than at the first search (0.6 s at a million chunks),
        and the rows the filter allows (30-50 ms at 100k chunks) when one is given."""
        loaded = self._current()
        if condition is not None:
            self._mask(loaded, condition)

    def _generation(self) -> int:
        return int(vectors_repo.generation(self.store))

    def _current(self) -> _Loaded:
        generation = self._generation()
        with self._lock:
            loaded, now = self._loaded, time.monotonic()
            if (
                loaded is None
                or not len(loaded.ids)
                or (loaded.generation != generation and now - loaded.full_at >= FULL_RELOAD_SECONDS)
            ):
                self._loaded = None  # the old copy goes before the new one is built
                self._loaded = self._load(generation)
                self._masks.clear()
            elif loaded.generation != generation and now - loaded.loaded_at >= RELOAD_INTERVAL_SECONDS:
                self._loaded = self._append(loaded, generation)
            assert self._loaded is not None
            return self._loaded

    def _read(self, since: int) -> tuple[np.ndarray, np.ndarray] | None:
        """(ids ascending, uint8 code rows) of the current vectors written after generation
        `since` (0: all of them), or None."""
        id_pages, code_pages = [], []
        for ids, page in vectors_repo.code_pages(self.store, self.fingerprint, since=since):
            id_pages.append(ids)
            code_pages.append(page)
        return (np.concatenate(id_pages), np.concatenate(code_pages)) if id_pages else None

    def _load(self, generation: int) -> _Loaded:
        now = time.monotonic()
        found = self._read(0)
        if found is None:
            empty = quantised.SignCodes.from_rows(np.zeros((0, 0), np.uint8))
            return _Loaded(generation, now, now, np.zeros(0, dtype=np.int64), empty)
        return _Loaded(generation, now, now, found[0], quantised.SignCodes.from_rows(found[1]))

    def _append(self, loaded: _Loaded, generation: int) -> _Loaded:
        """The copy with the codes written since its generation merged in by chunk id, masks
        extended.  A chunk already held keeps its row: under one fingerprint a chunk's
        vector never changes (new text is a new chunk), so its code is the same."""
        found = self._read(loaded.generation)
        new_ids = np.zeros(0, dtype=np.int64)
        order: np.ndarray | None = None
        if found is None:
            grown = replace(loaded, generation=generation, loaded_at=time.monotonic())
        else:
            fresh = ~np.isin(found[0], loaded.ids)
            new_ids = found[0][fresh]
            ids, codes = np.concatenate([loaded.ids, new_ids]), loaded.codes.extended(found[1][fresh])
            if len(loaded.ids) and len(new_ids) and new_ids[0] < loaded.ids[-1]:
                order = np.argsort(ids, kind="stable")  # lower ids than the copy's last: back in id order
                ids, codes = ids[order], codes.take(order)
            grown = _Loaded(generation, time.monotonic(), loaded.full_at, ids, codes)
        for condition, mask in list(self._masks.items()):
            if mask.generation != loaded.generation:
                del self._masks[condition]
                continue
            allowed_new = np.isin(new_ids, list(allowed(self.store, new_ids.tolist(), condition)))
            rows = np.concatenate([mask.rows, allowed_new])
            # The older rows' answers are as of mask.version: exact stays off until a rebuild.
            self._masks[condition] = replace(mask, generation=generation, rows=rows if order is None else rows[order])
        return grown

    def _mask(self, loaded: _Loaded, condition: ChunkFilter) -> _Mask:
        version = self.store.version()
        cached = self._masks.get(condition)
        fresh = cached and (cached.version == version or time.monotonic() - cached.built_at < RELOAD_INTERVAL_SECONDS)
        if cached and fresh and cached.generation == loaded.generation:
            return replace(cached, exact=cached.version == version)
        _, rows = loaded.rows_of(sorted(allowed_chunk_ids(self.store, condition)))
        allowed_rows = np.zeros(len(loaded.ids), dtype=bool)
        allowed_rows[rows] = True
        if len(self._masks) > 32:
            self._masks.clear()
        mask = _Mask(loaded.generation, version, time.monotonic(), allowed_rows)
        self._masks[condition] = mask
        return mask

    def nearest(self, query_vec: np.ndarray, condition: ChunkFilter, k: int, also: Collection[int] = ()) -> Candidates:
        """The chunks to rescore for the k nearest allowed ones, with their float32 vectors,
        plus `also` (the chunks the keyword lists found, already filtered: a chunk matching
        both ways always gets its true vector rank, even where sign bits blur)."""
        loaded = self._current()
        if not len(loaded.ids):
            return Candidates.empty()
        mask = self._mask(loaded, condition)
        query_code = quantised.binary_codes(query_vec[None, :])[0]
        wanted = max(RESCORE_CANDIDATES, RESCORE_PER_RESULT * k)
        rows = quantised.hamming_candidates(loaded.codes, query_code, mask.rows, wanted)
        scanned = loaded.ids[rows].tolist()
        chosen = set(scanned if mask.exact else allowed(self.store, scanned, condition))
        chosen.update(also)
        return with_vectors(self.store, self.fingerprint, Candidates.empty(), sorted(chosen))


def with_vectors(store: Store, fingerprint: str, known: Candidates, chunk_ids: Collection[int]) -> Candidates:
    """known, plus the given chunks it lacks (those that have a current vector)."""
    have = set(known.ids.tolist())
    wanted = sorted(c for c in set(chunk_ids) if c not in have)
    found, matrix = vectors_repo.matrix_for_chunks(store, fingerprint, wanted) if wanted else ([], None)
    if matrix is None or not found:
        return known
    ids = np.asarray(found, dtype=np.int64)
    if not len(known.ids):
        return Candidates(ids, matrix)
    return Candidates(np.concatenate([known.ids, ids]), np.vstack([known.matrix, matrix]))
