"""Settings kept in the store: model (shared with the CLI), fusion, weights, limit, size cap."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFormLayout,
    QLabel,
    QSpinBox,
    QVBoxLayout,
)

from kenning.embedding import DEFAULT_MODEL
from kenning.gui.breakdown import LIST_LABELS
from kenning.ingest.textphase import DEFAULT_SIZE_CAP
from kenning.search.fusion import DEFAULT_WEIGHTS
from kenning.storage.connection import Store
from kenning.storage.settings import get_json, get_setting, set_json, set_setting

GUI_KEY = "gui_settings"
MODEL_KEY = "embedding_model"  # read by the CLI too


@dataclass
class GuiSettings:
    limit: int = 20
    fusion: str = "rrf"
    weights: dict[str, float] = field(default_factory=lambda: dict(DEFAULT_WEIGHTS))
    size_cap: int = DEFAULT_SIZE_CAP
    mode: str = "hybrid"


def load_settings(store: Store) -> GuiSettings:
    raw = get_json(store, GUI_KEY, {}) or {}
    defaults = GuiSettings()
    known = {k: v for k, v in raw.items() if k in asdict(defaults)}
    settings = GuiSettings(**{**asdict(defaults), **known})
    settings.weights = {**DEFAULT_WEIGHTS, **{k: float(v) for k, v in settings.weights.items()}}
    return settings


def save_settings(store: Store, settings: GuiSettings) -> None:
    set_json(store, GUI_KEY, asdict(settings))


def model_names() -> list[tuple[str, str]]:
    """(name, label) of the models on offer; the catalog needs fastembed, so fail soft."""
    try:
        from kenning.embedding import list_models

        return [(m.name, f"{m.name}  ({m.dim} d, {m.status})") for m in list_models()]
    except Exception:  # catalog unavailable: the bundled model still works
        return [(DEFAULT_MODEL, f"{DEFAULT_MODEL}  (bundled, offline)")]


class SettingsDialog(QDialog):
    def __init__(self, store: Store, settings: GuiSettings, data_folder: str, parent=None, models=None) -> None:
        super().__init__(parent, windowTitle="Kenning settings")
        self.store = store
        self.settings = settings
        current_model = get_setting(store, MODEL_KEY) or DEFAULT_MODEL
        self.model = QComboBox(self)
        for name, label in models if models is not None else model_names():
            self.model.addItem(label, name)
        if self.model.findData(current_model) < 0:
            self.model.addItem(current_model, current_model)
        self.model.setCurrentIndex(self.model.findData(current_model))
        self.fusion = QComboBox(self)
        self.fusion.addItem("Reciprocal rank fusion (RRF)", "rrf")
        self.fusion.addItem("Linear blend of scores", "linear")
        self.fusion.setCurrentIndex(max(0, self.fusion.findData(settings.fusion)))
        self.weights = {name: self._weight(settings.weights.get(name, 1.0)) for name in DEFAULT_WEIGHTS}
        self.limit = QSpinBox(self, minimum=1, maximum=200, value=settings.limit)
        self.size_cap = QSpinBox(
            self, minimum=1, maximum=512, value=max(1, settings.size_cap // (1024 * 1024)), suffix=" MB"
        )
        folder = QLabel(data_folder, self)
        folder.setObjectName("muted")
        form = QFormLayout()
        form.addRow("Embedding model", self.model)
        form.addRow("", self._hint("Changing the model re-embeds every chunk in the background."))
        form.addRow("Fusion", self.fusion)
        for name, spin in self.weights.items():
            form.addRow(f"Weight: {LIST_LABELS.get(name, name)} ({name})", spin)
        form.addRow("Results shown", self.limit)
        form.addRow("Skip files larger than", self.size_cap)
        form.addRow("Data folder", folder)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel, self)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(buttons)

    def _weight(self, value: float) -> QDoubleSpinBox:
        return QDoubleSpinBox(self, minimum=0.0, maximum=5.0, singleStep=0.1, decimals=2, value=value)

    def _hint(self, text: str) -> QLabel:
        label = QLabel(text, self, wordWrap=True)
        label.setObjectName("hint")
        return label

    def apply(self) -> tuple[GuiSettings, bool]:
        """Persist the dialog's values; also say whether the model changed."""
        self.settings.fusion = self.fusion.currentData()
        self.settings.weights = {name: spin.value() for name, spin in self.weights.items()}
        self.settings.limit = self.limit.value()
        self.settings.size_cap = self.size_cap.value() * 1024 * 1024
        save_settings(self.store, self.settings)
        model = self.model.currentData()
        changed = model != (get_setting(self.store, MODEL_KEY) or DEFAULT_MODEL)
        if changed:
            set_setting(self.store, MODEL_KEY, model)
        return self.settings, changed
