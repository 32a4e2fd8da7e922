"""An Obsidian vault as Obsidian sees it: aliases, nested front-matter tags, long fences,
and links as a graph (backlinks, unresolved links, unlinked mentions)."""

from __future__ import annotations

import json

import pytest

from kenning.cli.main import main
from kenning.embedding import FakeEmbedder
from kenning.ingest.frontmatter import parse_front_matter
from kenning.ingest.obsidian import inline_tags, wiki_link_paths
from kenning.search.engine import SearchEngine, SearchOptions
from kenning.workspace import Workspace
from kenning_testing import index_folder, write_files

CHECKLIST = """---
aliases: [Shipping checklist, DK]
tags: [project/beta, ops]
---
# Release steps

Tag the build, write the notes, then announce it.
"""

VAULT = {
    "Release steps.md": CHECKLIST,
    "Rollback.md": "---\naliases:\n  - Revert procedure\n---\n# Rollback\n\nRun the previous image again.\n",
    "Journal.md": "# Journal\n\nToday I went through the [[Shipping checklist]] and the [[Rollback#Steps|undo]].\n"
    "Then [[Missing note]] and ![[diagram.png]] and [[DK]].\nLater the release steps went fine.\n",
    "ops/Handover.md": "# Handover\n\nSee [release](../Release%20steps.md) and [[ops/Nowhere]].\n"
    "Remember the revert procedure.\n",
    "scripts/ship.sh": "#!/bin/sh\n# shipping script\necho sh sh sh\n",
    "scripts/every.sh": "#!/bin/sh\necho every every\n",
    ".obsidian/app.json": "{}",
}


@pytest.fixture
def vault(tmp_path):
    return write_files(tmp_path / "vault", VAULT)


def test_front_matter_aliases_are_read_as_whole_names():
    front = parse_front_matter(CHECKLIST)
    assert front.aliases == ("Shipping checklist", "DK")
    assert parse_front_matter("---\nalias: One, Two\n---\nx\n").aliases == ("One", "Two")
    assert parse_front_matter("---\naliases:\n---\nx\n").aliases == ()


def test_nested_front_matter_tags_match_their_parent_like_inline_tags():
    assert parse_front_matter(CHECKLIST).tags == ("project", "project/beta", "ops")


def test_a_long_fence_holding_a_short_one_leaks_no_tags_or_links():
    text = "Real #kept.\n````md\n```\n#leaked [[Leaked]]\n```\n#leaked2 [[Leaked2]]\n````\nAfter #after [[After]].\n"
    assert inline_tags(text) == ("kept", "after")
    assert wiki_link_paths(text, "n.md") == {"After.md", "**/After.md"}
    from kenning.ingest.obsidian import note_links

    assert [link.target for link in note_links(text)] == ["After"]


def test_links_are_recorded_with_their_lines_and_embeds():
    from kenning.ingest.obsidian import note_links

    text = "One [[A#h|x]]\n`[[code]]` ![[img.png]]\n[md](b/c.md#top) [web](https://x.org/a.md) [[#Self]]\n"
    found = [(link.target, link.line, link.embed) for link in note_links(text, first_line=10)]
    assert found == [("A", 10, False), ("img.png", 11, True), ("b/c.md", 12, False)]


@pytest.mark.parametrize("query", ["Shipping checklist", "shipping checklist", "DK", "Revert procedure"])
def test_a_query_equal_to_an_alias_finds_its_note_first_and_is_never_corrected(store, vault, query):
    embedder = FakeEmbedder()
    index_folder(store, vault, embedder, name="vault")
    expected = "Rollback.md" if query.startswith("Revert") else "Release steps.md"
    for engine, mode in ((SearchEngine(store, None), "lexical"), (SearchEngine(store, embedder), "hybrid")):
        result = engine.search(query, SearchOptions(mode=mode))
        assert result.hits and result.hits[0].path == expected, (mode, [h.path for h in result.hits])
        assert result.corrections == {} and result.suggestion is None
        assert not result.layer.endswith(("fuzzy", "corrected"))


def test_nested_front_matter_tag_filters_by_its_parent(store, vault):
    index_folder(store, vault, name="vault")
    engine = SearchEngine(store, None)
    assert [h.path for h in engine.search("build tag:project").hits] == ["Release steps.md"]
    assert [h.path for h in engine.search("build tag:project/beta").hits] == ["Release steps.md"]


# -- the link graph ---------------------------------------------------------------


def test_backlinks_resolve_by_alias_heading_markdown_path_and_name(store, vault):
    index_folder(store, vault, name="vault")
    ws = Workspace(store.path)
    links = ws.note_links(str(vault / "Release steps.md"))
    assert [(b.origin.path, b.line, b.target) for b in links.backlinks] == [
        ("Journal.md", 3, "Shipping checklist"),
        ("Journal.md", 4, "DK"),
        ("ops/Handover.md", 3, "../Release steps.md"),
    ]
    assert (
        links.backlinks[0].context == "Today I went through the [[Shipping checklist]] and the [[Rollback#Steps|undo]]."
    )
    assert all(b.to is not None and b.to.path == "Release steps.md" for b in links.backlinks)
    rollback = ws.note_links("Rollback.md", "vault")
    assert [(b.origin.path, b.target) for b in rollback.backlinks] == [("Journal.md", "Rollback")]
    ws.close()


def test_mentions_are_the_names_said_without_a_link(store, vault):
    index_folder(store, vault, name="vault")
    with Workspace(store.path) as ws:
        steps = ws.note_links("Release steps.md", "vault")
        assert [(m.origin.path, m.line, m.name) for m in steps.mentions] == [("Journal.md", 5, "release steps")]
        assert set(steps.names) == {"Release steps", "Shipping checklist", "DK"}
        rollback = ws.note_links("Rollback.md", "vault")
        assert [(m.origin.path, m.name) for m in rollback.mentions] == [("ops/Handover.md", "revert procedure")]


def test_unresolved_links_leave_out_attachments_and_say_which_names_are_ambiguous(store, vault, tmp_path):
    (vault / "a").mkdir()
    (vault / "b").mkdir()
    (vault / "a" / "Runbook.md").write_text("# Runbook A\n", encoding="utf-8")
    (vault / "b" / "Runbook.md").write_text("# Runbook B\n", encoding="utf-8")
    (vault / "Index.md").write_text("# Index\n\n[[Runbook]] and [[a/Runbook]]\n", encoding="utf-8")
    index_folder(store, vault, name="vault")
    with Workspace(store.path) as ws:
        found = {(link.origin.path, link.target, link.status) for link in ws.unresolved_links()}
        assert found == {
            ("Journal.md", "Missing note", "unresolved"),
            ("ops/Handover.md", "ops/Nowhere", "unresolved"),
            ("Index.md", "Runbook", "ambiguous"),
        }
        ambiguous = next(link for link in ws.unresolved_links("vault") if link.status == "ambiguous")
        assert ambiguous.candidates == ("a/Runbook.md", "b/Runbook.md")
        assert [b.origin.path for b in ws.note_links("a/Runbook.md", "vault").backlinks] == ["Index.md"]


def test_a_note_added_later_resolves_links_written_before_it(store, vault):
    from kenning_testing import reindex

    index_folder(store, vault, name="vault")
    with Workspace(store.path) as ws:
        assert any(link.target == "Missing note" for link in ws.unresolved_links())
        (vault / "Missing note.md").write_text("# Found\n", encoding="utf-8")
        reindex(store)
        assert not any(link.target == "Missing note" for link in ws.unresolved_links())
        assert [b.origin.path for b in ws.note_links("Missing note.md", "vault").backlinks] == ["Journal.md"]


def test_the_cli_lists_backlinks_mentions_and_unresolved_links(tmp_path, vault, capsys):
    store = str(tmp_path / "k.db")
    main(["--store", store, "sources", "add", str(vault), "--name", "vault"])
    main(["--store", store, "index", "--no-embed"])
    capsys.readouterr()
    assert main(["--store", store, "links", str(vault / "Release steps.md")]) == 0
    out = capsys.readouterr().out
    assert "backlinks (3)" in out and "vault:Journal.md:3" in out
    assert "unlinked mentions (1)" in out
    assert main(["--store", store, "links", "Release steps.md", "--source", "vault", "--json"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert record["version"] >= 1
    assert [b["path"] for b in record["backlinks"]] == ["Journal.md", "Journal.md", "ops/Handover.md"]
    assert main(["--store", store, "links", "--unresolved"]) == 0
    out = capsys.readouterr().out
    assert "Journal.md:4" in out and "Missing note" in out and "diagram.png" not in out


def test_the_migration_has_the_next_run_read_only_the_notes_again(store, tmp_path):
    from kenning.storage.migrations import m009_note_links
    from kenning_testing import CountingEmbedder, reindex

    folder = write_files(tmp_path / "notes", {"a.md": "# A\n\n[[B]]\n", "b.py": "x = 1\n", "c.txt": "plain\n"})
    index_folder(store, folder, CountingEmbedder(), name="notes")
    store.execute("DROP TABLE chunk_links")
    store.execute("DROP TABLE document_aliases")
    with store.atomic():
        m009_note_links(store)
    again = CountingEmbedder()
    (report,) = reindex(store, again).reports
    assert (report.changed, report.unchanged) == (1, 2)
    assert again.embedded == []  # the note's vectors come from the embedding cache
    with Workspace(store.path) as ws:
        assert [link.target for link in ws.unresolved_links()] == ["B"]


def test_the_model_reads_a_notes_front_matter_names(store, vault):
    """An alias is a name of the note for the meaning list too, not only a keyword: the
    model reads the front matter's title, aliases and tags before the heading path."""
    embedder = FakeEmbedder()
    index_folder(store, vault, embedder, name="vault")
    engine = SearchEngine(store, embedder)
    for query, expected in (("Revert procedure", "Rollback.md"), ("Shipping checklist", "Release steps.md")):
        hits = engine.search(query, SearchOptions(mode="vector")).hits
        assert hits and hits[0].path == expected, (query, [h.path for h in hits])


def test_notes_without_front_matter_and_other_kinds_read_as_before():
    from kenning.ingest.embedtext import embedding_input

    plain = embedding_input("Rollback", "# Rollback\n\nRun it again.", "markdown", "Rollback.md")
    assert embedding_input("Rollback", "# Rollback\n\nRun it again.", "markdown", "Rollback.md", names="") == plain
    assert embedding_input("Steps", "Run it again.", "markdown", "a.md", names="Revert procedure") == (
        "Revert procedure\nSteps\nRun it again."
    )
    assert embedding_input("a.pdf", "Run it again.", "pdf", "a.pdf", names="x") == "Run it again."
