"""What scripts read: `--json` says what the query meant, `status --json` exists, and the
README's JSON tables name exactly the fields printed (CLI and MCP answers alike)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from kenning.cli.main import main
from kenning.mcpserver import schema
from kenning_testing import json_hits, write_files

README = Path(__file__).resolve().parent.parent / "README.md"


@pytest.fixture
def db(tmp_path, capsys):
    notes = write_files(
        tmp_path / "notes",
        {
            "pg.md": "# Postgres tuning\n\nPostgres tuning: shared buffers and work mem.\n",
            "deploy.md": "# Deploy\n\nRetrieval of the release artefacts.\n",
        },
    )
    store = str(tmp_path / "k.db")
    main(["--store", store, "sources", "add", str(notes), "--name", "notes"])
    main(["--store", store, "index", "--no-embed"])
    capsys.readouterr()
    return store


def _search(capsys, db, *words) -> tuple[dict, list[dict]]:
    assert main(["--store", db, "search", "--json", "--mode", "lexical", *words]) == 0
    out = capsys.readouterr().out
    first = json.loads(out.splitlines()[0])
    assert first["type"] == "search"
    return first, json_hits(out)


def test_json_says_which_source_name_is_unknown(capsys, db):
    assert main(["--store", db, "search", "--json", "--mode", "lexical", "tuning", "source:nosuch"]) == 0
    out, err = capsys.readouterr()
    summary = json.loads(out.splitlines()[0])
    assert summary["version"] == 1 and summary["mode"] == "lexical" and summary["hits"] == len(json_hits(out)) == 0
    assert any("source:nosuch names no source" in note for note in summary["notes"])
    assert "kenning: note: source:nosuch names no source" in err  # and a person sees it too


def test_json_carries_corrections_and_did_you_mean(capsys, db):
    fuzzy, hits = _search(capsys, db, "retreival")
    assert fuzzy["corrections"] == {"retreival": "retrieval"} and fuzzy["layer"].endswith("-fuzzy")
    assert hits and hits[0]["path"] == "deploy.md"
    offered, hits = _search(capsys, db, "postgres", "tunning")
    assert offered["did_you_mean"] == "postgres tuning" and hits[0]["path"] == "pg.md"


def test_status_json_is_one_object_scripts_can_read(capsys, db, tmp_path):
    assert main(["--store", db, "status", "--json"]) == 0
    status = json.loads(capsys.readouterr().out)
    assert status["version"] == 1 and status["documents"] == 2 and status["vectors_pending"] == 2
    assert [s["name"] for s in status["sources"]] == ["notes"]
    assert status["store"] == db and status["log"].endswith("kenning.log")


# -- the README's tables -----------------------------------------------------------


def _readme_fields(heading: str) -> set[str]:
    """The field names (first column, in backticks) of the table under a README heading."""
    text = README.read_text(encoding="utf-8")
    start = text.index(f"\n### {heading}\n")
    end = text.find("\n#", start + 5)
    section = text[start : end if end > 0 else len(text)]
    return {m.group(1) for m in re.finditer(r"^\| `([a-z_.]+)`", section, re.MULTILINE)}


def test_the_readme_tables_name_every_field_of_search_json(capsys, db):
    summary, _ = _search(capsys, db, "tuning")
    assert main(["--store", db, "search", "--json", "--explain", "--mode", "lexical", "tuning"]) == 0
    (hit,) = json_hits(capsys.readouterr().out)[:1]
    assert _readme_fields("`kenning search --json`: the first line") == set(summary)
    assert _readme_fields("`kenning search --json`: each hit") == set(hit) | {"obsidian_url"}
    assert _readme_fields("The breakdown") == set(hit["breakdown"])


def test_the_readme_tables_name_every_field_of_status_json(capsys, db):
    main(["--store", db, "status", "--json"])
    status = json.loads(capsys.readouterr().out)
    assert _readme_fields("`kenning status --json`") == set(status)


def test_the_readme_tables_name_every_field_of_the_mcp_answers():
    every = set(schema._Answer.model_fields)
    assert _readme_fields("MCP answers: every answer") == every
    for tool, model in (
        ("search", schema.SearchAnswer),
        ("read", schema.ReadAnswer),
        ("related", schema.RelatedAnswer),
        ("backlinks", schema.BacklinksAnswer),
        ("unresolved_links", schema.UnresolvedAnswer),
        ("sources", schema.SourcesAnswer),
        ("status", schema.StatusAnswer),
    ):
        assert _readme_fields(f"MCP answers: `{tool}`") == set(model.model_fields) - every, tool
    assert _readme_fields("MCP answers: `index`") == set(schema.IndexState.model_fields)


def test_the_readme_table_names_every_field_of_links_json(capsys, tmp_path):
    notes = write_files(tmp_path / "v", {"A.md": "# A\n\n[[B]] and [[A]]\n", "B.md": "# B\n\nsee A\n"})
    db = str(tmp_path / "k.db")
    main(["--store", db, "sources", "add", str(notes), "--name", "v"])
    main(["--store", db, "index", "--no-embed"])
    capsys.readouterr()
    assert main(["--store", db, "links", "B.md", "--json"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert _readme_fields("`kenning links --json`") == set(record)
    assert record["backlinks"][0]["path"] == "A.md" and record["mentions"] == []
