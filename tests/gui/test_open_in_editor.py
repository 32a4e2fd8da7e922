"""#14 bug 5: Enter opens the hit at its line in the chosen editor; failures are shown."""

from __future__ import annotations

import os
import stat
import sys
from dataclasses import replace

import pytest
from PySide6.QtCore import Qt

from kenning.workspace import Workspace
from kenning.workspace.editor import PRESET_KEYS, command_for
from kenning.workspace.settings import SettingsError


def fake_editor(folder, name="fake-editor", exit_code=0, message=""):
    """A tiny program that records its arguments, one per line (proof: no shell split them).
    The record appears whole or not at all (written aside, then renamed into place), so a
    test may wait for it to exist and then read it."""
    script = folder / name
    record = folder / f"{name}.args"
    script.write_text(
        f"#!{sys.executable}\n"
        "import os, sys\n"
        f"open({str(record) + '.part'!r}, 'w').write('\\n'.join(sys.argv[1:]))\n"
        f"os.replace({str(record) + '.part'!r}, {str(record)!r})\n"
        f"sys.stderr.write({message!r})\n"
        f"sys.exit({exit_code})\n",
        encoding="utf-8",
    )
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return script, record


def open_current(qtbot, window):
    with qtbot.wait_signal(window.search_service.results, timeout=10000):
        window.search_bar.set_text("event loop")
    hit = window.current_hit()
    assert hit is not None
    qtbot.keyClick(window.search_bar.field, Qt.Key.Key_Return)  # Enter from the search field
    return hit


def test_enter_opens_the_file_at_the_hits_line_with_a_custom_command(qtbot, window, tmp_path):
    script, record = fake_editor(tmp_path)
    window.settings = replace(window.settings, editor=f"{script} --goto {{file}}:{{line}}")
    hit = open_current(qtbot, window)
    qtbot.wait_until(record.exists, timeout=30000)  # a spawned Python: slow to start under load
    assert record.read_text().splitlines() == ["--goto", f"{hit.abs_path}:{hit.line_start}"]


def test_a_file_name_is_never_read_by_a_shell(tmp_path):
    hostile = str(tmp_path / "$(touch pwned) a;b `id`.md")
    argv = command_for("ed --line {line} {file}", hostile, 7)
    assert argv == ["ed", "--line", "7", hostile]
    assert command_for("vscode", hostile, 3)[-1] == f"{hostile}:3:1"


def test_every_preset_puts_the_line_in(tmp_path):
    for key in PRESET_KEYS:
        argv = command_for(key, "/notes/a.md", 42)
        if argv is None:
            assert key == "system"
        else:
            assert any("42" in part for part in argv) and any("/notes/a.md" in part for part in argv), key


def test_a_missing_editor_is_shown_in_the_window_with_what_to_do(qtbot, window):
    window.settings = replace(window.settings, editor="vscode")
    os.environ["PATH"], saved = "/nonexistent", os.environ["PATH"]
    try:
        open_current(qtbot, window)
    finally:
        os.environ["PATH"] = saved
    assert window.problems and "`code` is not installed" in window.problems[-1]
    assert "Settings → Editor" in window.problems[-1]
    assert "not installed" in window.message.text()


def test_an_editor_failing_at_once_is_reported(qtbot, window, tmp_path):
    script, _ = fake_editor(tmp_path, exit_code=2, message="cannot open display")
    window.settings = replace(window.settings, editor=f"{script} {{file}}")
    open_current(qtbot, window)
    qtbot.wait_until(lambda: bool(window.problems), timeout=30000)  # a spawned Python: slow to start under load
    assert "exit code 2" in window.problems[-1] and "cannot open display" in window.problems[-1]


def test_no_default_application_is_reported_not_swallowed(qtbot, window, monkeypatch):
    from kenning.gui import opener

    monkeypatch.setattr(opener.QDesktopServices, "openUrl", staticmethod(lambda url: False))
    window.settings = replace(window.settings, editor="system")
    open_current(qtbot, window)
    assert window.problems and "No application is set to open .md files" in window.problems[-1]


def test_editor_setting_is_validated_and_shared(tmp_path):
    with Workspace(tmp_path / "k.db") as ws:
        ws.update_settings(editor="emacs")
        assert ws.settings.editor == "emacs"
        with pytest.raises(SettingsError, match=r"\{file\}"):
            ws.update_settings(editor="kate --line {line}")
        with Workspace(tmp_path / "k.db") as other:
            assert other.settings.editor == "emacs"


def test_settings_dialog_offers_presets_and_a_custom_command(qtbot, window):
    from kenning.gui.settings_dialog import CUSTOM, SettingsDialog

    dialog = SettingsDialog(window.workspace, "folder", window, models=[("fake", "fake")])
    qtbot.addWidget(dialog)
    dialog.editor.setCurrentIndex(dialog.editor.findData("vscode"))
    assert dialog.editor_command.text() == "code -g {file}:{line}:{column}" and dialog.editor_command.isReadOnly()
    dialog.editor.setCurrentIndex(dialog.editor.findData(CUSTOM))
    dialog.editor_command.setText("kate --line {line} {file}")
    assert dialog.changes()["editor"] == "kate --line {line} {file}"
    dialog.theme.setCurrentIndex(dialog.theme.findData("dark"))
    assert dialog.changes()["theme"] == "dark"


def test_enter_opens_at_the_matched_line_as_vimgrep_reports_it(qtbot, tmp_path, window_factory, capsys):
    """#25 item 5: the chunk starts at its heading; the editor opens at the match below it."""
    from conftest import index_notes
    from kenning.cli.main import main as cli

    lines = ["# Release runbook", "", *[f"Step {i}: check the dashboards." for i in range(1, 6)], ""]
    lines += ["If the deploy fails, run the rollback script.", ""]
    store_path = index_notes(tmp_path / "w", {"runbook.md": "\n".join(lines)})
    window = window_factory(store_path)
    window.show()
    script, record = fake_editor(tmp_path)
    window.settings = replace(window.settings, editor=f"{script} {{file}}:{{line}}:{{column}}")
    window.search_bar.set_mode("lexical")
    window.search_bar.field.setFocus()
    with qtbot.wait_signal(window.search_service.results, timeout=10000):
        qtbot.keyClicks(window.search_bar.field, "rollback")
    hit = window.current_hit()
    assert hit.line_start == 1
    qtbot.keyClick(window.search_bar.field, Qt.Key.Key_Return)
    qtbot.wait_until(record.exists, timeout=30000)
    assert cli(["--store", str(store_path), "search", "--mode", "lexical", "--format", "vimgrep", "rollback"]) == 0
    vimgrep = capsys.readouterr().out.splitlines()[0]
    assert vimgrep.startswith(f"{hit.abs_path}:9:30:")
    assert record.read_text() == f"{hit.abs_path}:9:30"


def test_a_file_name_holding_a_placeholder_opens_that_file(qtbot, tmp_path, window_factory):
    """#24 item 15: `{line}` in a file name was replaced after the path was put in, so
    `notes/{line}.md` at line 9 opened `notes/9.md`."""
    from conftest import index_notes

    lines = ["# Runbook", "", *[f"Step {i}." for i in range(1, 7)], "run the rollback script", ""]
    store_path = index_notes(tmp_path / "w", {"{line}.md": "\n".join(lines), "9.md": "# Nine\n\nother\n"})
    window = window_factory(store_path)
    window.show()
    script, record = fake_editor(tmp_path)
    window.settings = replace(window.settings, editor=f"{script} {{file}} {{line}}")
    window.search_bar.set_mode("lexical")
    window.search_bar.field.setFocus()
    with qtbot.wait_signal(window.search_service.results, timeout=10000):
        qtbot.keyClicks(window.search_bar.field, "rollback")
    hit = window.current_hit()
    assert hit.abs_path.endswith("{line}.md")
    qtbot.keyClick(window.search_bar.field, Qt.Key.Key_Return)
    qtbot.wait_until(lambda: record.exists() and record.read_text().count("\n") == 1, timeout=30000)
    assert record.read_text().splitlines() == [hit.abs_path, "9"]
