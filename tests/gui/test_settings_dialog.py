"""#25 item 8: the settings dialog checks what was typed before it closes, and says what is
wrong next to the field; switching to a custom command starts from the user's own text."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDialog, QDialogButtonBox


def dialog_for(qtbot, window):
    from kenning.gui.settings_dialog import SettingsDialog

    dialog = SettingsDialog(window.workspace, "folder", window, models=[("fake", "fake")])
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.wait_exposed(dialog)
    return dialog


def ok(qtbot, dialog):
    qtbot.mouseClick(
        dialog.findChild(QDialogButtonBox).button(QDialogButtonBox.StandardButton.Ok), Qt.MouseButton.LeftButton
    )


def test_custom_command_starts_empty_and_a_bad_one_keeps_the_dialog_open(qtbot, window):
    dialog = dialog_for(qtbot, window)
    assert dialog.editor.currentData() == "system"
    assert dialog.editor_command.isReadOnly()
    dialog.editor.setFocus()
    qtbot.keyClick(dialog.editor, Qt.Key.Key_End)  # the last entry: Custom command…
    assert dialog.editor.currentText() == "Custom command…"
    assert dialog.editor_command.text() == "" and not dialog.editor_command.isReadOnly()
    assert dialog.editor_command.placeholderText(), "the placeholder shows an example instead"
    dialog.editor_command.setFocus()
    qtbot.keyClicks(dialog.editor_command, 'kate "{file}')
    ok(qtbot, dialog)
    assert dialog.isVisible() and dialog.result() != QDialog.DialogCode.Accepted, "nothing is dropped silently"
    assert dialog.editor_error.isVisible() and "quotes" in dialog.editor_error.text()
    qtbot.keyClick(dialog.editor_command, Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier)
    qtbot.keyClicks(dialog.editor_command, "kate --line {line} {file}")
    ok(qtbot, dialog)
    assert dialog.result() == QDialog.DialogCode.Accepted
    assert dialog.changes()["editor"] == "kate --line {line} {file}"


def test_a_command_typed_is_still_there_after_looking_at_a_preset(qtbot, window):
    dialog = dialog_for(qtbot, window)
    dialog.editor.setFocus()
    qtbot.keyClick(dialog.editor, Qt.Key.Key_End)
    dialog.editor_command.setFocus()
    qtbot.keyClicks(dialog.editor_command, "mine {file}")
    dialog.editor.setFocus()
    qtbot.keyClick(dialog.editor, Qt.Key.Key_Home)  # back to the system default…
    assert dialog.editor_command.isReadOnly()
    qtbot.keyClick(dialog.editor, Qt.Key.Key_End)  # …and to the custom command again
    assert dialog.editor_command.text() == "mine {file}"
