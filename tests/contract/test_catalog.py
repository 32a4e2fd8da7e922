"""Contract: sources, documents, chunks, skipped files, settings, git paths, stats."""

from __future__ import annotations

import pytest

from kenning.core.errors import SourceError
from kenning.core.filters import ChunkFilter
from kenning.core.types import SkippedFile
from kenning.storage import api

from .seed import add_document, add_source


def test_sources_are_added_listed_found_and_removed(store):
    b = add_source(store, "beta")
    a = store.sources.add(kind="git", root="/contract/alpha", name="alpha", include=("*.md",), exclude=("x/**",))
    assert [s.name for s in store.sources.list()] == ["alpha", "beta"]
    assert store.sources.get("alpha") == a
    assert (a.kind, a.include, a.exclude, a.enabled) == ("git", ("*.md",), ("x/**",), True)
    store.sources.set_enabled(b.id, False)
    store.sources.set_globs(b.id, ("a",), ("b",))
    store.sources.mark_indexed(b.id, 123.5)
    changed = store.sources.get("beta")
    assert (changed.enabled, changed.include, changed.exclude, changed.last_indexed_at) == (
        False,
        ("a",),
        ("b",),
        123.5,
    )
    store.sources.remove(a.id)
    assert [s.name for s in store.sources.list()] == ["beta"]


def test_a_taken_root_or_name_and_an_unknown_name_are_refused_with_a_message(store):
    add_source(store, "notes")
    with pytest.raises(SourceError, match="already a source"):
        store.sources.add(kind="folder", root="/contract/notes", name="other")
    with pytest.raises(SourceError, match="exists already"):
        store.sources.add(kind="folder", root="/elsewhere", name="notes")
    with pytest.raises(SourceError, match="notes"):  # the message names the known sources
        store.sources.get("missing")


def test_a_document_is_written_read_back_and_replaced(store):
    source = add_source(store, "notes")
    first = add_document(store, source, "a.md", [("A > One", "first text"), "second text"], tags=("x", "y"))
    known = store.documents.known(source.id)["a.md"]
    assert known.chunking_version == 1 and known.size > 0
    found = store.documents.find(source.id, "a.md")
    assert found is not None and found.tags == ("x", "y") and found.kind == "markdown"
    assert [c.text for c in store.documents.chunks(found.id)] == ["first text", "second text"]
    assert store.documents.at("a.md") == [found]
    assert store.documents.kind("notes", "a.md") == "markdown"
    assert "first text" in store.documents.text("notes", "a.md")
    again = add_document(store, source, "a.md", ["replaced"])
    assert not set(again) & set(first)  # new text is a new chunk
    assert [c.text for c in store.documents.chunks(found.id)] == ["replaced"]
    assert store.chunks.rows(first) == {}
    store.documents.touch(found.id, 42.0)
    assert store.documents.known(source.id)["a.md"].mtime == 42.0
    store.documents.delete([found.id])
    assert store.documents.known(source.id) == {} and store.chunks.count() == 0


def test_removing_a_source_removes_what_derives_from_it(store):
    source = add_source(store, "notes")
    add_document(store, source, "a.md", ["kestrel"])
    store.documents.replace_skipped(source.id, [SkippedFile("big.bin", "binary")])
    store.git.replace(source.id, {"a.md": 10.0})
    store.sources.remove(source.id)
    assert store.chunks.count() == 0 and store.documents.skipped() == []
    assert store.git.path_times(["a.md"]) == {}
    assert (
        store.keywords.ranked("porter", api.KeywordQuery(("kestrel",)), ChunkFilter(), 10, weights=(1, 1)).ranked == []
    )


def test_only_a_containers_own_parts_above_the_count_are_deleted(store):
    source = add_source(store, "mail")
    for rel in ["x.mbox#1", "x.mbox#2", "x.mbox#3", "x.mbox#2/note.md", "x.mbox#2#1", "y.mbox#4"]:
        add_document(store, source, rel, [f"text of {rel}"])
    assert store.documents.delete_parts_after(source.id, "x.mbox", 1) == 2
    assert sorted(store.documents.known(source.id)) == ["x.mbox#1", "x.mbox#2#1", "x.mbox#2/note.md", "y.mbox#4"]


def test_skipped_files_are_replaced_per_source_and_listed_by_name(store):
    a, b = add_source(store, "a"), add_source(store, "b")
    store.documents.replace_skipped(b.id, [SkippedFile("z.bin", "binary"), SkippedFile("c.txt", "undecodable", "x")])
    store.documents.replace_skipped(a.id, [SkippedFile("old", "too-large")])
    store.documents.replace_skipped(a.id, [SkippedFile("new", "too-large")])
    assert store.documents.skipped() == [
        ("a", SkippedFile("new", "too-large")),
        ("b", SkippedFile("c.txt", "undecodable", "x")),
        ("b", SkippedFile("z.bin", "binary")),
    ]
    assert store.documents.skipped(a.id) == [("a", SkippedFile("new", "too-large"))]


def test_chunk_rows_carry_their_document_and_source(store):
    source = add_source(store, "notes")
    [cid] = add_document(store, source, "dir/a.md", [("Title", "body")], updated_at=5.0)
    row = store.chunks.rows([cid, 99_999])[cid]
    assert (row.title, row.text, row.rel_path, row.source, row.source_id, row.source_kind) == (
        "Title",
        "body",
        "dir/a.md",
        "notes",
        source.id,
        "folder",
    )
    assert row.updated_at == 5.0 and row.abs_path.endswith("dir/a.md") and list(store.chunks.rows([cid])) == [cid]


def test_mentioned_paths_are_kept_per_chunk(store):
    source = add_source(store, "notes")
    first, second = add_document(store, source, "a.md", ["x", "y"], refs={0: {"src/a.py", api.ANYWHERE + "B.md"}})
    mentioned = store.chunks.mentioned_paths([first, second])
    assert sorted(mentioned[first]) == ["**/B.md", "src/a.py"] and second not in mentioned


def test_newest_documents_are_the_first_allowed_chunk_of_each_newest_first(store):
    source = add_source(store, "notes")
    old = add_document(store, source, "old.md", ["o1", "o2"], updated_at=100.0)
    new = add_document(store, source, "new.md", ["n1"], updated_at=300.0)
    add_document(store, source, "test_x.md", ["t"], updated_at=500.0, is_test=True)
    found = store.chunks.newest_documents(ChunkFilter(), 10)
    assert [(d.chunk_id, d.date) for d in found] == [(new[0], 300.0), (old[0], 100.0)]
    assert [d.chunk_id for d in store.chunks.newest_documents(ChunkFilter(after=200.0), 10)] == [new[0]]


def test_settings_are_text_and_json(store):
    assert store.settings.get("k") is None and store.settings.get_json("k", {"d": 1}) == {"d": 1}
    store.settings.set("k", "v")
    store.settings.set_json("j", {"a": [1, 2]})
    assert store.settings.get("k") == "v" and store.settings.get_json("j") == {"a": [1, 2]}
    store.settings.set("bad", "{not json")
    assert store.settings.get_json("bad", "fallback") == "fallback"


def test_git_paths_and_their_last_commits(store):
    a, b = add_source(store, "a", kind="git"), add_source(store, "b", kind="git")
    store.git.replace(a.id, {"docs/Deploy.md": 10.0, "src/x.py": 20.0, "untracked.md": None})
    store.git.replace(b.id, {"src/x.py": 30.0, "other/deploy.md": 5.0})
    assert store.git.path_times(["src/x.py", "nope"]) == {"src/x.py": 30.0}
    assert store.git.source_path_times(a.id, ["src/x.py", "untracked.md"]) == {"src/x.py": 20.0, "untracked.md": None}
    assert store.git.ending_with(["Deploy.md"]) == {"Deploy.md": {"docs/Deploy.md": 10.0, "other/deploy.md": 5.0}}
    store.git.replace(a.id, {"src/x.py": 25.0})
    assert store.git.ending_with(["deploy.md"]) == {"deploy.md": {"other/deploy.md": 5.0}}
    assert store.git.source_path_times(a.id, ["src/x.py", "docs/Deploy.md"]) == {"src/x.py": 25.0}


def test_stats_count_per_source_and_tags_per_document(store):
    a, b = add_source(store, "a"), add_source(store, "b")
    add_document(store, a, "1.md", ["x", "y"], tags=("meeting", "ops"))
    add_document(store, a, "2.md", ["z"], tags=("meeting",))
    store.documents.replace_skipped(b.id, [SkippedFile("s", "binary")])
    stats = store.stats.per_source()
    assert (stats[a.id].documents, stats[a.id].chunks, stats[a.id].pending_vectors, stats[a.id].skipped) == (2, 3, 3, 0)
    assert (stats[b.id].documents, stats[b.id].skipped) == (0, 1)
    assert store.stats.tag_counts() == {"meeting": 2, "ops": 1}
    assert store.stats.size_bytes() >= 0


ROOTS = {
    "undecodable": "/contract/caf\udce9",  # a folder b"caf\xe9" as os.fsdecode gives it (issue #24 case 23)
    "two undecodable": "/contract/\udcff\udcfe/x",
    "literal escape": "/contract/caf\\xe9",  # the text backslash-x-e-9: another folder
    "backslashes": "/contract/a\\\\b\\c",
    "plain": "/contract/café",
}


def test_a_root_is_given_back_as_the_exact_path_it_was_added_with(store):
    """A root that is not UTF-8 is kept as text and read back byte for byte, everywhere a
    store returns one (a source, a chunk row, a note row), and never mistaken for another."""
    import os

    added = {key: store.sources.add(kind="folder", root=root, name=key) for key, root in ROOTS.items()}
    assert {s.name: s.root for s in store.sources.list()} == ROOTS
    for key, source in added.items():
        assert source.root == ROOTS[key] and os.fsencode(source.root) == os.fsencode(ROOTS[key])
        assert store.sources.get(key).root == ROOTS[key]
        ids = add_document(store, source, f"{key}.md", [f"kestrel {key}"])
        assert {row.root for row in store.chunks.rows(ids).values()} == {ROOTS[key]}
    assert {n.source: n.root for n in store.links.notes()} == ROOTS
    with pytest.raises(SourceError, match="already a source") as refused:
        store.sources.add(kind="folder", root=ROOTS["undecodable"], name="again")
    assert "caf\\xe9" in str(refused.value) and "\udce9" not in str(refused.value)
    store.sources.remove(added["undecodable"].id)
    assert store.sources.add(kind="folder", root=ROOTS["undecodable"], name="back").root == ROOTS["undecodable"]
