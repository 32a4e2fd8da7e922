"""The settings dialog: edits workspace.Settings, the one definition the CLI reads too.

A setting fixed by the environment (KENNING_MODEL, ...) is shown, disabled, with the
variable's name: changing it here would have no effect.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFormLayout,
    QLabel,
    QLineEdit,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from kenning.core.errors import KenningError
from kenning.core.types import FUSIONS
from kenning.embedding import DEFAULT_MODEL
from kenning.gui.breakdown import LIST_LABELS
from kenning.gui.source_jobs import SourceJobs
from kenning.search.fusion import DEFAULT_WEIGHTS
from kenning.workspace import Settings, Workspace, user_message
from kenning.workspace.editor import PRESET_KEYS, PRESETS, template_for
from kenning.workspace.settings import LIMIT_RANGE, MB, SIZE_CAP_RANGE, THEMES, WEIGHT_RANGE, validate, with_changes

CUSTOM = "custom"  # the combo box entry for a command of the user's own
FUSION_LABELS = {"rrf": "Reciprocal rank fusion (RRF)", "linear": "Linear blend of scores"}


def model_names() -> list[tuple[str, str]]:
    """(name, label) of the models on offer; the catalog needs fastembed, so fail soft."""
    try:
        from kenning.embedding import list_models

        return [(m.name, f"{m.name}  ({m.dim} d, {m.status})") for m in list_models()]
    except Exception:  # catalog unavailable: the bundled model still works
        return [(DEFAULT_MODEL, f"{DEFAULT_MODEL}  (bundled, offline)")]


class SettingsDialog(QDialog):
    def __init__(self, workspace: Workspace, data_folder: str, parent=None, models=None) -> None:
        super().__init__(parent, windowTitle="Kenning settings")
        self.workspace = workspace
        self.settings = workspace.settings
        self.fixed = workspace.fixed_settings()
        self.model = QComboBox(self)
        for name, label in models if models is not None else model_names():
            self.model.addItem(label, name)
        current_model = self.settings.embedding_model
        if self.model.findData(current_model) < 0:
            self.model.addItem(current_model, current_model)
        self.model.setCurrentIndex(self.model.findData(current_model))
        self.fusion = QComboBox(self)
        for name in FUSIONS:
            self.fusion.addItem(FUSION_LABELS.get(name, name), name)
        self.fusion.setCurrentIndex(max(0, self.fusion.findData(self.settings.fusion)))
        self.weights = {name: self._weight(self.settings.weights.get(name, 1.0)) for name in DEFAULT_WEIGHTS}
        self.limit = QSpinBox(self, minimum=LIMIT_RANGE[0], maximum=LIMIT_RANGE[1], value=self.settings.limit)
        self.size_cap = QSpinBox(
            self,
            minimum=SIZE_CAP_RANGE[0] // MB,
            maximum=SIZE_CAP_RANGE[1] // MB,
            value=self.settings.size_cap_mb,
            suffix=" MB",
        )
        self._editor_row()
        self.theme = QComboBox(self)
        for name in THEMES:
            self.theme.addItem({"system": "Follow the system", "light": "Light", "dark": "Dark"}[name], name)
        self.theme.setCurrentIndex(max(0, self.theme.findData(self.settings.theme)))
        folder = QLabel(data_folder, self)
        folder.setObjectName("muted")
        form = QFormLayout()
        form.addRow("Embedding model", self._maybe_fixed("embedding_model", self.model))
        form.addRow("", self._hint("Changing the model re-embeds every chunk in the background."))
        form.addRow("Fusion", self._maybe_fixed("fusion", self.fusion))
        for name, spin in self.weights.items():
            form.addRow(f"Weight: {LIST_LABELS.get(name, name)} ({name})", spin)
        form.addRow("Results shown", self._maybe_fixed("limit", self.limit))
        form.addRow("Skip files larger than", self._maybe_fixed("size_cap", self.size_cap))
        form.addRow("Open results in", self.editor)
        form.addRow("Editor command", self.editor_command)
        form.addRow("", self.editor_error)
        form.addRow(
            "", self._hint("Placeholders: {file} {line} {column}. Run without a shell: a file name stays one argument.")
        )
        form.addRow("Theme", self._maybe_fixed("theme", self.theme))
        form.addRow("Data folder", folder)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel, self)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        self.error = QLabel(self, wordWrap=True, objectName="error")  # a problem of another setting
        self.error.hide()
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.error)
        layout.addWidget(buttons)

    def _editor_row(self) -> None:
        self.editor = QComboBox(self)
        for preset in PRESETS:
            self.editor.addItem(preset.label, preset.key)
        self.editor.addItem("Custom command…", CUSTOM)
        self.editor_command = QLineEdit(self)
        self.editor_command.setPlaceholderText("e.g. kate --line {line} {file}")
        self.editor_error = QLabel(self, wordWrap=True, objectName="error")
        self.editor_error.hide()
        current = self.settings.editor
        self._custom_command = "" if current in PRESET_KEYS else current  # what the user typed last
        self._shown = None
        self.editor.setCurrentIndex(self.editor.findData(current if current in PRESET_KEYS else CUSTOM))
        self.editor.currentIndexChanged.connect(lambda _: self._show_command())
        self.editor_command.textEdited.connect(lambda _: self.editor_error.hide())
        self._show_command()

    def _show_command(self) -> None:
        """The command a preset runs, shown read-only; for a custom one the user's own text,
        never a preset's or the default's description."""
        if self._shown == CUSTOM:
            self._custom_command = self.editor_command.text()
        key = self.editor.currentData()
        self._shown = key
        custom = key == CUSTOM
        self.editor_command.setReadOnly(not custom)
        self.editor_error.hide()
        if custom:
            self.editor_command.setText(self._custom_command)
            self.editor_command.setPlaceholderText("e.g. kate --line {line} {file}")
        else:
            self.editor_command.setText(template_for(key))
            self.editor_command.setPlaceholderText("" if template_for(key) else "(the desktop's default application)")

    def accept(self) -> None:
        """OK keeps the dialog open while a value cannot be used, with the reason beside it."""
        self.error.hide()
        self.editor_error.hide()
        for name, value in self.changes().items():
            try:
                validate(name, value)
            except KenningError as exc:
                label = self.editor_error if name == "editor" else self.error
                label.setText(user_message(exc))
                label.show()
                (self.editor_command if name == "editor" else self).setFocus()
                return
        super().accept()

    def chosen_editor(self) -> str:
        key = self.editor.currentData()
        return self.editor_command.text().strip() if key == CUSTOM else key

    def _weight(self, value: float) -> QDoubleSpinBox:
        low, high = WEIGHT_RANGE
        return QDoubleSpinBox(self, minimum=low, maximum=high, singleStep=0.1, decimals=2, value=value)

    def _hint(self, text: str) -> QLabel:
        label = QLabel(text, self, wordWrap=True)
        label.setObjectName("hint")
        return label

    def _maybe_fixed(self, name: str, widget: QWidget) -> QWidget:
        """A setting the environment fixes is shown, disabled, with what fixes it."""
        if name not in self.fixed:
            return widget
        widget.setEnabled(False)
        widget.setToolTip(f"Set by {self.fixed[name]}; unset it to choose here.")
        box = QWidget(self)
        layout = QVBoxLayout(box)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(widget)
        layout.addWidget(self._hint(f"Fixed by {self.fixed[name]} in the environment."))
        return box

    def changes(self) -> dict[str, Any]:
        """The settings the user changed in the dialog (fixed ones never count)."""
        chosen = {
            "embedding_model": self.model.currentData(),
            "fusion": self.fusion.currentData(),
            "weights": {name: spin.value() for name, spin in self.weights.items()},
            "limit": self.limit.value(),
            "size_cap": self.size_cap.value() * MB,
            "editor": self.chosen_editor(),
            "theme": self.theme.currentData(),
        }
        if chosen["size_cap"] // MB == self.settings.size_cap_mb:
            chosen["size_cap"] = self.settings.size_cap  # a cap not in whole MB is kept as it was
        return {
            name: value
            for name, value in chosen.items()
            if name not in self.fixed and value != getattr(self.settings, name)
        }

    def apply_later(self, jobs: SourceJobs, on_failed) -> tuple[Settings, bool]:
        """The settings now in effect, stored by the worker: the UI thread never waits for the
        store (the indexing process may hold its write lock)."""
        changes = self.changes()
        settings = with_changes(self.settings, **changes)
        if changes:
            jobs.submit("saving the settings", lambda ws: ws.update_settings(**changes), lambda _: None, on_failed)
        return settings, "embedding_model" in changes

    def apply(self) -> tuple[Settings, bool]:
        """Store what changed; return the settings now in effect and whether the model changed."""
        changes = self.changes()
        settings = self.workspace.update_settings(**changes) if changes else self.settings
        return settings, "embedding_model" in changes
