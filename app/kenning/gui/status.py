"""The indexing progress shown in the status bar: phase, counts, current file, errors, Cancel."""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QProgressBar, QPushButton, QSizePolicy, QWidget

from kenning.core.progress import Progress
from kenning.core.wording import plural
from kenning.gui.preview_views import ElidedLabel
from kenning.workspace.eta import embedding_eta_suffix

PHASES = {
    "scanning": "Scanning",
    "text": "Indexing text",
    "embeddings": "Embedding",
    "removing": "Cleaning up",
    "git": "Reading git history",
}


def describe(p: Progress) -> str:
    phase = PHASES.get(p.phase, p.phase)
    count = f"{p.done:,}/{p.total:,}" if p.total else f"{p.done:,}"
    unit = p.unit if p.phase != "embeddings" else "chunks"
    rate = f" · {p.rate:,.0f} {unit}/s" if p.rate else ""
    errors = f" · {plural(p.errors, 'error')}" if p.errors else ""
    source = f"{p.source}: " if p.source and p.phase != "embeddings" else ""
    eta = embedding_eta_suffix(p.done, p.total, p.rate) if p.phase == "embeddings" else ""
    return f"{phase} {source}{count} {unit}{rate}{eta}{errors}"


class IndexStatus(QWidget):
    cancel_requested = Signal()

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        # The progress line keeps its full width (its ETA was cut: "complete in under a m");
        # the current file's name gives way first, elided.
        self.label = QLabel(self)
        self.label.setSizePolicy(QSizePolicy.Policy.Minimum, QSizePolicy.Policy.Preferred)
        self.current = ElidedLabel(self)
        self.current.setObjectName("muted")
        self.current.setMaximumWidth(420)
        self.bar = QProgressBar(self)
        self.bar.setFixedWidth(180)
        self.bar.setTextVisible(False)
        self.bar.setMaximumHeight(12)
        self.cancel = QPushButton("Cancel", self)
        self.cancel.clicked.connect(self.cancel_requested)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 6, 0)
        layout.addWidget(self.label)
        layout.addWidget(self.bar)
        layout.addWidget(self.current, 1)
        layout.addWidget(self.cancel)
        self.last: Progress | None = None
        self.hide()

    def begin(self) -> None:
        self.label.setText("Starting…")
        self.bar.setRange(0, 0)
        self.current.setText("")
        self.cancel.setEnabled(True)
        self.show()

    def update_progress(self, p: Progress) -> None:
        self.last = p
        self.label.setText(describe(p))
        if p.total:
            self.bar.setRange(0, p.total)
            self.bar.setValue(min(p.done, p.total))
        else:
            self.bar.setRange(0, 0)  # unknown total: busy indicator
        self.current.setText(p.current)

    def cancelling(self) -> None:
        self.label.setText("Cancelling…")
        self.cancel.setEnabled(False)

    def end(self) -> None:
        self.hide()


def run_summary(run) -> str:
    """One line for the status bar once a run ends (counts with their nouns agreeing)."""
    changed = sum(r.added + r.changed for r in run.reports)
    removed = sum(r.removed for r in run.reports)
    errors = sum(len(r.errors) for r in run.reports)
    text = "Indexing cancelled" if run.cancelled else "Index up to date"
    parts = [f"{plural(changed, 'file')} new or changed", f"{removed:,} removed"]
    if run.embedding:
        parts.append(f"{plural(run.embedding.embedded, 'chunk')} embedded")
    if errors:
        parts.append(plural(errors, "error"))
    return f"{text}: " + ", ".join(parts)
