"""The search page: result list on the left, why-this-rank and the preview on the right.

It owns everything shown about one result set; the window owns the services (search,
indexing, stats) and tells the page what arrived.
"""

from __future__ import annotations

import html

from PySide6.QtCore import QItemSelectionModel, QSize, Qt, QTimer, QUrl, Signal
from PySide6.QtGui import QAction, QDesktopServices
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QListView,
    QListWidget,
    QListWidgetItem,
    QMenu,
    QScrollArea,
    QSizePolicy,
    QSplitter,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QVBoxLayout,
    QWidget,
)

from kenning.core.types import Hit, SearchResult
from kenning.gui import grouping
from kenning.gui.breakdown import BreakdownView
from kenning.gui.preview import PreviewPane, copy_path
from kenning.gui.results import ResultDelegate, ResultsModel, ResultsView, store_prefix, without_folders
from kenning.gui.tag_pane import TagPane
from kenning.search.related import LINKED_BOTH_WAYS, LINKED_FROM_HERE, LINKS_HERE
from kenning.workspace.obsidian import obsidian_url

RELATED_DELAY_MS = 250  # the related-notes lookup waits for the selection to rest
DETAIL_MAX_WAITS = 20  # turns of the event loop the detail pane waits for the list's first paint
RELATED_LOADING = "Finding related notes…"
LINK_MARKS = {LINKS_HERE: "←", LINKED_FROM_HERE: "→", LINKED_BOTH_WAYS: "↔"}
RELATED_ROWS = 5  # related notes shown without scrolling
RELATED_FRAME = 3
DETAIL_TOP_SHARE = 0.66


RESULTS_MIN_WIDTH = 300


class _RelatedList(QListWidget):
    """Asks for RELATED_ROWS rows (its minimum height), and takes whatever height the
    detail column has spare (a hit with few bars, a tall window).  A line wider than the
    list gives up the end of the note's title first, then the middle of its path, rather
    than being cut off at the edge ("runbooks:adr/0007-connection-poolin" at 1280 px);
    the tooltip has the whole path."""

    def __init__(self, parent=None, **kwargs) -> None:
        super().__init__(parent, **kwargs)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setItemDelegate(_WithinWidth(self))

    def sizeHint(self) -> QSize:
        return QSize(super().sizeHint().width(), self.minimumHeight())


# A related note's line in two parts, what it is and where (its store, source and path),
# kept on its item so the line can be fitted to the list's width part by part.
RELATED_PARTS_ROLE = Qt.ItemDataRole.UserRole + 1
RELATED_SEPARATOR = "  ·  "


def fit_related(what: str, where: str, metrics, width: int) -> str:
    """The line in `width` pixels: the end of `what` (the note's title) goes first, down
    to a third of the line; then `where` is elided in the middle (its store label and its
    file name stay)."""
    line = f"{what}{RELATED_SEPARATOR}{where}"
    if metrics.horizontalAdvance(line) <= width:
        return line
    tail = metrics.horizontalAdvance(f"{RELATED_SEPARATOR}{where}")
    room = max(width - tail, width // 3)
    head = metrics.elidedText(what, Qt.TextElideMode.ElideRight, room)
    rest = width - metrics.horizontalAdvance(f"{head}{RELATED_SEPARATOR}")
    return f"{head}{RELATED_SEPARATOR}{metrics.elidedText(where, Qt.TextElideMode.ElideMiddle, max(0, rest))}"


class _WithinWidth(QStyledItemDelegate):
    """Paints a row within the list's visible width, its text fitted by fit_related (a
    list view's row is as wide as its text, and was clipped by the viewport)."""

    def __init__(self, parent) -> None:
        super().__init__(parent)
        self.painted: dict[int, tuple[int, str]] = {}  # row: (width, text) it was painted in (tests read it)

    def paint(self, painter, option, index) -> None:
        fitted = QStyleOptionViewItem(option)
        self.initStyleOption(fitted, index)
        fitted.rect.setRight(min(option.rect.right(), self.parent().viewport().rect().right()))
        parts = index.data(RELATED_PARTS_ROLE)
        if parts:
            margin = 2 * (self.parent().style().pixelMetric(QStyle.PixelMetric.PM_FocusFrameHMargin) + 1)
            fitted.text = fit_related(*parts, fitted.fontMetrics, fitted.rect.width() - margin)
        self.painted[index.row()] = (fitted.rect.width(), fitted.text)
        style = self.parent().style()
        style.drawControl(QStyle.ControlElement.CE_ItemViewItem, fitted, painter, self.parent())


class SearchPage(QWidget):
    open_requested = Signal(object, bool)  # Hit (or RelatedNote), folder (True: the containing folder)
    related_wanted = Signal(int)  # chunk id of the selected hit
    suggestion_clicked = Signal()

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.result: SearchResult | None = None
        self.query = ""
        self.mode = ""
        # The detail pane follows the selection once the list has drawn its rows: reading
        # the file and laying out the preview and the bars then never add to the paint of
        # a new result list (together they blocked the window for 30-60 ms during indexing).
        self._detail_soon = QTimer(self, singleShot=True, interval=0, timeout=self._show_current)
        self._detail_waits = 0
        self._related_soon = QTimer(self, singleShot=True, interval=RELATED_DELAY_MS, timeout=self._want_related)
        self._build()
        self._connect()

    # -- construction --------------------------------------------------------------

    def _build(self) -> None:
        self.model = ResultsModel(self)
        self.list = ResultsView(self)
        self.list.setObjectName("results")
        self.list.setModel(self.model)
        self.delegate = ResultDelegate(self.list)
        self.list.setItemDelegate(self.delegate)
        self.list.setMouseTracking(True)
        self.list.setUniformItemSizes(True)
        self.list.setVerticalScrollMode(QListView.ScrollMode.ScrollPerPixel)
        self.list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.list.setResizeMode(QListView.ResizeMode.Adjust)
        self.list.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.banner = QLabel(self, wordWrap=True, objectName="fuzzyBanner")
        self.banner.hide()
        self.suggestion = QLabel(self)
        self.suggestion.hide()
        # Wraps rather than widening the window: "58 matches by meaning (cosine ≥ 0.30) in
        # 29 files (best 20 shown)" is wider than the list at 900 px.
        self.summary = QLabel(self, objectName="muted", wordWrap=True)
        self.summary.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.sort = QComboBox(self, toolTip="Order of the files: relevance, newest first or path")
        for key, label in grouping.SORTS:
            self.sort.addItem(label, key)
        self.searching = QLabel("Searching…", self, objectName="muted")
        self.searching.hide()
        self.breakdown = BreakdownView(self)
        self.detail_title = QLabel(self, objectName="sectionTitle", wordWrap=True)
        self.preview = PreviewPane(self)
        self.related = _RelatedList(self, objectName="related")
        self.related.setToolTip(
            "Notes a link joins to this result (← links here, → linked from here) first, then the files "
            "nearest in meaning (cosine). Enter or double-click opens one."
        )
        self.related.setMinimumHeight(RELATED_ROWS * self.related.fontMetrics().lineSpacing() + 2 * RELATED_FRAME)
        self.related_notes: list = []
        self.tag_pane = TagPane(self)
        self.main_split = QSplitter(Qt.Orientation.Horizontal, self)
        self.main_split.addWidget(self.tag_pane)
        self.main_split.addWidget(self._result_column())
        self.main_split.addWidget(self._detail_column())
        self.main_split.setSizes([170, 520, 760])
        self.main_split.setChildrenCollapsible(False)
        self.main_split.setCollapsible(0, True)  # the tag pane can be dragged shut
        for index, stretch in enumerate((0, 2, 3)):  # a wider window widens results and detail, not tags
            self.main_split.setStretchFactor(index, stretch)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.main_split)

    def _result_column(self) -> QWidget:
        left = QWidget(self)
        lv = QVBoxLayout(left)
        lv.setContentsMargins(10, 0, 4, 0)
        lv.addWidget(self.banner)
        lv.addWidget(self.suggestion)
        summary_row = QHBoxLayout()
        summary_row.addWidget(self.summary, 1)
        summary_row.addWidget(self.searching)
        summary_row.addWidget(self.sort)
        lv.addLayout(summary_row)
        lv.addWidget(self.list, 1)
        left.setMinimumWidth(RESULTS_MIN_WIDTH)  # the summary wraps, so it no longer sets a width
        return left

    def _detail_column(self) -> QWidget:
        top = QWidget(self)
        tv = QVBoxLayout(top)
        tv.setContentsMargins(12, 4, 12, 6)
        tv.addWidget(self.detail_title)
        tv.addWidget(QLabel("Why this rank", self, objectName="muted"))
        tv.addWidget(self.breakdown)
        tv.addWidget(QLabel("Related notes", self, objectName="muted"))
        tv.addWidget(self.related, 1)  # a tall window's spare height shows more of them
        scroll = QScrollArea(self, widgetResizable=True, frameShape=QScrollArea.Shape.NoFrame)
        scroll.setWidget(top)
        self._detail_top = top
        preview_box = QWidget(self)
        pv = QVBoxLayout(preview_box)
        pv.setContentsMargins(12, 0, 12, 0)
        pv.addWidget(self.preview)
        self.detail_split = QSplitter(Qt.Orientation.Vertical, self)
        self.detail_split.addWidget(scroll)
        self.detail_split.addWidget(preview_box)
        self.detail_split.setSizes([370, 380])
        self.detail_sized_by_user = False  # until then the split follows the window (fit_detail)
        self.detail_split.splitterMoved.connect(lambda *_: setattr(self, "detail_sized_by_user", True))
        return self.detail_split

    def fit_detail(self) -> None:
        """Give "why this rank" and the related notes the height they need (a typical hit's
        bars and RELATED_ROWS notes), up to DETAIL_TOP_SHARE of the column; the preview the
        rest.  At 1280×820 the related notes showed one line under the bars."""
        if self.detail_sized_by_user:
            return
        total = sum(self.detail_split.sizes())
        if total <= 0:
            return
        want = self._detail_top.sizeHint().height() - self.breakdown.height() + self.breakdown.typical_height()
        top = min(want, int(total * DETAIL_TOP_SHARE))
        self.detail_split.setSizes([top, total - top])

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        QTimer.singleShot(0, self.fit_detail)  # once the splitter has its new height

    def _connect(self) -> None:
        self.list.selectionModel().currentChanged.connect(lambda *_: self._detail_soon.start())
        self.list.activated.connect(lambda _: self.open_current(False))
        self.list.customContextMenuRequested.connect(self._context_menu)
        self.suggestion.linkActivated.connect(lambda _: self.suggestion_clicked.emit())
        self.preview.open_requested.connect(lambda folder: self.open_current(folder))
        self.related.itemActivated.connect(self._open_related)
        self.sort.currentIndexChanged.connect(lambda _: self.set_sort(self.sort.currentData()))

    # -- results -------------------------------------------------------------------

    def show_results(self, result: SearchResult, query: str, mode: str = "", max_files: int | None = None) -> None:
        """A new query (or mode) starts at its #1; the same one run again (the index
        changed, the model arrived) keeps the row the user chose, wherever it moved."""
        same = (query, mode) == (self.query, self.mode) and self.result is not None
        keep = self.current_hit().chunk_id if same and self.current_hit() else None
        self.result = result
        self.query = query
        self.mode = mode
        self.model.max_files = max_files
        self.model.set_rows(result.hits)
        self._show_layer(result)
        self._show_summary()
        if result.hits:
            self.select_row(next((i for i, h in enumerate(self.model.hits) if h.chunk_id == keep), 0))
        else:
            self._show_hit(None)

    def show_total(self, total) -> None:
        """The engine's count of every match, arriving just after the hits."""
        if self.result is not None:
            self.result.total = total
            self._show_summary()

    def _show_summary(self) -> None:
        result = self.result
        if result is None or not result.hits:
            self.summary.setText("No results" if result is not None else "")
            return
        took = result.timings_ms.get("total", 0.0)
        self.summary.setText(
            f"{grouping.summary(result, self.model.max_files)} ·\u00a0{took:.0f}\u00a0ms"
        )  # the time never splits

    def _show_layer(self, result: SearchResult) -> None:
        if result.banner():
            self.banner.setText(result.banner())
            self.banner.show()
        else:
            self.banner.hide()
        if result.suggestion:
            link = f'<a href="suggest"><b>{html.escape(result.suggestion)}</b></a>'
            self.suggestion.setText(f"Did you mean: {link}?")
            self.suggestion.show()
        else:
            self.suggestion.hide()

    def set_searching(self, busy: bool) -> None:
        """A slow search says so, over the results it will replace."""
        self.searching.setVisible(busy)

    def clear(self) -> None:
        self.set_searching(False)
        self.query = ""
        self.mode = ""
        self.result = None
        self.model.set_rows([])
        self.banner.hide()
        self.suggestion.hide()
        self.summary.setText("")
        self._show_hit(None)

    def current_hit(self) -> Hit | None:
        return self.model.hit(self.list.currentIndex().row())

    def select_row(self, row: int) -> None:
        index = self.model.index(row, 0)
        self.list.selectionModel().setCurrentIndex(index, QItemSelectionModel.SelectionFlag.ClearAndSelect)
        self.list.scrollTo(index)

    def move_selection(self, delta: int) -> None:
        if self.model.rowCount():
            row = max(0, min(self.model.rowCount() - 1, self.list.currentIndex().row() + delta))
            self.select_row(row)

    def _show_current(self) -> None:
        """The detail pane follows the selection after the list's first paint of new rows.

        Not after every row: while indexing, each row can take its own paint (the render
        budget), and waiting for all of them kept the previous hit's detail on screen for
        seconds (#25 item 3).  Bounded: a hidden list never paints at all."""
        if self.delegate.unpainted and self._detail_waits < DETAIL_MAX_WAITS:
            self._detail_waits += 1
            self._detail_soon.start()
            return
        self._detail_waits = 0
        self._show_hit(self.current_hit())

    def _show_hit(self, hit: Hit | None) -> None:
        self.related.clear()
        self.related_notes = []
        if hit is not None:
            self._say_related(RELATED_LOADING)  # never the previous hit's list while this one's is found
            self._related_soon.start()  # once the selection rests: arrowing down the list asks once
        self.breakdown.set_breakdown(hit.breakdown if hit else None)
        self.detail_title.setText(hit.title if hit else "Select a result to see why it ranks there")
        self.preview.set_hit(hit, self.query, self.result)

    def set_sort(self, sort: str) -> None:
        keep = self.current_hit()
        self.model.set_sort(sort)
        self._reselect(keep)

    def toggle_group(self) -> None:
        """Show or hide the other matches in the selected hit's file (Ctrl+E)."""
        row = self.list.currentIndex().row()
        if row >= 0:
            self.select_row(self.model.toggle(row))

    def _reselect(self, hit: Hit | None) -> None:
        if hit is None:
            return
        row = next((i for i, h in enumerate(self.model.hits) if h.chunk_id == hit.chunk_id), 0)
        if self.model.rowCount():
            self.select_row(row)

    def _want_related(self) -> None:
        hit = self.current_hit()
        if hit is not None:
            self.related_wanted.emit(hit.chunk_id)

    def set_related(self, chunk_id: int, notes) -> None:
        """The nearest other files for the hit still selected (late answers are dropped)."""
        hit = self.current_hit()
        if hit is None or hit.chunk_id != chunk_id:
            return
        self.related.clear()
        self.related_notes = list(notes or [])
        if notes is None:
            self._say_related("Available once the semantic model has loaded")
        elif not notes:
            self._say_related("No other notes with vectors yet")
        for note in self.related_notes:
            link = f"{LINK_MARKS[note.link]} {note.link}  ·  " if note.link else ""
            where = f"{store_prefix(note.store_label)}{note.source}:{note.path}"
            title = without_folders(note.title, note.path) if note.title else note.path  # the path follows
            what = f"{note.cosine:.2f}   {link}{title}"
            item = QListWidgetItem(f"{what}{RELATED_SEPARATOR}{where}")
            item.setData(RELATED_PARTS_ROLE, (what, where))
            why = f"\n{note.link} (a link joins the two notes)" if note.link else ""
            item.setToolTip(f"{note.abs_path}\ncosine {note.cosine:.4f}{why}")
            self.related.addItem(item)

    def _say_related(self, text: str) -> None:
        """A line in the related list that is not a note (nothing opens it)."""
        item = QListWidgetItem(text)
        item.setFlags(Qt.ItemFlag.NoItemFlags)
        self.related.addItem(item)

    def _open_related(self, item: QListWidgetItem) -> None:
        row = self.related.row(item)
        if 0 <= row < len(self.related_notes):
            self.open_requested.emit(self.related_notes[row], False)

    def open_current(self, folder: bool) -> None:
        hit = self.current_hit()
        if hit is not None:
            self.open_requested.emit(hit, folder)

    def _context_menu(self, pos) -> None:
        hit = self.model.hit(self.list.indexAt(pos).row())
        if hit is None:
            return
        self.select_row(self.list.indexAt(pos).row())  # the menu acts on the row clicked
        menu = QMenu(self)
        info = self.model.row_info(self.list.indexAt(pos).row())
        if info is not None and (info.more or info.child):
            label = "Hide the other matches in this file" if info.expanded else f"Show {info.more} more in this file"
            menu.addAction(QAction(f"{label}\tCtrl+E", menu, triggered=self.toggle_group))
        menu.addAction(QAction("Open in editor\tEnter", menu, triggered=lambda: self.open_requested.emit(hit, False)))
        menu.addAction(
            QAction("Open containing folder\tCtrl+Enter", menu, triggered=lambda: self.open_requested.emit(hit, True))
        )
        menu.addAction(QAction("Copy path\tCtrl+Shift+C", menu, triggered=lambda: copy_path(hit.abs_path)))
        obsidian = obsidian_url(hit.abs_path)
        if obsidian:  # the file is in an Obsidian vault
            menu.addAction(
                QAction("Open in Obsidian", menu, triggered=lambda: QDesktopServices.openUrl(QUrl(obsidian)))
            )
        menu.exec(self.list.viewport().mapToGlobal(pos))

    # -- layout state --------------------------------------------------------------

    def splitters(self) -> dict[str, QSplitter]:
        return {"main": self.main_split, "detail": self.detail_split}
