"""Obsidian vaults: wiki links feed the git signal, inline #tags filter, tool folders skipped, obsidian:// links."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

from hypothesis import given
from hypothesis import strategies as st

from gitutil import commit, make_repo
from kenning.cli.main import main
from kenning.ingest.obsidian import inline_tags, wiki_link_paths
from kenning.search.engine import SearchEngine
from kenning.workspace.obsidian import obsidian_url
from kenning_testing import index_folder, write_files

NOW = datetime(2025, 6, 1, tzinfo=timezone.utc)


def test_wiki_links_name_vault_and_note_relative_paths():
    text = "See [[Deploy]], [[ops/Runbook#Steps|the runbook]], ![[diagram.png]] and [[../escape]]."
    assert wiki_link_paths(text, "daily/today.md") == {
        "Deploy.md",
        "daily/Deploy.md",
        "ops/Runbook.md",
        "daily/ops/Runbook.md",
        "diagram.png",
        "daily/diagram.png",
        "**/Deploy.md",  # a name anywhere in the vault (resolved at search time)
        "**/ops/Runbook.md",
        "**/diagram.png",
    }


def test_code_is_not_read_for_links_or_tags():
    text = "Real #tag and [[Note]].\n```c\n#include <x.h>\nint a[[1]];\n```\n`#inline` and `[[code]]`\n"
    assert wiki_link_paths(text, "n.md") == {"Note.md", "**/Note.md"}
    assert inline_tags(text) == ("tag",)


def test_inline_tags_as_obsidian_reads_them():
    text = "#Project/Alpha at a line start, #todo mid-line, not #123, not a#b, not http://x.org/#frag; #done."
    assert inline_tags(text) == ("project", "project/alpha", "todo", "done")


@given(st.text(max_size=300))
def test_any_text_parses(text):
    assert all(not p.startswith("../") for p in wiki_link_paths(text, "a/b.md"))
    assert all(t and not t.startswith("#") for t in inline_tags(text))


def test_a_wiki_link_to_a_recently_changed_note_lifts_the_linking_note(store, tmp_path):
    vault = make_repo(tmp_path, "vault")
    commit(vault, {"Deploy.md": "# Deploy\n\nold\n", "Archive.md": "# Archive\n\nold\n"}, NOW - timedelta(days=400))
    commit(vault, {"Deploy.md": "# Deploy\n\nnew steps\n"}, NOW - timedelta(days=2))
    index_folder(store, vault, name="vault", git=True)
    notes = write_files(
        tmp_path / "notes",
        {
            "a.md": "# Release checklist\n\nFollow [[Archive]] before the release.\n",
            "b.md": "# Release checklist\n\nFollow [[Deploy|the deploy note]] before the release.\n",
        },
    )
    index_folder(store, notes, name="notes")
    engine = SearchEngine(store, None, clock=lambda: NOW.timestamp())
    hits = engine.search("release checklist source:notes").hits
    assert [h.path for h in hits] == ["b.md", "a.md"]
    assert hits[0].breakdown.git_paths == ("Deploy.md",) and hits[0].breakdown.git == 1.0
    assert hits[1].breakdown.git == 0.0


def test_a_bare_link_names_the_one_note_of_that_name_anywhere_in_the_vault(store, tmp_path):
    vault = make_repo(tmp_path, "vault")
    old = NOW - timedelta(days=400)
    commit(vault, {"ops/Deploy.md": "old\n", "a/Runbook.md": "old\n", "b/Runbook.md": "old\n"}, old)
    commit(vault, {"ops/Deploy.md": "new\n", "a/Runbook.md": "new\n", "b/Runbook.md": "new\n"}, NOW - timedelta(days=1))
    notes = {
        "daily/deploy-day.md": "# Deploy day\n\nFollow [[deploy]] today.\n",  # Obsidian ignores case
        "daily/runbook-day.md": "# Runbook day\n\nFollow [[Runbook]] today.\n",
        "daily/exact-day.md": "# Exact day\n\nFollow [[a/Runbook]] today.\n",  # the shortest unique path
    }
    commit(vault, notes, NOW - timedelta(days=300))
    index_folder(store, vault, name="vault", git=True)
    engine = SearchEngine(store, None, clock=lambda: NOW.timestamp())
    by_path = {h.path: h.breakdown for h in engine.search("today").hits}
    deploy, runbook, exact = (by_path[f"daily/{n}-day.md"] for n in ("deploy", "runbook", "exact"))
    assert "ops/Deploy.md" in deploy.git_paths and deploy.git > 0 and deploy.ambiguous_links == ()
    assert "a/Runbook.md" in exact.git_paths and "b/Runbook.md" not in exact.git_paths
    # Two notes are called Runbook: the link names neither, and explain says so.
    assert not {"a/Runbook.md", "b/Runbook.md"} & set(runbook.git_paths)
    assert runbook.ambiguous_links == ("Runbook.md (a/Runbook.md, b/Runbook.md)",)


def test_inline_tags_work_with_the_tag_filter_and_tool_folders_are_skipped(store, tmp_path):
    vault = make_repo(tmp_path, "vault")
    files = {
        "Meeting.md": "# Standup\n\nTalked about the #roadmap/q3 plan.\n",
        "Other.md": "# Standup\n\nNo tags here.\n",
        ".obsidian/notes-plugin.md": "# Standup\n\nplugin state\n",
        ".trash/Old.md": "# Standup\n\ndeleted note\n",
    }
    commit(vault, files, NOW - timedelta(days=1))
    index_folder(store, vault, name="vault", git=True)
    engine = SearchEngine(store, None)
    assert [h.path for h in engine.search("standup tag:roadmap").hits] == ["Meeting.md"]
    assert [h.path for h in engine.search("standup tag:roadmap/q3").hits] == ["Meeting.md"]
    assert sorted(h.path for h in engine.search("standup").hits) == ["Meeting.md", "Other.md"]


def test_obsidian_link_for_files_in_a_vault_only(tmp_path):
    vault = write_files(tmp_path / "My Vault", {"Daily/2024 notes.md": "x", ".obsidian/app.json": "{}"})
    loose = write_files(tmp_path / "loose", {"n.md": "x"})
    url = obsidian_url(vault / "Daily" / "2024 notes.md")
    assert url == "obsidian://open?vault=My%20Vault&file=Daily%2F2024%20notes.md"
    assert obsidian_url(loose / "n.md") is None


def test_json_and_explain_offer_open_in_obsidian(tmp_path, capsys):
    vault = write_files(
        tmp_path / "vault", {"Idea.md": "# Idea\n\nA zeppelin timetable.\n", ".obsidian/app.json": "{}"}
    )
    store = str(tmp_path / "k.db")
    main(["--store", store, "sources", "add", str(vault)])
    main(["--store", store, "index", "--no-embed"])
    capsys.readouterr()
    main(["--store", store, "search", "zeppelin", "--json", "--mode", "lexical"])
    record = json.loads(capsys.readouterr().out.splitlines()[1])  # after the line saying what the search meant
    assert record["obsidian_url"] == "obsidian://open?vault=vault&file=Idea.md"
    main(["--store", store, "search", "zeppelin", "--explain", "--mode", "lexical"])
    assert "open in Obsidian: obsidian://open?vault=vault&file=Idea.md" in capsys.readouterr().out


def test_the_migration_makes_the_next_index_run_read_every_note_again(store, tmp_path):
    from kenning.storage.migrations import m004_obsidian_links_and_tags
    from kenning_testing import reindex

    notes = write_files(tmp_path / "notes", {"a.md": "# A\n\n#later\n", "b.py": "x = 1\n"})
    index_folder(store, notes, name="notes")
    m004_obsidian_links_and_tags(store)
    (report,) = reindex(store).reports
    assert (report.changed, report.unchanged) == (1, 1)
