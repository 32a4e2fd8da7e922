"""Phase 1 and phase 2 on real folders and stores: skips, incremental runs, removal."""

import os

import pytest

from kenning.core.errors import SourceError
from kenning.ingest.sources import add_source, remove_source
from kenning_testing import (
    CountingEmbedder,
    all_chunks,
    chunk_ids,
    documents_by_path,
    index_folder,
    reindex,
    the_document,
    write_files,
)

# The store is read through its interface (storage.api), as the layers above storage do.
_docs = documents_by_path
_chunk_ids = chunk_ids


def skipped_files(store):
    return store.documents.skipped()


def _fts_hits(store, word):
    return store.terms.chunks_with(word)


def test_each_skip_reason_is_recorded_and_the_run_continues(store, notes, tmp_path):
    outside = tmp_path / "outside.md"
    outside.write_text("# secret\nnever index me\n")
    write_files(
        notes,
        {
            "good.md": "# Good\n\nplain words here\n",
            "binary.txt": b"\x00\x01\x02binary\x00data" * 5,
            "broken-utf8.md": b"ok \xed\xa0\x80 surrogate",
            "big.md": "x" * 300,
            "empty.md": "",
        },
    )
    os.symlink(outside, notes / "link-out.md")
    _, run = index_folder(store, notes, size_cap=200)
    reasons = {s.rel_path: s.reason for _, s in skipped_files(store)}
    assert reasons == {
        "binary.txt": "binary",
        "broken-utf8.md": "undecodable",
        "big.md": "too-large",
        "link-out.md": "outside-root",
    }
    assert set(_docs(store)) == {"good.md", "empty.md"}
    assert _fts_hits(store, "secret") == 0
    assert not run.reports[0].errors


def test_unchanged_files_are_not_rechunked_changed_replaced_deleted_removed(store, notes):
    write_files(notes, {"a.md": "# A\n\nalpha words\n", "b.md": "# B\n\nbeta words\n", "c.md": "# C\n\ngamma\n"})
    index_folder(store, notes)
    a_ids, b_ids = _chunk_ids(store, "a.md"), _chunk_ids(store, "b.md")
    write_files(notes, {"b.md": "# B\n\nbeta rewritten with delta\n"})
    os.remove(notes / "c.md")
    run = reindex(store)
    report = run.reports[0]
    assert (report.unchanged, report.changed, report.removed, report.added) == (1, 1, 1, 0)
    assert _chunk_ids(store, "a.md") == a_ids  # same rows: never re-chunked
    assert _chunk_ids(store, "b.md") != b_ids
    assert set(_docs(store)) == {"a.md", "b.md"}
    assert _fts_hits(store, "delta") == 1 and _fts_hits(store, "gamma") == 0


def test_touched_but_identical_file_is_not_rechunked(store, notes):
    write_files(notes, {"a.md": "# A\n\nalpha\n"})
    index_folder(store, notes)
    ids = _chunk_ids(store, "a.md")
    os.utime(notes / "a.md", (1_000_000, 1_000_000))
    report = reindex(store).reports[0]
    assert report.unchanged == 1 and _chunk_ids(store, "a.md") == ids


def test_renamed_text_is_not_embedded_again(store, notes):
    embedder = CountingEmbedder()
    write_files(notes, {"old.md": "# Title\n\nsome distinctive paragraph about rivers\n"})
    index_folder(store, notes, embedder)
    first = len(embedder.embedded)
    assert first > 0
    os.rename(notes / "old.md", notes / "new.md")
    run = reindex(store, embedder)
    assert len(embedder.embedded) == first, "moved text was embedded again"
    assert run.embedding is not None and run.embedding.reused >= 1
    assert store.vectors.count_pending() == 0


def test_every_chunk_gets_exactly_one_current_vector(store, notes, embedder):
    write_files(notes, {f"n{i}.md": f"# Note {i}\n\ntext number {i}\n\n## Part\n\nmore {i}\n" for i in range(30)})
    index_folder(store, notes, embedder)
    chunks = [row.chunk_id for row in all_chunks(store)]
    assert store.vectors.count_pending() == 0
    assert store.vectors.count(embedder.fingerprint) == len(chunks) == store.chunks.count()
    assert set(store.vectors.vectors_of(embedder.fingerprint, chunks)) == set(chunks)


def test_model_change_marks_vectors_stale(store, notes):
    write_files(notes, {"a.md": "# A\n\nalpha\n"})
    index_folder(store, notes, CountingEmbedder(dim=64))
    other = CountingEmbedder(dim=32)
    other.fingerprint = "fake-other-model"
    reindex(store, other)
    assert other.embedded, "a new model must re-embed"
    assert store.vectors.count("fake-other-model") == store.chunks.count()


def test_removing_a_source_removes_everything_derived(store, notes, embedder):
    write_files(notes, {"a.md": "# A\n\nsee src/app.py for alpha\n"})
    index_folder(store, notes, embedder, name="n")
    ids = chunk_ids(store, "a.md")
    assert store.chunks.mentioned_paths(ids) == {ids[0]: ["src/app.py"]}
    remove_source(store, "n")
    assert store.documents.at("a.md") == [] and store.chunks.count() == 0
    assert store.chunks.mentioned_paths(ids) == {} and store.documents.skipped() == []
    assert _fts_hits(store, "alpha") == 0
    reindex(store, embedder)  # the vector store catches up with the deletions
    assert store.vectors.count(embedder.fingerprint) == 0


def test_front_matter_gives_title_tags_dates(store, notes):
    write_files(
        notes, {"fm.md": "---\ntitle: Real Title\ntags: [ops, Deploy]\ndate: 2024-03-01\n---\n# Heading\n\nbody\n"}
    )
    index_folder(store, notes)
    document = the_document(store, "fm.md")
    assert document.title == "Real Title"
    assert list(document.tags) == ["ops", "deploy"]
    assert [row.created_at for row in all_chunks(store)] == [pytest.approx(1709251200.0)]
    line_start = min(c.line_start for c in store.documents.chunks(document.id))
    assert line_start == 6  # the heading's line in the file, front matter counted


def test_gitignore_and_default_excludes_are_honoured(store, notes):
    write_files(
        notes,
        {
            ".gitignore": "secret/\n*.log.md\n",
            "kept.md": "kept",
            "secret/hidden.md": "hidden",
            "x.log.md": "log",
            "node_modules/pkg/readme.md": "dep",
            "sub/.gitignore": "local.md\n",
            "sub/local.md": "local",
            "sub/other.md": "other",
            "env/pyvenv.cfg": "home = /usr",
            "env/lib/site.md": "venv file",
        },
    )
    index_folder(store, notes)
    assert set(_docs(store)) == {"kept.md", "sub/other.md"}


def test_include_and_exclude_globs(store, notes):
    write_files(notes, {"docs/a.md": "a", "docs/b.txt": "b", "src/c.py": "c = 1\n"})
    add_source(store, notes, include=("docs/**",), exclude=("*.txt",))
    reindex(store)
    assert set(_docs(store)) == {"docs/a.md"}


def test_missing_or_plain_folder_as_git_source_gives_clear_errors(store, notes):
    with pytest.raises(SourceError, match="does not exist"):
        add_source(store, notes / "nope")
    with pytest.raises(SourceError, match="not a git repository"):
        add_source(store, notes, git=True)


def test_cancelled_walk_deletes_nothing(store, notes):
    from kenning.core.progress import CancelToken
    from kenning.ingest.indexer import Indexer

    write_files(notes, {f"n{i}.md": f"note {i}" for i in range(20)})
    index_folder(store, notes)
    token = CancelToken()
    token.cancel()
    Indexer(store, None).run(embed=False, cancel=token)
    assert len(_docs(store)) == 20


def test_non_utf8_file_names_are_distinct_and_open_from_results(store, notes):
    import sys

    from kenning.search.engine import SearchEngine

    if sys.platform != "linux":
        pytest.skip("byte file names are a POSIX matter")
    for raw in (b"caf\xe9.md", b"caf\xe8.md"):
        with open(os.path.join(os.fsencode(notes), raw), "wb") as f:
            f.write(b"# Menu\n\nespresso macchiato\n")
    index_folder(store, notes)
    assert set(_docs(store)) == {"caf\\xe9.md", "caf\\xe8.md"}
    hits = SearchEngine(store, None).search("macchiato").hits
    assert len(hits) == 2
    for hit in hits:
        assert os.path.exists(hit.abs_path)


def test_a_chunker_version_bump_rechunks_on_the_next_index(store, notes, monkeypatch):
    from kenning.ingest import chunking

    write_files(notes, {"a.md": "# A\n\nalpha words\n", "b.py": "def beta():\n    return 2\n"})
    index_folder(store, notes)
    before = {path: _chunk_ids(store, path) for path in ("a.md", "b.py")}

    again = reindex(store).reports[0]
    assert (again.unchanged, again.changed, again.chunks_written) == (2, 0, 0)
    assert {path: _chunk_ids(store, path) for path in before} == before

    monkeypatch.setattr(chunking, "CHUNKING_VERSION", chunking.CHUNKING_VERSION + 1)
    bumped = reindex(store).reports[0]
    assert (bumped.unchanged, bumped.changed) == (0, 2)
    after = {path: _chunk_ids(store, path) for path in before}
    assert all(after[path] and not set(after[path]) & set(before[path]) for path in before)  # chunks rebuilt
    assert _fts_hits(store, "alpha") == 1

    settled = reindex(store).reports[0]
    assert (settled.unchanged, settled.changed) == (2, 0)  # the new version is remembered
    assert {path: _chunk_ids(store, path) for path in before} == after


def test_bad_yaml_front_matter_keeps_title_and_tags_and_is_logged(store, notes, caplog, monkeypatch):
    import logging

    monkeypatch.setattr(logging.getLogger("kenning"), "propagate", True)  # setup_logging elsewhere turns it off
    write_files(notes, {"pg.md": "---\ntitle: Postgres: tuning notes\ntags: [db]\n---\nshared buffers advice\n"})
    with caplog.at_level("INFO", logger="kenning"):
        index_folder(store, notes)
    document = the_document(store, "pg.md")
    assert (document.title, list(document.tags)) == ("Postgres: tuning notes", ["db"])
    assert any("pg.md" in r.getMessage() and "line by line" in r.getMessage() for r in caplog.records)


def test_a_note_without_heading_is_shown_by_its_front_matter_title(store, notes):
    from kenning.search.engine import SearchEngine

    write_files(notes, {"2024-03-01-x.md": "---\ntitle: Vacuum tuning\n---\nautovacuum thresholds\n"})
    index_folder(store, notes)
    hits = SearchEngine(store, None).search("autovacuum").hits
    assert [h.title for h in hits] == ["Vacuum tuning"]


def test_a_partly_indexed_file_stays_listed_until_it_changes(store, notes, monkeypatch):
    from kenning.ingest import extracted  # the one cap, for every format (capped_chunks)

    monkeypatch.setattr(extracted, "MAX_CHUNKS_PER_FILE", 3)
    write_files(notes, {"many.md": "".join(f"# S{i}\n\nsection {i}\n\n" for i in range(6)), "ok.md": "# Ok\n\nfine\n"})
    index_folder(store, notes)
    listed = {s.rel_path: (s.reason, s.detail) for _, s in skipped_files(store)}
    assert listed == {"many.md": ("partial", "only the first 3 of 6 chunks are indexed")}
    run = reindex(store)  # nothing changed: not read again, still partly indexed
    assert run.reports[0].unchanged == 2
    assert {s.rel_path: (s.reason, s.detail) for _, s in skipped_files(store)} == listed
    assert [s.rel_path for s in run.reports[0].skipped] == ["many.md"]
    (notes / "ok.md").write_text("# Ok\n\nstill fine\n")
    reindex(store)  # another file changed: the list is rewritten, the entry kept
    assert {s.rel_path for _, s in skipped_files(store)} == {"many.md"}
    (notes / "many.md").write_text("# Few\n\nnow short\n")
    reindex(store)
    assert skipped_files(store) == []
