"""Contract: vectors (cache, current vectors, nearest under a filter), the queue, query vectors."""

from __future__ import annotations

import numpy as np

from kenning.core.filters import ChunkFilter

from .seed import DIM, FINGERPRINT, add_document, add_source, axis_vector, sha, write_vectors


def _nearest(store, query, chunk_filter=None, k=5, also=()):
    found = store.vectors.nearest(FINGERPRINT, query, chunk_filter or ChunkFilter(), k, also)
    order = np.argsort(-(found.matrix @ query), kind="stable") if len(found.ids) else []
    return [int(found.ids[i]) for i in order]


def test_written_vectors_are_current_and_read_back_as_float32(store):
    source = add_source(store, "notes")
    ids = add_document(store, source, "a.md", ["one", "two", "three"])
    assert store.vectors.count_pending() == 3 and not store.vectors.has_vectors(FINGERPRINT)
    vectors = {cid: axis_vector(i) for i, cid in enumerate(ids[:2])}
    write_vectors(store, vectors)
    assert store.vectors.has_vectors(FINGERPRINT) and store.vectors.count(FINGERPRINT) == 2
    assert store.vectors.count_pending() == 1 and not store.vectors.has_vectors("another|16|1")
    back = store.vectors.vectors_of(FINGERPRINT, [*ids, 12345])
    assert sorted(back) == ids[:2]
    for cid, vec in back.items():
        assert vec.dtype == np.float32 and vec.shape == (DIM,)
        assert np.allclose(vec, vectors[cid], atol=2e-3)  # a backend may keep them at half precision


def test_the_cache_is_keyed_by_model_and_input_and_outlives_its_chunk(store):
    source = add_source(store, "notes")
    [cid] = add_document(store, source, "a.md", ["text"])
    [pending] = store.queue.pending_in_order([cid])
    write_vectors(store, {cid: axis_vector(3)})
    assert list(store.vectors.cached(FINGERPRINT, [pending.input_sha, "nope"])) == [pending.input_sha]
    assert store.vectors.cached("another|16|1", [pending.input_sha]) == {}
    store.documents.delete([d.id for d in [store.documents.find(source.id, "a.md")]])
    assert list(store.vectors.cached(FINGERPRINT, [pending.input_sha])) == [pending.input_sha]
    assert store.vectors.collect_unused() == 1
    assert store.vectors.cached(FINGERPRINT, [pending.input_sha]) == {}


def test_a_new_model_makes_every_chunk_pending(store):
    source = add_source(store, "notes")
    ids = add_document(store, source, "a.md", ["one", "two"])
    write_vectors(store, {cid: axis_vector(i) for i, cid in enumerate(ids)})
    store.vectors.prepare("other-model|16|1", DIM)
    assert store.vectors.count_pending() == 2 and not store.vectors.has_vectors(FINGERPRINT)
    assert store.vectors.vectors_of(FINGERPRINT, ids) == {}


def test_nearest_finds_the_nearest_allowed_chunks_with_their_vectors(store):
    source = add_source(store, "notes")
    ids = add_document(store, source, "a.md", [f"chunk {i}" for i in range(DIM)])
    write_vectors(store, {cid: axis_vector(i, noise=0.05, seed=i) for i, cid in enumerate(ids)})
    assert _nearest(store, axis_vector(5), k=1)[0] == ids[5]
    found = store.vectors.nearest(FINGERPRINT, axis_vector(5), ChunkFilter(), 3)
    row = found.rows_of([ids[5]])[0]
    assert found.matrix.dtype == np.float32 and np.allclose(
        found.matrix[row], store.vectors.vectors_of(FINGERPRINT, [ids[5]])[ids[5]]
    )


def test_a_chunk_the_filter_excludes_never_takes_a_place(store):
    crowd, quiet = add_source(store, "crowd"), add_source(store, "quiet")
    close = add_document(store, crowd, "c.md", [f"c{i}" for i in range(40)])
    [far] = add_document(store, quiet, "q.md", ["q"])
    [test] = add_document(store, quiet, "test_q.md", ["t"], is_test=True)
    vectors = {cid: axis_vector(0, noise=0.01, seed=i) for i, cid in enumerate(close)}
    vectors[far] = axis_vector(7)
    vectors[test] = axis_vector(0)
    write_vectors(store, vectors)
    assert _nearest(store, axis_vector(0), ChunkFilter(sources=("quiet",)), k=3) == [far]
    assert test not in _nearest(store, axis_vector(0), ChunkFilter(), k=50)
    store.sources.set_enabled(quiet.id, False)
    assert _nearest(store, axis_vector(0), ChunkFilter(sources=("quiet",)), k=3) == []


def test_nearest_adds_the_chunks_asked_for_that_have_a_vector(store):
    source = add_source(store, "notes")
    ids = add_document(store, source, "a.md", [f"chunk {i}" for i in range(DIM)])
    [no_vector] = add_document(store, source, "b.md", ["pending"])
    write_vectors(store, {cid: axis_vector(i) for i, cid in enumerate(ids)})
    found = store.vectors.nearest(FINGERPRINT, axis_vector(0), ChunkFilter(paths=("nothing",)), 3, {ids[9], no_vector})
    assert found.ids.tolist() == [ids[9]]


def test_the_queue_puts_notes_before_code_and_remembers_the_rate(store):
    source = add_source(store, "repo")
    code = add_document(store, source, "x.py", ["def f(): pass"], kind="code:python")
    note = add_document(store, source, "n.md", ["a note"])
    assert list(store.queue.order()) == [*note, *code]
    assert [p.chunk_id for p in store.queue.pending_in_order([*code, *note])] == [*code, *note]
    write_vectors(store, {note[0]: axis_vector(1)})
    assert list(store.queue.order()) == code
    assert store.queue.rate() is None
    store.queue.record_rate(10.0)
    store.queue.record_rate(20.0)
    assert 10.0 < store.queue.rate() < 20.0


def test_query_vectors_are_remembered_per_model_up_to_the_cap(store):
    vec = axis_vector(2)
    assert store.query_vectors.recall(FINGERPRINT, "q", DIM) is None
    assert store.query_vectors.remember(FINGERPRINT, {"q": vec, "r": vec}, [], now=10.0, cap=5)
    recalled, used_at = store.query_vectors.recall(FINGERPRINT, "q", DIM)
    assert np.array_equal(recalled, vec) and used_at == 10.0  # exactly the model's vector
    assert store.query_vectors.recall("another|16|1", "q", DIM) is None
    assert store.query_vectors.recall(FINGERPRINT, "q", DIM + 1) is None  # another dimension is a miss
    store.query_vectors.remember(FINGERPRINT, {}, ["q"], now=20.0, cap=5)
    assert store.query_vectors.recall(FINGERPRINT, "q", DIM)[1] == 20.0
    store.query_vectors.remember(FINGERPRINT, {f"n{i}": vec for i in range(5)}, [], now=30.0, cap=5)
    assert store.query_vectors.count() == 5 and store.query_vectors.recall(FINGERPRINT, "q", DIM) is None


def test_a_documents_opening_is_pending_until_written_and_goes_with_its_chunks(store):
    source = add_source(store, "notes")
    two = add_document(store, source, "two.md", [("Two", "first part"), ("Two", "second part")])
    [one] = add_document(store, source, "one.md", ["alone"])
    store.vectors.prepare(FINGERPRINT, DIM)
    pending = {p.document_id: p for p in store.vectors.pending_openings(FINGERPRINT, 0, 100, 8)}
    doc_two, doc_one = (store.documents.find(source.id, p).id for p in ("two.md", "one.md"))
    assert sorted(pending) == sorted([doc_two, doc_one])
    assert pending[doc_two].chunk_count == 2 and pending[doc_one].chunk_count == 1
    assert pending[doc_two].parts == (("Two", "first part"), ("Two", "second part"))
    assert pending[doc_two].document_kind == "markdown" and pending[doc_two].rel_path == "two.md"
    assert [p.document_id for p in store.vectors.pending_openings(FINGERPRINT, doc_two, 100, 1)] == [
        d for d in sorted(pending) if d > doc_two
    ]
    assert store.vectors.pending_openings(FINGERPRINT, 0, 100, 1)[0].parts[:1] == pending[min(pending)].parts[:1]
    opening = axis_vector(7)
    store.vectors.write_openings(
        FINGERPRINT, [(doc_two, sha("opening of two"), opening.tobytes()), (doc_one, "", None)]
    )
    assert store.vectors.pending_openings(FINGERPRINT, 0, 100, 8) == []
    found = store.vectors.openings_of(FINGERPRINT, [*two, one, 12345])
    assert sorted(found) == sorted(two)  # every chunk of the document, none of one without
    for vec in found.values():
        assert vec.dtype == np.float32 and np.allclose(vec, opening, atol=2e-3)
    assert store.vectors.openings_of("another|16|1", two) == {}
    assert list(store.vectors.cached(FINGERPRINT, [sha("opening of two")])) == [sha("opening of two")]
    assert store.vectors.collect_unused() == 0  # an opening's vector is in use
    # A new model: the opening is pending again (its vector is not of this model).
    store.vectors.prepare("other-model|16|1", DIM)
    assert [p.document_id for p in store.vectors.pending_openings("other-model|16|1", 0, 100, 8)] == [doc_two]
    store.vectors.prepare(FINGERPRINT, DIM)
    # Written anew (new chunks), a document's opening is looked at again; deleted, it is gone.
    again = add_document(store, source, "two.md", [("Two", "new first"), ("Two", "new second")])
    assert store.vectors.openings_of(FINGERPRINT, again) == {}
    assert [p.document_id for p in store.vectors.pending_openings(FINGERPRINT, 0, 100, 8)] == [doc_two]
    store.vectors.write_openings(FINGERPRINT, [(doc_two, sha("opening of two"), None)])  # cached already
    assert sorted(store.vectors.openings_of(FINGERPRINT, again)) == sorted(again)
    store.documents.delete([doc_two])
    assert store.vectors.openings_of(FINGERPRINT, again) == {}
    assert store.vectors.collect_unused() >= 1
    assert store.vectors.cached(FINGERPRINT, [sha("opening of two")]) == {}
