"""The sources page: add a folder, link a repository, and look after each source."""

from __future__ import annotations

import os
import re
import time
from datetime import datetime
from pathlib import Path

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QFrame,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QMessageBox,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from kenning.core.errors import KenningError
from kenning.core.fsnames import filesystem_name, picked_path, shown, storable_name
from kenning.core.types import Source
from kenning.core.wording import ago
from kenning.gui.shortcuts import TEAM_STORE_LABEL
from kenning.gui.source_jobs import SourceJobs
from kenning.workspace import describe_repo, user_message
from kenning.workspace.sources import clean_globs

SKIP_REASONS = {
    "too-large": "too large",
    "binary": "binary",
    "undecodable": "not text",
    "unreadable": "unreadable",
    "outside-root": "outside the source",
    "vanished": "gone",
    "too-deep": "too deeply nested",
}
_BYTES = re.compile(r"(\d+) bytes")


def readable_size(n: int) -> str:
    """1536 → "1.5 KB", 3565158 → "3.4 MB" (binary units, as file managers show them)."""
    value = float(n)
    for unit in ("bytes", "KB", "MB", "GB"):
        if value < 1024 or unit == "GB":
            return f"{int(value)} bytes" if unit == "bytes" else f"{value:.1f} {unit}".replace(".0 ", " ")
        value /= 1024
    return f"{n} bytes"


def readable_detail(detail: str) -> str:
    """The indexer's "3565158 bytes > cap 2097152" as "3.4 MB > 2 MB cap"."""
    m = re.fullmatch(r"(\d+) bytes > cap (\d+)", detail.strip())
    if m:
        return f"{readable_size(int(m.group(1)))} > {readable_size(int(m.group(2)))} cap"
    m = re.fullmatch(r"more than (\d+) bytes", detail.strip())
    if m:
        return f"more than the {readable_size(int(m.group(1)))} cap"
    return _BYTES.sub(lambda b: readable_size(int(b.group(1))), detail)


LAST_FOLDER_KEY = "last_folder"
COLUMNS = ("Name", "Kind", "Folder", "Documents", "Chunks", "Vectors pending", "Skipped", "Last indexed")


def repo_summary(info) -> str:
    when = (
        datetime.fromtimestamp(info.last_commit_time).strftime("%Y-%m-%d %H:%M")
        if info.last_commit_time
        else "no commits yet"
    )
    dirty = " · uncommitted changes" if info.dirty else ""
    commit = f"{info.head_sha[:7]} {info.last_commit_summary}" if info.head_sha else "(no commits)"
    return f"branch {info.branch}{dirty}\nlast commit {commit}\nby {info.last_commit_author or '?'}, {when}"


class SourcesPanel(QWidget):
    """Changes run on SourceJobs' worker (never on the UI thread); counts arrive from StatsService."""

    reindex_requested = Signal(object)  # list of source ids, or None for all
    changed = Signal()
    source_added = Signal(object)  # the new Source, once stored
    search_within = Signal(str)  # a query limited to a folder a source indexes already
    team_requested = Signal()  # "Connect to a team store…" (gui/team_store.py)

    def __init__(self, jobs: SourceJobs, parent=None) -> None:
        super().__init__(parent)
        self.jobs = jobs
        self.sources: list[Source] = []
        self.stats: dict = {}
        self._repo_cache: dict[str, str] = {}
        self.ask = self._ask_user  # tests replace these three: no modal dialogs offscreen
        self.tell = self._tell_user
        self.choose = self._choose
        self.now = time.time()  # "3 min ago" in the table and the detail: one moment
        self._clock = QTimer(self, interval=60_000, timeout=self._tick)
        self._clock.start()
        self.last_folder = ""  # where the file dialog opens (read from the store below)
        jobs.submit(
            "reading the last folder picked",
            lambda ws: ws.load_state(LAST_FOLDER_KEY, ""),
            lambda folder: setattr(self, "last_folder", self.last_folder or filesystem_name(str(folder or ""))),
            lambda _: None,
        )
        self.table = QTableWidget(0, len(COLUMNS), self)
        self.detail = QFrame(self)
        self.detail.setObjectName("card")
        self._build()

    # -- layout --------------------------------------------------------------------

    def _build(self) -> None:
        self.add_button = QPushButton("Add folder…", self)
        self.add_button.setObjectName("primary")
        self.link_button = QPushButton("Link git repository…", self)
        self.reindex_all_button = QPushButton("Re-index all", self)
        self.team_button = QPushButton(TEAM_STORE_LABEL, self, objectName="team_button")
        self.team_button.clicked.connect(self.team_requested)
        self.add_button.clicked.connect(lambda: self.add_folder())
        self.link_button.clicked.connect(lambda: self.link_repo())
        self.reindex_all_button.clicked.connect(lambda: self.reindex_requested.emit(None))
        top = QHBoxLayout()
        title = QLabel("Sources", self)
        title.setObjectName("sectionTitle")
        top.addWidget(title)
        top.addStretch(1)
        for b in (self.add_button, self.link_button, self.reindex_all_button, self.team_button):
            top.addWidget(b)
        self._build_table()
        self._build_detail()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(14, 12, 14, 12)
        layout.setSpacing(10)
        layout.addLayout(top)
        layout.addWidget(self.table, 3)
        layout.addWidget(self.detail, 2)

    def _build_table(self) -> None:
        t = self.table
        t.setHorizontalHeaderLabels(COLUMNS)
        t.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        t.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        t.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        t.verticalHeader().setVisible(False)
        t.setShowGrid(False)
        t.setAlternatingRowColors(True)
        header = t.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.Stretch)
        t.itemSelectionChanged.connect(self._show_detail)

    def _build_detail(self) -> None:
        self.detail_title = QLabel(self.detail)
        self.detail_title.setObjectName("sectionTitle")
        self.detail_info = QLabel(self.detail, wordWrap=True)
        self.detail_info.setObjectName("muted")
        self.detail_info.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.enabled_box = QCheckBox("Enabled (searched and indexed)", self.detail)
        self.enabled_box.toggled.connect(self._toggle_enabled)
        self.include_edit = QLineEdit(self.detail, placeholderText="all files, e.g. *.md docs/**")
        self.exclude_edit = QLineEdit(self.detail, placeholderText="e.g. drafts/ *.log")
        self.save_globs = QPushButton("Apply globs", self.detail)
        self.save_globs.clicked.connect(self._apply_globs)
        self.reindex_button = QPushButton("Re-index", self.detail)
        self.reindex_button.clicked.connect(self._reindex_selected)
        self.skipped_button = QPushButton("Skipped files…", self.detail)
        self.skipped_button.clicked.connect(self.show_skipped)
        self.remove_button = QPushButton("Remove…", self.detail)
        self.remove_button.clicked.connect(lambda: self.remove_selected())
        form = QFormLayout()
        form.addRow("Include", self.include_edit)
        form.addRow("Exclude", self.exclude_edit)
        buttons = QHBoxLayout()
        buttons.addWidget(self.enabled_box)
        buttons.addStretch(1)
        for b in (self.save_globs, self.reindex_button, self.skipped_button, self.remove_button):
            buttons.addWidget(b)
        layout = QVBoxLayout(self.detail)
        layout.setContentsMargins(14, 12, 14, 12)
        layout.addWidget(self.detail_title)
        layout.addWidget(self.detail_info)
        layout.addLayout(form)
        layout.addStretch(1)  # a tall window's spare height, never between the lines above
        layout.addLayout(buttons)
        self.detail.setEnabled(False)

    # -- data ----------------------------------------------------------------------

    def _tick(self) -> None:
        """The table and the detail say how long ago with one clock, read once a minute."""
        if self.sources:
            self.set_data(self.sources, self.stats)

    def set_data(self, sources: list[Source], stats: dict) -> None:
        self.now = time.time()
        keep = self.selected().id if self.selected() else None
        self.sources, self.stats = list(sources), dict(stats)
        self.table.blockSignals(True)
        self.table.setRowCount(len(self.sources))
        for row, source in enumerate(self.sources):
            self._fill_row(row, source)
            if source.id == keep:
                self.table.selectRow(row)
        self.table.blockSignals(False)
        if keep is None and self.sources:
            self.table.selectRow(0)
        self._show_detail()

    def _fill_row(self, row: int, s: Source) -> None:
        st = self.stats.get(s.id)
        values = [
            s.name + ("" if s.enabled else "  (disabled)"),
            "git" if s.kind == "git" else "folder",
            shown(s.root),  # a byte that is not UTF-8 reads \xNN (Qt would drop it)
            *(f"{getattr(st, k):,}" if st else "–" for k in ("documents", "chunks", "pending_vectors", "skipped")),
            ago(s.last_indexed_at, self.now),
        ]
        for col, value in enumerate(values):
            item = QTableWidgetItem(value)
            if 3 <= col <= 6:
                item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            if not s.enabled:
                item.setForeground(self.palette().placeholderText())
            self.table.setItem(row, col, item)

    def _reindex_selected(self) -> None:
        chosen = self.selected()
        if chosen is not None:
            self.reindex_requested.emit([chosen.id])

    def selected(self) -> Source | None:
        rows = self.table.selectionModel().selectedRows()
        if not rows or rows[0].row() >= len(self.sources):
            return None
        return self.sources[rows[0].row()]

    def select(self, name: str) -> None:
        for row, s in enumerate(self.sources):
            if s.name == name:
                self.table.selectRow(row)

    def _show_detail(self) -> None:
        s = self.selected()
        self.detail.setEnabled(s is not None)
        if s is None:
            self.detail_title.setText("Select a source")
            self.detail_info.setText("")
            return
        self.detail_title.setText(f"{s.name}  ·  {'git repository' if s.kind == 'git' else 'folder'}")
        st = self.stats.get(s.id)
        counts = (
            f"{st.documents:,} documents · {st.chunks:,} chunks · {st.pending_vectors:,} vectors pending · "
            f"{st.skipped:,} skipped"
            if st
            else "not indexed yet"
        )
        extra = f"\n{self._repo_text(s.root)}" if s.kind == "git" else ""
        root = shown(s.root)
        self.detail_info.setText(f"{root}\n{counts} · last indexed {ago(s.last_indexed_at, self.now)}{extra}")
        self.enabled_box.blockSignals(True)
        self.enabled_box.setChecked(s.enabled)
        self.enabled_box.blockSignals(False)
        self.include_edit.setText(" ".join(s.include))
        self.exclude_edit.setText(" ".join(s.exclude))

    def _repo_text(self, root: str) -> str:
        if root not in self._repo_cache:  # git is slow-ish: ask once per session, on the worker
            self._repo_cache[root] = "reading the repository…"
            self.jobs.submit(
                "reading a repository",
                lambda _ws: repo_summary(describe_repo(root)),
                lambda text: self._repo_known(root, text),
                lambda message: self._repo_known(root, message),
            )
        return self._repo_cache[root]

    def _repo_known(self, root: str, text: str) -> None:
        self._repo_cache[root] = text
        self._show_detail()

    # -- actions (each runs on the worker; the panel hears back through callbacks) -----

    def _pick_folder(self, title: str) -> str:
        """A folder from the file dialog, which opens where the last one was picked (or home,
        never the folder Kenning happened to be started from)."""
        start = self.last_folder if self.last_folder and os.path.isdir(self.last_folder) else str(Path.home())
        path = QFileDialog.getExistingDirectory(self, title, start)
        path = picked_path(path) if path else path  # a name not UTF-8: Qt dropped its bytes
        if path:
            self.last_folder = path
            self.jobs.submit(
                "remembering the folder",
                lambda ws: ws.save_state(LAST_FOLDER_KEY, storable_name(path)),  # kept as text
                lambda _: None,
                lambda _: None,
            )
        return path

    def add_folder(self, path: str | None = None) -> None:
        path = path or self._pick_folder("Add a folder of notes or code")
        if path:
            self._add(path, git=False)

    def link_repo(self, path: str | None = None) -> None:
        path = path or self._pick_folder("Link a git repository")
        if not path:
            return
        self.jobs.submit(
            "inspecting a repository to link",
            lambda _ws: describe_repo(path),
            self._confirm_link,
            lambda message: self.tell("Not a git repository", f"{message}\n\nTo index it anyway, use “Add folder…”."),
        )

    def _confirm_link(self, info) -> None:
        summary = repo_summary(info)
        if self.ask("Link this repository?", f"{info.root}\n\n{summary}"):
            self._repo_cache[info.root] = summary
            self._add(info.root, git=True)

    def _add(self, path: str, git: bool) -> None:
        """Checked first for a source holding the same files (the offer below), then stored."""
        self.jobs.submit(
            f"checking {path}",
            lambda ws: ws.source_overlap(path, git=git),
            lambda overlap: self._offer(overlap) if overlap else self._store(path, git),
            lambda message: self.tell("Cannot add this source", message),
        )

    def _store(self, path: str, git: bool, exclude: tuple[str, ...] = ()) -> None:
        self.jobs.submit(
            f"adding {path}",
            lambda ws: (ws.link_repo if git else ws.add_folder)(path, exclude=exclude),
            self._added,
            lambda message: self.tell("Cannot add this source", message),
        )

    def _offer(self, o) -> None:
        """A folder whose files a source has already: what the user can do instead (#25 item 7)."""
        name, rel, outer = o.existing.name, o.rel, o.existing
        if o.relation == "same":
            self.tell("Already a source", f"{o.root} is the source “{name}” already.")
            return
        if o.relation == "inside":
            text = f"{o.root} is inside the source “{name}”: its files are indexed already, as part of it."
            choices = ["Search only in it"]
            if o.git and outer.kind == "folder":
                choices.insert(0, f"Leave it out of “{name}” and link it as a repository")
            choice = self.choose("Already indexed", text, choices)
            if choice is not None and choices[choice].startswith("Leave"):
                exclude = (*outer.exclude, f"{rel}/")
                self._change(
                    f"leaving {rel} out of {name}",
                    lambda ws: ws.set_globs(outer.id, outer.include, exclude),
                    "Cannot change the globs",
                    reindex=True,
                    then=lambda: self._store(o.root, True),
                )
            elif choice is not None:
                self.search_within.emit(f"source:{name} path:{rel}/")
            return
        text = f"{o.root} holds the source “{name}” ({outer.root}): adding it as it is would index those files twice."
        choices = [f"Add it without {rel}/ (indexed as “{name}”)", f"Replace “{name}” with it"]
        choice = self.choose("A source is inside this folder", text, choices)
        if choice == 0:
            self._store(o.root, o.git, exclude=(f"{rel}/",))
        elif choice == 1:
            self._change(
                f"removing {name}",
                lambda ws: ws.remove_source(outer.id),
                "Cannot remove this source",
                then=lambda: self._store(o.root, o.git),
            )

    def _added(self, source: Source) -> None:
        self.changed.emit()
        self.reindex_requested.emit([source.id])
        self.source_added.emit(source)

    def remove_selected(self) -> bool:
        """Ask, then remove on the worker (the cascading delete can take seconds)."""
        s = self.selected()
        if s is None or not self.ask(
            "Remove source?",
            f"Remove “{s.name}” and its index entries?\n{shown(s.root)}\n\nYour files are not touched.",
            destructive=True,
        ):
            return False
        self._change(f"removing {s.name}", lambda ws: ws.remove_source(s.id), "Cannot remove this source")
        return True

    def _toggle_enabled(self, on: bool) -> None:
        s = self.selected()
        if s is not None:
            self._change(f"switching {s.name}", lambda ws: ws.set_enabled(s.id, on), "Cannot change this source")

    def _apply_globs(self) -> None:
        s = self.selected()
        if s is None:
            return
        try:
            include, exclude = clean_globs(self.include_edit.text()), clean_globs(self.exclude_edit.text())
        except KenningError as exc:  # the words say which glob
            self.tell("Cannot use these globs", user_message(exc))
            return
        self._change(
            f"setting the globs of {s.name}",
            lambda ws: ws.set_globs(s.id, include, exclude),
            "Cannot change the globs",
            reindex=True,
        )

    def _change(self, doing: str, job, title: str, *, reindex: bool = False, then=None) -> None:
        def done(source) -> None:
            self.changed.emit()
            if reindex:
                self.reindex_requested.emit([source.id])
            if then is not None:
                then()

        self.jobs.submit(doing, job, done, lambda message: self.tell(title, message))

    def show_skipped(self) -> None:
        s = self.selected()
        if s is not None:
            self.jobs.submit(
                f"listing the skipped files of {s.name}",
                lambda ws: ws.skipped_files(s.id),
                lambda rows: (self._skipped_dialog(s, rows), None)[1],
                lambda message: self.tell("Cannot list skipped files", message),
            )

    def _skipped_dialog(self, s: Source, rows) -> QDialog:
        dialog = QDialog(self, windowTitle=f"Skipped files — {s.name}")
        layout = QVBoxLayout(dialog)
        if rows:
            noun = "file" if len(rows) == 1 else "files"
            layout.addWidget(QLabel(f"{len(rows):,} {noun} of {s.name} not indexed, and why:", dialog))
            table = QTableWidget(len(rows), 3, dialog)
            table.setHorizontalHeaderLabels(("File", "Reason", "Detail"))
            table.verticalHeader().setVisible(False)
            table.horizontalHeader().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
            for i, (_, f) in enumerate(rows):
                for col, value in enumerate(
                    (f.rel_path, SKIP_REASONS.get(f.reason, f.reason), readable_detail(f.detail))
                ):
                    table.setItem(i, col, QTableWidgetItem(value))
            layout.addWidget(table)
        else:
            empty = QLabel(f"Nothing skipped: every file of {s.name} that Kenning can read is indexed.", dialog)
            empty.setObjectName("muted")
            layout.addWidget(empty, 1)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, dialog)
        buttons.rejected.connect(dialog.close)
        layout.addWidget(buttons)
        dialog.resize(760, 420 if rows else 160)
        dialog.setModal(False)
        dialog.show()
        self.skipped_dialog = dialog
        return dialog

    def _ask_user(self, title: str, text: str, *, destructive: bool = False) -> bool:
        """Yes or no; a destructive question has No as the default (Enter never removes)."""
        box = _question_box(self, title, text)
        box.setStandardButtons(QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No)
        box.setDefaultButton(QMessageBox.StandardButton.No if destructive else QMessageBox.StandardButton.Yes)
        box.setEscapeButton(QMessageBox.StandardButton.No)
        if destructive:
            box.button(QMessageBox.StandardButton.Yes).setText("Remove")
            box.button(QMessageBox.StandardButton.No).setText("Keep it")
        return box.exec() == QMessageBox.StandardButton.Yes

    def _choose(self, title: str, text: str, choices: list[str]) -> int | None:
        """One of choices (its index), or None for Cancel (the default)."""
        box = _question_box(self, title, text)
        buttons = [box.addButton(label, QMessageBox.ButtonRole.AcceptRole) for label in choices]
        cancel = box.addButton(QMessageBox.StandardButton.Cancel)
        box.setDefaultButton(cancel)
        box.exec()
        clicked = box.clickedButton()
        return buttons.index(clicked) if clicked in buttons else None

    def _tell_user(self, title: str, text: str) -> None:
        QMessageBox.warning(self, title, shown(text))  # a path not UTF-8 in it reads \xNN


def _question_box(parent, question: str, details: str) -> QMessageBox:
    """The question in the box itself, the details under it: a window title is not always
    drawn (macOS never shows a message box's; a bare X server none), and "Yes / No" under
    a repository's path and last commit asked nothing."""
    box = QMessageBox(QMessageBox.Icon.Question, question, question, parent=parent)
    box.setInformativeText(shown(details))
    return box
