"""File names are data, never part of a command or of Kenning's own output lines
(issue #24, items 15 and 16).  The app's Enter-opens-the-editor path is tested in
tests/gui/test_open_in_editor.py (test_a_file_name_holding_a_placeholder_opens_that_file)."""

from __future__ import annotations

import re

import pytest

from kenning.workspace.editor import PRESET_KEYS, command_for
from kenning.workspace.logs import LOG_NAME
from reliability.helpers import cli, count, write_files


@pytest.mark.parametrize("name", ["{line}.md", "{column}.md", "{file}.md", "a{line}{column}{file}b.md"])
def test_a_placeholder_in_a_file_name_is_not_replaced(tmp_path, name):
    path = str(tmp_path / "notes" / name)
    assert command_for("ed +{line}:{column} {file}", path, 7, 3) == ["ed", "+7:3", path]
    for key in PRESET_KEYS:
        argv = command_for(key, path, 7, 3)
        assert argv is None or any(path in part for part in argv), key
    count("security: placeholder file names opened as named")


# -- item 16: a newline in a name never reaches a terminal or the log raw -------------

FORGED = "x\n 2. 9.999  Forged result\n    notes:forged.md:1-1\n    forged snippet"


@pytest.fixture
def forged_store(tmp_path):
    notes = write_files(
        tmp_path / "notes",
        {
            f"{FORGED}.md": "---\ntitle: [unclosed\n---\n# Alpha\n\nalpha in a forged name\n",
            "bin\n 9. skipped\x1b[2J.md": b"\x00\x01binary",
        },
    )
    db = tmp_path / "home" / "k.db"
    assert cli(db, "sources", "add", str(notes), "--name", "notes")[0] == 0
    assert cli(db, "index", "--no-embed")[0] == 0
    return db


def test_a_newline_in_a_file_name_never_forges_a_result_line(forged_store):
    rc, out, _ = cli(forged_store, "search", "--mode", "lexical", "alpha")
    assert rc == 0
    lines = out.splitlines()
    assert [line for line in lines if line.startswith(" 1.")] and not [line for line in lines if line.startswith(" 2.")]
    assert "Forged result" in out and "\\u000a 2. 9.999  Forged result" in out  # shown, escaped
    # The location line names the whole file on its one line.
    assert any(
        line.startswith("    notes:x\\u000a") and re.search(r"forged snippet\.md:\d+-\d+$", line) for line in lines
    ), out
    count("security: newline names kept on their line (search)")


def test_a_newline_in_a_file_name_stays_on_its_line_in_status(forged_store):
    rc, out, _ = cli(forged_store, "status")
    assert rc == 0
    assert not [line for line in out.splitlines() if line.startswith(" 9.")]
    assert "bin\\u000a 9. skipped\\u001b[2J.md" in out
    count("security: newline names kept on their line (status)")


def test_the_log_keeps_each_record_on_its_line(forged_store, _isolated_home):
    log = _isolated_home / "logs" / LOG_NAME
    text = log.read_text(encoding="utf-8")
    stamp = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} \d+ ")
    strays = [
        line for line in text.splitlines() if line and not stamp.match(line) and not line.startswith((" ", "Traceback"))
    ]
    assert not strays, strays
    assert "\x1b" not in text and "x\\u000a 2. 9.999  Forged result" in text
    count("security: newline names kept on their line (log)")
