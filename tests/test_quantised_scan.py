"""The quantised semantic scan (issue #15): sign bits in memory, exact rescoring from the store."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from kenning.core.filters import ChunkFilter
from kenning.search.vector import VectorIndex
from kenning.storage import quantised
from kenning.storage import vector_scan as vector_module
from kenning.storage import vectors as vectors_repo
from kenning_testing import CountingEmbedder, index_folder, reindex, write_files

WORDS = [
    "alpha",
    "beta",
    "gamma",
    "delta",
    "kestrel",
    "falcon",
    "harrier",
    "osprey",
    "merlin",
    "hobby",
    "swift",
    "swallow",
    "martin",
    "wren",
    "robin",
]


def _notes(tmp_path, count: int):
    rng = np.random.default_rng(7)
    files = {f"n{i:03}.md": f"# Note {i}\n\n{' '.join(rng.choice(WORDS, size=8))}\n" for i in range(count)}
    return write_files(tmp_path / "notes", files)


def _exact_top(store, embedder, query: str, k: int) -> list[int]:
    ids = [r[0] for r in store.execute("SELECT id FROM chunks")]
    vectors = vectors_repo.vectors_for_chunks(store, embedder.fingerprint, ids)
    q = embedder.embed_query(query)
    scored = sorted(((-float(v @ q), cid) for cid, v in vectors.items()))
    return [cid for _, cid in scored[:k]]


def test_on_a_small_store_the_quantised_scan_returns_the_exact_top_k(tmp_path, store):
    embedder = CountingEmbedder()
    index_folder(store, _notes(tmp_path, 120), embedder)
    index = VectorIndex(store, embedder.fingerprint)
    for query in ("kestrel falcon", "swift swallow martin", "alpha", "robin wren hobby"):
        found = index.search(embedder.embed_query(query), ChunkFilter(), 10)
        assert [r.chunk_id for r in found] == _exact_top(store, embedder, query, 10)
    # One bit per dimension and an id per row is all the scan keeps in memory.
    rows = store.scalar("SELECT count(*) FROM chunks")
    assert store.vector_scan(embedder.fingerprint).memory_bytes == rows * 8 + rows * embedder.dim // 8


def test_when_few_are_rescored_the_list_is_still_ordered_by_true_cosine(tmp_path, store, monkeypatch):
    embedder = CountingEmbedder()
    index_folder(store, _notes(tmp_path, 120), embedder)
    monkeypatch.setattr(vector_module, "RESCORE_CANDIDATES", 15)
    monkeypatch.setattr(vector_module, "RESCORE_PER_RESULT", 1)
    index = VectorIndex(store, embedder.fingerprint)
    q = embedder.embed_query("osprey merlin")
    found = index.search(q, ChunkFilter(), 10)
    exact = index.cosines(q, [r.chunk_id for r in found])
    assert len(found) == 10
    assert [r.score for r in found] == sorted((r.score for r in found), reverse=True)
    assert all(abs(r.score - exact[r.chunk_id]) < 1e-6 for r in found)


def test_a_deeper_list_rescores_more_rows(tmp_path, store, monkeypatch):
    """RESCORE_PER_RESULT rows per result asked for: 30 results over 120 chunks rescore all of them."""
    embedder = CountingEmbedder()
    index_folder(store, _notes(tmp_path, 120), embedder)
    monkeypatch.setattr(vector_module, "RESCORE_CANDIDATES", 15)
    index = VectorIndex(store, embedder.fingerprint)
    q = embedder.embed_query("osprey merlin")
    assert [r.chunk_id for r in index.search(q, ChunkFilter(), 30)] == _exact_top(store, embedder, "osprey merlin", 30)


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 60), st.integers(1, 70), st.integers(0, 2**32 - 1))
def test_hamming_candidates_are_the_nearest_rows(rows, count, seed):
    rng = np.random.default_rng(seed)
    matrix = rng.standard_normal((rows, 64)).astype(np.float32)
    codes = quantised.binary_codes(matrix)
    query = quantised.binary_codes(rng.standard_normal((1, 64)))[0]
    distances = np.array([bin(int.from_bytes((c ^ query).tobytes(), "big")).count("1") for c in codes])
    chosen = quantised.hamming_candidates(codes, query, None, count)
    assert len(chosen) == min(count, rows)
    if len(chosen) < rows:  # nothing left out is nearer than what was chosen
        left_out = np.setdiff1d(np.arange(rows), chosen)
        assert distances[chosen].max() <= distances[left_out].min()
    mask = rng.random(rows) < 0.5
    masked = quantised.hamming_candidates(codes, query, mask, count)
    assert mask[masked].all() and len(masked) == min(count, int(mask.sum()))


def _count_mask_builds(monkeypatch) -> list[int]:
    builds: list[int] = []
    real = vector_module.allowed_chunk_ids

    def counting(store, condition):
        builds.append(1)
        return real(store, condition)

    monkeypatch.setattr(vector_module, "allowed_chunk_ids", counting)
    return builds


def _touch(store) -> None:
    """A commit that changes no vector (the indexer writing text meanwhile)."""
    store.execute("INSERT OR REPLACE INTO settings (key, value) VALUES ('bench-touch', ?)", (str(store.version()),))


def test_loading_ahead_with_a_filter_reads_the_rows_it_allows_for_the_next_search(tmp_path, store, monkeypatch):
    """What a search reads while its query vector is still being made (engine._retrieve):
    the filter's rows as well as the codes, so the scan after the vector only ranks."""
    embedder = CountingEmbedder()
    index_folder(store, _notes(tmp_path, 60), embedder)
    builds = _count_mask_builds(monkeypatch)
    index = VectorIndex(store, embedder.fingerprint)
    index.load(ChunkFilter(sources=("notes",)))
    assert len(builds) == 1
    index.search(embedder.embed_query("kestrel falcon"), ChunkFilter(sources=("notes",)), 10)
    assert len(builds) == 1
    index.load()  # no filter: the codes only
    assert len(builds) == 1


def test_a_filter_mask_is_not_rebuilt_for_every_query_while_the_store_changes(tmp_path, store, monkeypatch):
    embedder = CountingEmbedder()
    index_folder(store, _notes(tmp_path, 60), embedder)
    builds = _count_mask_builds(monkeypatch)
    index = VectorIndex(store, embedder.fingerprint)
    q = embedder.embed_query("kestrel falcon")
    first = index.search(q, ChunkFilter(), 10)
    for _ in range(5):
        _touch(store)
        assert index.search(q, ChunkFilter(), 10) == first
    assert len(builds) == 1
    monkeypatch.setattr(vector_module.time, "monotonic", lambda: 1e12)  # the reload interval has passed
    index.search(q, ChunkFilter(), 10)
    assert len(builds) == 2


def test_a_mask_older_than_the_store_never_lets_a_disabled_source_through(tmp_path, store, monkeypatch):
    from kenning.storage.sources import set_enabled

    embedder = CountingEmbedder()
    kept, _ = index_folder(store, _notes(tmp_path, 40), embedder)
    other, _ = index_folder(
        store, write_files(tmp_path / "other", {"o.md": "# O\n\nkestrel falcon osprey\n"}), embedder
    )
    builds = _count_mask_builds(monkeypatch)
    index = VectorIndex(store, embedder.fingerprint)
    q = embedder.embed_query("kestrel falcon osprey")
    other_chunks = {
        r[0]
        for r in store.execute(
            "SELECT c.id FROM chunks c JOIN documents d ON d.id = c.document_id WHERE d.source_id = ?", (other.id,)
        )
    }
    assert other_chunks & {r.chunk_id for r in index.search(q, ChunkFilter(), 40)}
    set_enabled(store, other.id, False)
    found = {r.chunk_id for r in index.search(q, ChunkFilter(), 40)}
    assert len(builds) == 1  # the mask was not rebuilt: the picks were checked instead
    assert found and not (found & other_chunks)


def test_has_vectors_names_the_fingerprint(tmp_path, store):
    embedder = CountingEmbedder()
    assert not vectors_repo.has_vectors(store, embedder.fingerprint)
    index_folder(store, _notes(tmp_path, 5), embedder)
    assert vectors_repo.has_vectors(store, embedder.fingerprint)
    assert not vectors_repo.has_vectors(store, "another-model")


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 50), st.sampled_from([8, 64, 72, 384]), st.integers(0, 2**32 - 1))
def test_the_word_columns_give_the_distances_bit_counting_gives(rows, dim, seed):
    rng = np.random.default_rng(seed)
    codes = quantised.binary_codes(rng.standard_normal((rows, dim)))
    query = quantised.binary_codes(rng.standard_normal((1, dim)))[0]
    expected = [bin(int.from_bytes((c ^ query).tobytes(), "big")).count("1") for c in codes]
    laid_out = quantised.SignCodes.from_rows(codes)
    assert laid_out.by_word == (dim % 64 == 0) and len(laid_out) == rows
    assert laid_out.distances(query).tolist() == expected


def test_no_rows_no_distances():
    assert quantised.SignCodes.from_rows(np.zeros((0, 48), np.uint8)).distances(np.zeros(48, np.uint8)).size == 0
    assert len(quantised.SignCodes.from_rows(np.zeros((0, 0), np.uint8))) == 0


def test_new_vectors_are_appended_and_deleted_ones_dropped_at_the_full_reload(tmp_path, store, monkeypatch):
    embedder = CountingEmbedder()
    folder = _notes(tmp_path, 30)
    index_folder(store, folder, embedder)
    clock = [1000.0]
    monkeypatch.setattr(vector_module.time, "monotonic", lambda: clock[0])
    reads: list[int] = []
    real_pages = vectors_repo.code_pages

    def counting(store_, fingerprint, page_size=50_000, *, since=0):
        reads.append(since)
        return real_pages(store_, fingerprint, page_size, since=since)

    monkeypatch.setattr(vectors_repo, "code_pages", counting)
    index = VectorIndex(store, embedder.fingerprint)
    q = embedder.embed_query("kestrel falcon")
    index.search(q, ChunkFilter(), 10)
    rows_before = len(store.vector_scan(embedder.fingerprint)._loaded.ids)
    write_files(folder, {"zz-new.md": "# New\n\nkestrel falcon kestrel falcon\n"})
    (folder / "n000.md").unlink()
    reindex(store, embedder)
    new_chunk = store.scalar(
        "SELECT c.id FROM chunks c JOIN documents d ON d.id = c.document_id WHERE d.rel_path = 'zz-new.md'"
    )
    clock[0] += vector_module.RELOAD_INTERVAL_SECONDS
    found = [r.chunk_id for r in index.search(q, ChunkFilter(), 40)]
    assert new_chunk in found
    assert reads[-1] > 0  # only the rows written since the copy's generation were read
    assert (
        len(store.vector_scan(embedder.fingerprint)._loaded.ids) == rows_before + 1
    )  # the deleted note's row is still held
    clock[0] += vector_module.FULL_RELOAD_SECONDS
    write_files(folder, {"zz-other.md": "# Other\n\nosprey\n"})
    reindex(store, embedder)
    index.search(q, ChunkFilter(), 10)
    assert reads[-1] == 0  # a full reload: the deleted note's row is gone
    assert len(store.vector_scan(embedder.fingerprint)._loaded.ids) == store.scalar("SELECT count(*) FROM vector_codes")


def test_an_appended_copy_keeps_filters_exact(tmp_path, store, monkeypatch):
    from kenning.storage.sources import set_enabled
    from kenning_testing import reindex

    embedder = CountingEmbedder()
    index_folder(store, _notes(tmp_path, 20), embedder)
    clock = [1000.0]
    monkeypatch.setattr(vector_module.time, "monotonic", lambda: clock[0])
    index = VectorIndex(store, embedder.fingerprint)
    q = embedder.embed_query("kestrel falcon osprey")
    index.search(q, ChunkFilter(), 10)
    other, _ = index_folder(
        store, write_files(tmp_path / "other", {"o.md": "# O\n\nkestrel falcon osprey\n"}), embedder
    )
    clock[0] += vector_module.RELOAD_INTERVAL_SECONDS
    in_other = "SELECT c.id FROM chunks c JOIN documents d ON d.id = c.document_id WHERE d.source_id = ?"
    other_chunks = {r[0] for r in store.execute(in_other, (other.id,))}
    assert other_chunks & {r.chunk_id for r in index.search(q, ChunkFilter(), 40)}
    set_enabled(store, other.id, False)
    reindex(store, embedder)
    assert not other_chunks & {r.chunk_id for r in index.search(q, ChunkFilter(), 40)}


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 30), st.integers(1, 30), st.sampled_from([8, 64, 384]), st.integers(0, 2**32 - 1))
def test_extended_codes_scan_as_if_loaded_at_once(first, more, dim, seed):
    rng = np.random.default_rng(seed)
    codes = quantised.binary_codes(rng.standard_normal((first + more, dim)))
    query = quantised.binary_codes(rng.standard_normal((1, dim)))[0]
    grown = quantised.SignCodes.from_rows(codes[:first]).extended(codes[first:])
    assert len(grown) == first + more
    assert grown.distances(query).tolist() == quantised.SignCodes.from_rows(codes).distances(query).tolist()


def _codes_by_join(store, fingerprint: str) -> dict[int, bytes]:
    """The definition code_pages reads without the join: codes of chunks current under fingerprint."""
    rows = store.execute(
        "SELECT k.chunk_id, k.code FROM vector_codes k JOIN chunks c ON c.id = k.chunk_id WHERE c.vector_fp = ?",
        (fingerprint,),
    )
    return {int(cid): bytes(code) for cid, code in rows}


def _codes_read(store, fingerprint: str) -> dict[int, bytes]:
    out: dict[int, bytes] = {}
    for ids, page in vectors_repo.code_pages(store, fingerprint, page_size=7):
        out.update((int(cid), row.tobytes()) for cid, row in zip(ids, page))
    return out


def test_codes_are_read_alone_exactly_for_the_current_model(store, tmp_path):
    """code_pages reads vector_codes without joining chunks: that must give what the join
    gives through edits, deletions, a file left unembedded and a change of model."""
    first = CountingEmbedder()
    folder = _notes(tmp_path, 30)
    index_folder(store, folder, first)
    assert len(_codes_read(store, first.fingerprint)) == 30
    write_files(folder, {"n001.md": "# Note 1\n\nrewritten kestrel\n", "zz.md": "# Z\n\nosprey\n"})
    (folder / "n002.md").unlink()
    reindex(store, first)
    write_files(folder, {"n003.md": "# Note 3\n\nwords only, not embedded\n"})
    reindex(store, None)  # phase 1 only: the rewritten note waits for its vector
    assert _codes_read(store, first.fingerprint) == _codes_by_join(store, first.fingerprint)
    assert len(_codes_read(store, first.fingerprint)) == 29  # 30 - deleted - unembedded + zz

    second = CountingEmbedder(dim=first.dim + 8)  # another model: another fingerprint
    assert second.fingerprint != first.fingerprint
    assert _codes_read(store, second.fingerprint) == {}
    vectors_repo.prepare(store, second.fingerprint, second.dim)  # `kenning models use`
    assert _codes_read(store, first.fingerprint) == {} == _codes_by_join(store, first.fingerprint)
    reindex(store, second)
    assert _codes_read(store, second.fingerprint) == _codes_by_join(store, second.fingerprint)
    assert len(_codes_read(store, second.fingerprint)) == 30


@settings(max_examples=15, deadline=None)
@given(st.permutations(list(range(24))), st.integers(1, 6))
def test_vectors_written_in_any_id_order_join_the_copy_in_id_order(tmp_path_factory, order, batch):
    """The embedding queue writes by value, other writers by their own order: whatever the
    order, the appended copy is the one a full load gives, and a filter's mask follows it."""
    from kenning.storage import open_store

    store = open_store(tmp_path_factory.mktemp("order") / "kenning.db")
    embedder = CountingEmbedder(dim=64)
    index_folder(store, _notes(tmp_path_factory.mktemp("notes"), 24), None)
    ids = [r[0] for r in store.execute("SELECT id FROM chunks ORDER BY id")]
    pending = {p.chunk_id: p for p in store.queue.pending_in_order(ids)}
    store.vectors.prepare(embedder.fingerprint, embedder.dim)
    clock = [1000.0]
    scan = store.vector_scan(embedder.fingerprint)
    only_even = ChunkFilter(paths=tuple(f"n{i:03}.md" for i in range(0, 24, 2)))
    q = embedder.embed_query("kestrel")
    import unittest.mock

    with (
        unittest.mock.patch.object(vector_module.time, "monotonic", lambda: clock[0]),
        unittest.mock.patch.object(vector_module, "FULL_RELOAD_SECONDS", 1e9),  # appends only
    ):
        for start in range(0, len(order), batch):
            chosen = [ids[i] for i in order[start : start + batch]]
            vectors = embedder.embed_batch([pending[c].text for c in chosen])
            store.vectors.write(
                embedder.fingerprint, [(c, pending[c].input_sha, v.tobytes()) for c, v in zip(chosen, vectors)]
            )
            store.vectors.nearest(embedder.fingerprint, q, only_even, 5)
            clock[0] += vector_module.RELOAD_INTERVAL_SECONDS
        store.vectors.nearest(embedder.fingerprint, q, only_even, 5)
        assert scan._loaded.ids.tolist() == ids  # every vector, in id order, no full reload needed
        assert scan._loaded.full_at == 1000.0  # loaded once, then only appended to
        fresh = vector_module.SignScan(store, embedder.fingerprint)
        fresh.load()
        query_code = vector_module.quantised.binary_codes(q[None, :])[0]
        assert scan._loaded.codes.distances(query_code).tolist() == fresh._loaded.codes.distances(query_code).tolist()
        mask = scan._masks[only_even].rows
        assert mask.tolist() == fresh._mask(fresh._loaded, only_even).rows.tolist()
    store.close()


def test_the_codes_read_in_pages_sqlite_aggregates_are_the_rows_one_by_one(tmp_path, store):
    """vectors.code_pages reads each page as one row (ids as text, codes as one blob) for
    speed: the same ids and codes as reading row by row (_code_page), in id order, across
    page boundaries, leaving out damaged codes (too short, stored as text) like it."""
    embedder = CountingEmbedder()
    index_folder(store, _notes(tmp_path, 60), embedder)
    first, second = (r[0] for r in store.execute("SELECT chunk_id FROM vector_codes ORDER BY chunk_id LIMIT 2"))
    store.execute("UPDATE vector_codes SET code = x'00' WHERE chunk_id = ?", (first,))
    store.execute("UPDATE vector_codes SET code = 'not a code, text' WHERE chunk_id = ?", (second,))
    width = embedder.dim // 8
    rows = store.execute("SELECT chunk_id, code FROM vector_codes ORDER BY chunk_id")
    expected_ids, expected_codes = vectors_repo._code_page(rows, width)
    assert len(expected_ids) == len(rows) - 2
    for page_size in (7, 50_000):
        pages = list(vectors_repo.code_pages(store, embedder.fingerprint, page_size))
        assert len(pages) == -(-len(rows) // page_size)
        ids = np.concatenate([page[0] for page in pages])
        codes = np.concatenate([page[1] for page in pages])
        assert ids.dtype == np.int64 and codes.dtype == np.uint8
        assert np.array_equal(ids, expected_ids) and np.array_equal(codes, expected_codes)


def test_a_page_the_aggregation_does_not_fit_is_read_row_by_row():
    assert vectors_repo._grouped_page(3, "1,2", b"\x00" * 5, 2) is None  # 2 ids, 5 bytes
    assert vectors_repo._grouped_page(1, "1,2", b"\x00" * 4, 2) is None  # more ids than rows
    ids, codes = vectors_repo._grouped_page(3, "5,2", b"\x01\x01\x02\x02", 2)
    assert ids.tolist() == [2, 5] and codes.tolist() == [[2, 2], [1, 1]]
