"""Values that are not numbers, not UTF-8 or not what a row should hold are clear
errors or skipped rows, never "Something went wrong inside Kenning" (issue #24, items
23, 24 and 26)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from kenning.storage import open_store
from kenning.workspace import Workspace
from kenning.workspace.settings import SettingsError
from reliability.helpers import cli, count, write_files

INTERNAL = "Something went wrong inside Kenning"


@pytest.fixture
def db(tmp_path):
    notes = write_files(tmp_path / "notes", {"a.md": "# Alpha\n\nalpha beta\n"})
    path = tmp_path / "home" / "k.db"
    assert cli(path, "sources", "add", str(notes), "--name", "notes")[0] == 0
    assert cli(path, "index", "--no-embed")[0] == 0
    return path


# -- item 26: nan, inf and all-zero weights -------------------------------------------


@pytest.mark.parametrize(
    ("variable", "value"),
    [
        ("KENNING_LIMIT", "nan"),
        ("KENNING_LIMIT", "inf"),
        ("KENNING_LIMIT", "-1e400"),
        ("KENNING_SIZE_CAP_MB", "nan"),
        ("KENNING_SIZE_CAP_MB", "infMB"),
    ],
)
@pytest.mark.parametrize("argv", [["search", "alpha"], ["status"], ["index", "--no-embed"]], ids=lambda a: a[0])
def test_a_number_that_is_no_number_in_the_environment_is_a_clear_error(db, monkeypatch, variable, value, argv):
    monkeypatch.setenv(variable, value)
    rc, out, err = cli(db, *argv)
    assert rc != 0 and INTERNAL not in err
    assert f"{variable}={value!r} in the environment" in err and "whole number" in err
    count("streams: bad arguments refused")


@pytest.mark.parametrize(
    ("name", "value"),
    [("limit", "nan"), ("limit", "inf"), ("size_cap", "nan"), ("size_cap", "NaN MB"), ("weights", "porter=nan")],
)
def test_settings_set_refuses_nan_and_inf(db, name, value):
    rc, _, err = cli(db, "settings", "set", name, value)
    assert rc != 0 and INTERNAL not in err and err.strip()
    rc, out, _ = cli(db, "search", "alpha")  # nothing was stored: every command still answers
    assert rc == 0 and "Alpha" in out
    count("streams: bad arguments refused")


def test_all_zero_weights_are_refused_everywhere(db, monkeypatch):
    zero = "porter=0 trigram=0 vector=0 feedback=0"
    rc, _, err = cli(db, "settings", "set", "weights", zero)
    assert rc != 0 and "At least one weight must be above 0" in err
    with Workspace(db) as ws, pytest.raises(SettingsError, match="At least one weight"):  # the app's dialog
        ws.update_settings(weights=dict.fromkeys(("porter", "trigram", "vector", "feedback"), 0))
    assert "porter=1" in cli(db, "settings", "list")[1]
    count("streams: bad arguments refused")


@pytest.mark.parametrize(
    ("name", "raw"), [("limit", "NaN"), ("limit", "Infinity"), ("size_cap", "NaN"), ("weights", '{"porter": NaN}')]
)
def test_a_damaged_stored_setting_reads_as_the_default(db, name, raw):
    """Written by hand or by another version: the default is the safe reading."""
    store = open_store(db)
    try:
        store.execute("INSERT OR REPLACE INTO settings (key, value) VALUES (?, ?)", (name, raw))
    finally:
        store.close()
    rc, out, err = cli(db, "search", "alpha")
    assert rc == 0 and "Alpha" in out and INTERNAL not in err
    assert "(default)" in next(line for line in cli(db, "settings", "list")[1].splitlines() if line.startswith(name))
    count("data-loss: damaged settings read as defaults")


# -- item 23: arguments that are not valid UTF-8 --------------------------------------

BYTE = os.fsdecode(b"caf\xe9")  # how Python hands a program an argument holding byte 0xE9


@pytest.fixture
def odd_folder(tmp_path):
    return write_files(Path(os.fsdecode(os.fsencode(tmp_path) + b"/caf\xe9")), {"a.md": "# A\n\nalpha\n"})


def test_a_missing_folder_whose_path_is_not_utf8_is_refused_and_logged(db, tmp_path):
    """The refusal's text holds the undecodable byte: the log file writes it escaped,
    never a '--- Logging error ---' traceback on the terminal."""
    missing = os.fsdecode(os.fsencode(tmp_path) + b"/caf\xe9-gone")
    rc, _, err = cli(db, "sources", "add", missing)
    assert rc == 2 and INTERNAL not in err and "Logging error" not in err and "Traceback" not in err, err
    assert "caf\\xe9-gone does not exist" in err and "\udce9" not in err, err  # escaped, never raw
    count("streams: bad arguments refused")


@pytest.mark.parametrize(
    "argv",
    [
        ["sources", "add", "{notes}", "--name", BYTE],
        ["index", BYTE],
        ["sources", "remove", BYTE],
        ["sources", "disable", BYTE],
        ["sources", "globs", BYTE, "--exclude", "x"],
    ],
    ids=["add --name", "index", "remove", "disable", "globs"],
)
def test_a_source_name_that_is_not_utf8_is_a_clear_error(db, tmp_path, argv):
    other = write_files(tmp_path / "other", {"b.md": "# B\n"})
    rc, _, err = cli(db, *[a.replace("{notes}", str(other)) for a in argv])
    assert rc == 2 and INTERNAL not in err and "caf\\xe9" in err and "UTF-8" in err, err
    count("streams: bad arguments refused")


def test_a_store_path_that_is_not_utf8_is_a_clear_error(tmp_path):
    store = os.fsdecode(os.fsencode(tmp_path) + b"/k\xe9.db")
    for argv in (["status"], ["search", "x"], ["sources", "list"]):
        rc, _, err = cli(store, *argv)
        assert rc != 0 and INTERNAL not in err and "k\\xe9.db" in err and "not valid UTF-8" in err, err
    count("streams: bad arguments refused")


def test_the_app_and_mcp_refuse_a_source_name_that_is_not_utf8(tmp_path, odd_folder):
    """A folder whose path is not UTF-8 is a source like any other
    (test_undecodable_roots.py); a name given so is refused, by every front end."""
    from kenning.cli.output import hit_dict
    from kenning.core.errors import SourceError
    from kenning.mcpserver.service import KenningService

    ws = Workspace(tmp_path / "store" / "k.db", model="fake")
    service = KenningService(ws, hit_dict, allow_writes=True)
    try:
        with pytest.raises(SourceError, match="not valid UTF-8"):
            ws.add_folder(odd_folder, name=BYTE)
        with pytest.raises(SourceError, match="not valid UTF-8"):  # a JSON string may hold a lone surrogate
            service.add_source(str(tmp_path), name="n\udce9")
        assert ws.list_sources() == []
    finally:
        service.close()


# -- item 24: damaged remembered-query rows, stored vectors and codes -----------------

DAMAGE = {
    "query used_at as text": "UPDATE query_vectors SET used_at = 'yesterday'",
    "query vector as text": "UPDATE query_vectors SET vector = CAST(vector AS TEXT)",
    "query vector of NaN": "UPDATE query_vectors SET vector = ?",
    "query vector too short": "UPDATE query_vectors SET vector = x'0000'",
    "a code too short": "UPDATE vector_codes SET code = x'00' WHERE chunk_id = (SELECT min(chunk_id) FROM vector_codes)",
    "a vector too short": "UPDATE embeddings SET vector = x'0000' WHERE rowid = (SELECT min(rowid) FROM embeddings)",
    "a vector of NaN": "UPDATE embeddings SET vector = ? WHERE rowid = (SELECT min(rowid) FROM embeddings)",
}


def _strict_json(line: str):
    def refuse(constant):
        raise ValueError(f"{constant} is not JSON")

    return json.loads(line, parse_constant=refuse)


@pytest.fixture
def embedded(tmp_path):
    notes = write_files(tmp_path / "notes", {f"n{i}.md": f"# N{i}\n\nalpha beta {i}\n" for i in range(6)})
    path = tmp_path / "home" / "k.db"
    assert cli(path, "sources", "add", str(notes), "--name", "notes")[0] == 0
    assert cli(path, "index")[0] == 0
    assert cli(path, "search", "alpha")[0] == 0  # remembers the query's vector
    return path


@pytest.mark.parametrize("damage", sorted(DAMAGE))
def test_a_damaged_vector_row_is_skipped_never_an_internal_error(embedded, damage, _isolated_home, monkeypatch):
    import numpy as np

    from kenning.storage import damaged

    monkeypatch.setattr(damaged, "_said", set())  # a fresh process's memory of what it said
    store = open_store(embedded)
    try:
        assert store.scalar("SELECT count(*) FROM query_vectors") == 1
        width = len(store.scalar("SELECT vector FROM query_vectors")) // 4
        nan = np.full(width, np.nan, dtype=np.float32 if "query" in damage else np.float16).tobytes()
        store.execute(DAMAGE[damage], (nan,) if "NaN" in damage else ())
    finally:
        store.close()
    for _ in range(2):
        rc, out, err = cli(embedded, "search", "--json", "--explain", "alpha")
        assert rc == 0 and INTERNAL not in err, err
        records = [_strict_json(line) for line in out.splitlines()]  # NaN is not JSON
        assert sum(r["type"] == "hit" for r in records) >= 5
    with Workspace(embedded) as ws:  # the app's and the MCP server's path
        from kenning.embedding import FakeEmbedder

        result = ws.searcher(FakeEmbedder()).search("alpha", "hybrid")
        assert len(result.hits) >= 5
        assert all(np.isfinite(h.breakdown.cosine or 0.0) for h in result.hits)
    log = (_isolated_home / "logs" / "kenning.log").read_text(encoding="utf-8")
    assert log.count("a damaged ") == 1, log  # reported once, not once a search
    count("data-loss: damaged rows skipped")
