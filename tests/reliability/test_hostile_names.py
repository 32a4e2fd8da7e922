"""File names are data, never part of a command or of Kenning's own output lines
(issue #24, items 15 and 16).  The app's Enter-opens-the-editor path is tested in
tests/gui/test_open_in_editor.py (test_a_file_name_holding_a_placeholder_opens_that_file)."""

from __future__ import annotations

import pytest

from kenning.workspace.editor import PRESET_KEYS, command_for
from reliability.helpers import count


@pytest.mark.parametrize("name", ["{line}.md", "{column}.md", "{file}.md", "a{line}{column}{file}b.md"])
def test_a_placeholder_in_a_file_name_is_not_replaced(tmp_path, name):
    path = str(tmp_path / "notes" / name)
    assert command_for("ed +{line}:{column} {file}", path, 7, 3) == ["ed", "+7:3", path]
    for key in PRESET_KEYS:
        argv = command_for(key, path, 7, 3)
        assert argv is None or any(path in part for part in argv), key
    count("security: placeholder file names opened as named")
