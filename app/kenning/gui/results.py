"""The result list: a thin model over Hit rows (Vorta style, set_rows) and its delegate."""

from __future__ import annotations

import time

from PySide6.QtCore import QAbstractListModel, QModelIndex, QPointF, QRect, QRectF, QSize, Qt, QTimer
from PySide6.QtGui import QColor, QFont, QFontMetrics, QPainter, QPalette, QPixmap, QTextCharFormat, QTextLayout
from PySide6.QtWidgets import QListView, QStyle, QStyledItemDelegate, QStyleOptionViewItem

from kenning.core.types import FUZZY_LAYERS, LACKS_PHRASES_LABEL, MEANING_ONLY_LABEL, Hit
from kenning.gui import grouping
from kenning.gui.breakdown import listing_date
from kenning.gui.style import FINAL_COLOUR, theme
from kenning.search.explain import SCORE_MEANING

HitRole = Qt.ItemDataRole.UserRole + 1
RowRole = Qt.ItemDataRole.UserRole + 2
ROW_HEIGHT = 98
PAD = 10
# Time spent drawing new rows per paint of the list; the rest follow on the next turns
# of the event loop.  A new result set is 8-10 new rows of about 1 ms each: drawn in
# one paint, with the detail pane, they blocked the window for 50-115 ms while indexing
# ran on this 2-core machine (the UI thread waits for a CPU about half of that time).
RENDER_BUDGET_SECONDS = 0.003
CHILD_INDENT = 22  # "more in this file" rows sit under their file's best hit


SCORE_W = 74  # the score column of a row
TAG_W = SCORE_W + 20  # what a row's tag ("meaning only", ...) has under its score


def tag_font(font: QFont) -> QFont:
    """The small font of a row's tag, from the row's font."""
    small = QFont(font)
    small.setBold(False)
    small.setPointSizeF(font.pointSizeF() - 1.5)
    return small


def row_tag(hit: Hit) -> str:
    """The small label under a result's score: why it is there when no word matched, or
    why it stands after the hits holding the quoted phrases."""
    if hit.breakdown.lacks_phrases:
        return LACKS_PHRASES_LABEL
    return MEANING_ONLY_LABEL if hit.meaning_only else ""


def _where(hit: Hit) -> str:
    """ ":12–20" (lines), or " · p. 3" in an extracted document (a page says more)."""
    if hit.location:
        return f" · {hit.location}"
    return f":{hit.line_start}" if hit.line_start == hit.line_end else f":{hit.line_start}–{hit.line_end}"


def store_prefix(label: str) -> str:
    """ "[team] " before a hit's or a related note's source when a team store is searched
    too (label: its store's), else nothing."""
    return f"[{label}] " if label else ""


def _source(hit: Hit) -> str:
    """The hit's source, with its store's label when a team store is searched too."""
    return f"{store_prefix(hit.store_label)}{hit.source}"


def location(hit: Hit) -> str:
    return f"{_source(hit)} · {hit.path}{_where(hit)}"


def fit_location(hit: Hit, metrics: QFontMetrics, width: int) -> str:
    """The location in `width` pixels, giving up the least useful part first: the folders
    (elided in the middle), then the source's name, then the store's label; the file name
    and lines stay ("not…–22" lost both at 900 px).  The store's label outlasts the source's
    name: in one list over two stores it is what tells a team's note from one's own."""
    where = _where(hit)
    store = store_prefix(hit.store_label)
    folder, _, name = hit.path.rpartition("/")
    candidates = [location(hit)]
    if folder:
        rest = metrics.horizontalAdvance(f"{_source(hit)} · /{name}{where}")
        squeezed = metrics.elidedText(folder, Qt.TextElideMode.ElideMiddle, max(0, width - rest))
        if squeezed and squeezed != "…":
            candidates.append(f"{_source(hit)} · {squeezed}/{name}{where}")
        candidates.append(f"{_source(hit)} · …/{name}{where}")
    if store:
        candidates.append(f"{store}{name}{where}")
    candidates.append(f"{name}{where}")
    for text in candidates:
        if metrics.horizontalAdvance(text) <= width:
            return text
    return (
        metrics.elidedText(name, Qt.TextElideMode.ElideMiddle, max(0, width - metrics.horizontalAdvance(where))) + where
    )


def without_folders(title: str, path: str) -> str:
    """A code chunk's title is its path and its symbol ("app/kenning/storage/postgres/
    store.py: PostgresStore._release_indexing_locks"); where the path is shown beside it
    anyway, the file's name is enough: "store.py: PostgresStore._release_indexing_locks"."""
    folder, _, name = path.rpartition("/")
    return name + title[len(path) :] if folder and title.startswith(f"{path}: ") else title


def fit_title(hit: Hit, metrics: QFontMetrics, width: int) -> str:
    """The title in `width` pixels: a code chunk's folders go first, as the location line
    below holds them, so that its symbol stays (it read "app/kenning/storage/postgres/sto…")."""
    title = hit.title or hit.path
    if metrics.horizontalAdvance(title) > width:
        title = without_folders(title, hit.path)
    return metrics.elidedText(title, Qt.TextElideMode.ElideRight, width)


def score_bar_colours(t, selected: bool, text: QColor) -> tuple[QColor, QColor]:
    """(fill, track) of a row's score bar; on the selected row in the selection's own
    colours (the accent blue vanished on the dark theme's blue highlight)."""
    if not selected:
        return QColor(FINAL_COLOUR), t.track
    track = QColor(text)
    track.setAlpha(60)
    return QColor(text), track


class ResultsModel(QAbstractListModel):
    """One row per file (its best hit), expandable; views and tests read `hits` and `rows`."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.all_hits: list[Hit] = []
        self.expanded: set[tuple[str, str]] = set()
        self.sort_by = "relevance"
        self.max_files: int | None = None  # the list's length, in files ("Results shown")
        self.rows: list[grouping.Row] = []
        self.hits: list[Hit] = []  # the hit of each visible row

    def set_rows(self, hits: list[Hit]) -> None:
        self.all_hits = list(hits)
        keys = {grouping.file_key(h) for h in hits}
        self.expanded &= keys  # a file still in the results stays open
        self._rebuild()

    def set_sort(self, sort: str) -> None:
        self.sort_by = sort
        self._rebuild()

    def toggle(self, row: int) -> int:
        """Expand or collapse the file of `row`; returns the row of its lead hit."""
        if not 0 <= row < len(self.rows):
            return row
        key = self.rows[row].key
        if self.rows[row].more == 0 and not self.rows[row].child:
            return row  # a file with one match has nothing to show
        self.expanded.symmetric_difference_update({key})
        self._rebuild()
        return next(i for i, r in enumerate(self.rows) if r.key == key and not r.child)

    def row_info(self, row: int) -> grouping.Row | None:
        return self.rows[row] if 0 <= row < len(self.rows) else None

    def _rebuild(self) -> None:
        self.beginResetModel()
        self.rows = grouping.rows(self.all_hits, self.expanded, self.sort_by, self.max_files)
        self.hits = [r.hit for r in self.rows]
        self.endResetModel()

    def rowCount(self, parent: QModelIndex = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self.hits)

    def data(self, index: QModelIndex, role: int = Qt.ItemDataRole.DisplayRole):
        if not index.isValid() or index.row() >= len(self.hits):
            return None
        hit = self.hits[index.row()]
        if role == Qt.ItemDataRole.DisplayRole:
            return hit.title or hit.path
        if role == Qt.ItemDataRole.ToolTipRole:
            return f"{hit.abs_path}\nlines {hit.line_start}–{hit.line_end}\nscore {hit.score:.4f}: {SCORE_MEANING}"
        if role == HitRole:
            return hit
        if role == RowRole:
            return self.rows[index.row()]
        return None

    def hit(self, row: int) -> Hit | None:
        return self.hits[row] if 0 <= row < len(self.hits) else None


class ResultsView(QListView):
    """The result list; each paint starts a fresh row-rendering budget for its delegate."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        # PySide builds its Python classes lazily, and the first wrapper for the viewport
        # built over a hundred of them (30 ms): here at start-up, not on the first results.
        self._viewport = self.viewport()

    def redraw(self) -> None:
        self._viewport.update()

    def reset(self) -> None:
        # New rows: behind until a paint has drawn them all (the paint comes after
        # other queued work, such as the detail pane's timer).
        delegate = self.itemDelegate()
        if isinstance(delegate, ResultDelegate):
            delegate.behind = True
            delegate.unpainted = True
        super().reset()

    def paintEvent(self, event) -> None:
        delegate = self.itemDelegate()
        if isinstance(delegate, ResultDelegate):
            delegate.start_pass()
        super().paintEvent(event)


class ResultDelegate(QStyledItemDelegate):
    """Title, location, highlighted snippet, and the final score as a small bar."""

    def sizeHint(self, option: QStyleOptionViewItem, index: QModelIndex) -> QSize:
        return QSize(240, ROW_HEIGHT)  # width follows the view; a wider hint would add a scrollbar

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self._cache: dict[tuple, QPixmap] = {}
        self._spent = 0.0
        self.behind = False  # rows are waiting to be drawn on a later turn
        self.unpainted = False  # new rows, and no paint of the list since they came
        self._deferred_view: ResultsView | None = None
        self._later = QTimer(self, singleShot=True, interval=0, timeout=self._paint_deferred)
        self._group = (0, False, False)  # (more in this file, is a child row, expanded) of the row drawn
        self.locations: dict[int, str] = {}  # chunk id -> the location line last drawn for it
        self.titles: dict[int, str] = {}  # chunk id -> the title last drawn for it

    def start_pass(self) -> None:
        self._spent = 0.0
        self.behind = False
        self.unpainted = False

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: QModelIndex) -> None:
        """Rows are rendered once into a pixmap and reused, a few new ones per paint.

        Every Qt call from Python may hand the GIL to a busy worker (the indexer) and
        wait a switch interval to get it back, so a row drawn call by call could hold
        the event loop for tens of ms during indexing; a cached row costs one call.
        """
        hit: Hit = index.data(HitRole)
        if hit is None:
            return
        state = option.state & (QStyle.StateFlag.State_Selected | QStyle.StateFlag.State_MouseOver)
        row = index.data(RowRole)
        group = (row.more, row.child, row.expanded) if row is not None else (0, False, False)
        key = (
            group,
            hit.chunk_id,
            hit.score,
            option.rect.width(),
            option.rect.height(),
            int(state.value),
            option.palette.color(QPalette.ColorRole.Base).rgb(),
        )
        pixmap = self._cache.get(key)
        if pixmap is None:
            # At least one new row per paint, so the list always gets there.
            if self._spent > 0 and self._spent >= RENDER_BUDGET_SECONDS and isinstance(option.widget, ResultsView):
                self._defer(option.widget)  # blank for one turn, drawn on the next paint
                return
            started = time.perf_counter()
            if len(self._cache) > 400:
                self._cache.clear()
            self._group = group
            pixmap = self._render(option, hit)
            self._cache[key] = pixmap
            self._spent += time.perf_counter() - started
        painter.drawPixmap(option.rect.topLeft(), pixmap)

    def _defer(self, view: ResultsView) -> None:
        self.behind = True
        self._deferred_view = view
        self._later.start()

    def _paint_deferred(self) -> None:
        # The whole list, not the rows' old rects: it may have scrolled since, and rows
        # already cached cost one pixmap copy each.
        view, self._deferred_view = self._deferred_view, None
        if view is not None:
            view.redraw()

    def _render(self, option: QStyleOptionViewItem, hit: Hit) -> QPixmap:
        ratio = option.widget.devicePixelRatioF() if option.widget else 1.0
        pixmap = QPixmap(option.rect.size() * ratio)
        pixmap.setDevicePixelRatio(ratio)
        pixmap.fill(Qt.GlobalColor.transparent)
        local = QStyleOptionViewItem(option)
        local.rect = QRect(0, 0, option.rect.width(), option.rect.height())
        painter = QPainter(pixmap)
        self._paint_row(painter, local, hit)
        painter.end()
        return pixmap

    def _paint_row(self, painter: QPainter, option: QStyleOptionViewItem, hit: Hit) -> None:
        t = theme(option.palette)
        painter.save()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        selected = bool(option.state & QStyle.StateFlag.State_Selected)
        self._background(painter, option, selected, t)
        text_colour = option.palette.color(QPalette.ColorRole.HighlightedText if selected else QPalette.ColorRole.Text)
        indent = CHILD_INDENT if self._group[1] else 0
        rect = option.rect.adjusted(PAD + 4 + indent, PAD - 2, -PAD, -PAD)
        score_w = SCORE_W
        self._score(painter, QRect(rect.right() - score_w + 1, rect.top(), score_w, 34), hit, text_colour, t, selected)
        body = QRect(rect.left(), rect.top(), rect.width() - score_w - 8, rect.height())
        self._title(painter, body, hit, option.font, text_colour)
        muted = text_colour if selected else t.muted
        self._location(painter, body, hit, option.font, muted)
        self._snippet(painter, body, hit, option.font, text_colour, t)
        painter.restore()

    def _background(self, painter, option, selected, t) -> None:
        rect = option.rect.adjusted(4, 2, -4, -2)
        if selected:
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(option.palette.color(QPalette.ColorRole.Highlight))
            painter.drawRoundedRect(QRectF(rect), 8, 8)
        elif option.state & QStyle.StateFlag.State_MouseOver:
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(t.panel)
            painter.drawRoundedRect(QRectF(rect), 8, 8)
        else:
            painter.setPen(t.border)
            painter.drawLine(rect.bottomLeft(), rect.bottomRight())

    def _title(self, painter, body: QRect, hit: Hit, base_font: QFont, colour: QColor) -> None:
        font = QFont(base_font)
        font.setBold(True)
        font.setPointSizeF(base_font.pointSizeF() + 1)
        painter.setFont(font)
        painter.setPen(colour)
        title = self.titles[hit.chunk_id] = fit_title(hit, painter.fontMetrics(), body.width())
        painter.drawText(QRect(body.left(), body.top(), body.width(), 20), Qt.AlignmentFlag.AlignVCenter, title)

    def _location(self, painter, body: QRect, hit: Hit, base_font: QFont, colour: QColor) -> None:
        font = QFont(base_font)
        font.setPointSizeF(base_font.pointSizeF() - 0.5)
        painter.setFont(font)
        painter.setPen(colour)
        more, _child, expanded = self._group
        metrics = painter.fontMetrics()
        extra = f"   {'▾' if expanded else '▸'} {more} more in this file" if more else ""
        text = fit_location(hit, metrics, body.width() - metrics.horizontalAdvance(extra))
        if more and text != location(hit):  # a narrow list keeps more of the path, and says "+3"
            extra = f"  {'▾' if expanded else '▸'} +{more}"
            text = fit_location(hit, metrics, body.width() - metrics.horizontalAdvance(extra))
        text += extra
        self.locations[hit.chunk_id] = text  # what the row says (tests and accessibility read it)
        painter.drawText(QRect(body.left(), body.top() + 21, body.width(), 17), Qt.AlignmentFlag.AlignVCenter, text)

    def _snippet(self, painter, body: QRect, hit: Hit, base_font: QFont, colour: QColor, t) -> None:
        # QTextLayout with format ranges, not an HTML QTextDocument: six times cheaper,
        # and every row is laid out again whenever a new result set arrives.
        layout = QTextLayout(hit.snippet, base_font)
        mark = QTextCharFormat()
        mark.setBackground(t.mark_bg)
        mark.setForeground(t.mark_fg)
        mark.setFontWeight(QFont.Weight.DemiBold)
        ranges = []
        for start, end in hit.spans:
            r = QTextLayout.FormatRange()
            r.start, r.length, r.format = start, end - start, mark
            ranges.append(r)
        layout.setFormats(ranges)
        top = body.top() + 41
        line_h = QFontMetrics(base_font).lineSpacing()
        max_lines = max(1, int((body.bottom() - top) // line_h))
        layout.beginLayout()
        y = 0.0
        for _ in range(max_lines):
            line = layout.createLine()
            if not line.isValid():
                break
            line.setLineWidth(body.width())
            line.setPosition(QPointF(0, y))
            y += line_h
        layout.endLayout()
        painter.setPen(colour)
        layout.draw(painter, QPointF(body.left(), top))

    def _score(self, painter, rect: QRect, hit: Hit, colour: QColor, t, selected: bool = False) -> None:
        font = QFont(painter.font())
        font.setBold(True)
        painter.setFont(font)
        painter.setPen(colour)
        listed = listing_date(hit.breakdown)
        if listed is not None:  # filters only: listed by date, there is no score to draw
            painter.drawText(
                QRect(rect.left() - 20, rect.top(), rect.width() + 20, 18), Qt.AlignmentFlag.AlignRight, listed
            )
            return
        painter.drawText(
            QRect(rect.left(), rect.top(), rect.width(), 18), Qt.AlignmentFlag.AlignRight, f"{hit.score:.3f}"
        )
        bar = QRectF(rect.left() + 14, rect.top() + 23, rect.width() - 14, 6)
        painter.setPen(Qt.PenStyle.NoPen)
        fill, track = score_bar_colours(t, selected, colour)
        painter.setBrush(track)
        painter.drawRoundedRect(bar, 3, 3)
        filled = QRectF(bar.left(), bar.top(), bar.width() * max(0.0, min(1.0, hit.score)), bar.height())
        painter.setBrush(fill)
        painter.drawRoundedRect(filled, 3, 3)
        tag = "fuzzy" if hit.breakdown.layer in FUZZY_LAYERS else row_tag(hit)
        if tag:
            painter.setPen(t.muted)
            painter.setFont(tag_font(font))
            painter.drawText(
                QRect(rect.right() - TAG_W + 1, rect.top() + 32, TAG_W, 16), Qt.AlignmentFlag.AlignRight, tag
            )
