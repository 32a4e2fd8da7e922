"""The score breakdown drawn as a waterfall of bars.

Every bar is in the unit of the final score (0-1): the list contributions and
proximity stack up to the base relevance, the bonuses add to it, the penalty takes
away, and the last bar is the final score.  So the picture reads without the
formula, and the exact numbers (formatted like `kenning search --explain`) sit
beside each bar, with the details on hover.
"""

from __future__ import annotations

import time
from datetime import datetime

from PySide6.QtCore import QPointF, QRectF, QSize, Qt
from PySide6.QtGui import QColor, QFont, QPainter, QPen
from PySide6.QtWidgets import QSizePolicy, QToolTip, QWidget

from kenning.core.records import Record
from kenning.core.types import NEIGHBOURS_LIST, Breakdown
from kenning.core.wording import ago
from kenning.gui import style
from kenning.search import browse, explain

LIST_LABELS = {
    "porter": "Keywords",
    "trigram": "Substrings",
    "vector": "Meaning",
    "feedback": "Related words",
    "definition": "Definition",
    NEIGHBOURS_LIST: "Neighbours",
}
LIST_HELP = {
    "porter": "Full-text match on stemmed words (bm25), title weighted",
    "trigram": "Substring match (trigram index): identifiers, partial words",
    "vector": "Semantic similarity of the embeddings",
    "feedback": "Words the best first hits use and the query does not (pseudo-relevance feedback)",
    "definition": "Code that " + explain.DEFINITION_NOTE,
    NEIGHBOURS_LIST: "A hit that " + explain.NEIGHBOURS_NOTE,
}
ROW_H = 21  # 13 rows and the related notes under them fit a 1280×820 window
TYPICAL_ROWS = 13
LABEL_W = 190
VALUE_W = 150


class BarRow(Record, frozen=True):
    key: str
    label: str
    start: float  # in final-score units
    end: float
    colour: str
    value: str  # the number shown beside the bar
    tip: str
    kind: str = "part"  # "part" | "total" | "info" | "note"


def listing_date(b: Breakdown) -> str | None:
    """A filter-only listing's hit (ordered by date, no score): its document's date, or None."""
    if b.layer != browse.LAYER or browse.DATE_LIST not in b.lists:
        return None
    stamp = b.lists[browse.DATE_LIST].score
    return datetime.fromtimestamp(stamp).strftime("%Y-%m-%d") if stamp else "undated"


def _listing_rows(b: Breakdown, now: float | None = None) -> list[BarRow]:
    """Filters only: there are no words to rank by, so no bars; the order is the date's."""
    listed = b.lists[browse.DATE_LIST]
    when = listing_date(b) or "undated"
    age = f" · {ago(listed.score, time.time() if now is None else now)}" if listed.score else ""
    order = browse.FILTER_ONLY_ORDER
    return [
        BarRow("listing", order, 0, 0, style.RECENCY_COLOUR, "", order, kind="note"),
        BarRow("date", f"#{listed.rank} by date: {when}{age}", 0, 0, style.RECENCY_COLOUR, "", when, kind="note"),
    ]


def breakdown_rows(b: Breakdown, now: float | None = None) -> list[BarRow]:
    if listing_date(b) is not None:
        return _listing_rows(b, now)
    rows: list[BarRow] = []
    # The evidence's parts share base in proportion to what they gave relevance, so
    # the bars still sum to base however relevance was shaped into it.
    evidence = b.fused + b.proximity
    n = evidence / b.base if b.base and evidence else (b.normaliser or 1.0)
    x = 0.0
    for name, s in sorted(b.lists.items(), key=lambda item: _list_order(item[0])):
        share = s.contribution / n
        label = f"{LIST_LABELS.get(name, name)} · #{s.rank}"
        tip = (
            f"{LIST_HELP.get(name, name)}\nlist: {name}\nrank {s.rank}, raw score {s.score:.4f}, weight {s.weight:.2f}\n"
            f"{explain.contribution_rule(b, s)}\nshare of the score: {share:.4f}"
        )
        if name == "feedback" and b.expansion:
            tip += "\nwords: " + ", ".join(b.expansion)
        if name == "vector" and b.moved_toward:
            tip += "\n" + explain.moved_note(b)
        if name == "vector" and b.sentences:
            tip += "\n" + explain.sentences_note(b)
        if name == "vector" and b.opening is not None:
            tip += "\n" + explain.opening_note(b)
        rows.append(
            BarRow(name, label, x, x + share, style.LIST_COLOURS.get(name, "#888888"), f"+{s.contribution:.5f}", tip)
        )
        if name == "feedback" and b.expansion:
            words = ", ".join(b.expansion)
            rows.append(
                BarRow("feedback_words", f"   {words}", 0, 0, style.LIST_COLOURS["feedback"], "", words, kind="note")
            )
        x += share
    prox_share = b.proximity / n
    rows.append(
        BarRow(
            "proximity",
            "Proximity",
            x,
            x + prox_share,
            style.PROXIMITY_COLOUR,
            f"+{b.proximity:.5f}",
            f"Query words close together, in the title, or as a phrase\n{explain.proximity_parts(b)}",
        )
    )
    rows.append(
        BarRow(
            "base",
            "Base relevance",
            0.0,
            b.base,
            style.FINAL_COLOUR,
            f"{b.base:.4f}",
            f"relevance ({b.fused:.5f} fused + {b.proximity:.5f} proximity) / {b.normaliser:.5f} (best possible)"
            f" = {b.relevance:.4f}\nbase {explain.base_formula(b)} = {b.base:.4f}",
            kind="total",
        )
    )
    rows.extend(_signal_rows(b))
    rule = explain.phrase_rule(b)
    if rule:  # the quoted phrases were not required of every hit: whether this one holds them
        rows.append(BarRow("phrases", _sentence(rule), 0, 0, style.FINAL_COLOUR, "", _sentence(rule), kind="note"))
    return rows


def _sentence(rule: str) -> str:
    return rule[:1].upper() + rule[1:]


def _list_order(name: str) -> tuple[int, str]:
    """The user's own words first, the feedback list last (explain output is alphabetical)."""
    order = list(LIST_LABELS)
    return (order.index(name) if name in order else len(order), name)


def _signal_rows(b: Breakdown) -> list[BarRow]:
    rows = []
    x = b.base
    rows.append(
        BarRow(
            "recency",
            f"Recency {b.recency:.3f}",
            x,
            x + b.recency_bonus,
            style.RECENCY_COLOUR,
            f"+{b.recency_bonus:.4f}",
            f"Freshness {b.recency:.3f}: {explain.recency_rule()}",
        )
    )
    x += b.recency_bonus
    rows.append(
        BarRow(
            "git",
            f"Git activity {b.git:.3f}",
            x,
            x + b.git_bonus,
            style.GIT_COLOUR,
            f"+{b.git_bonus:.4f}",
            _sentence(explain.git_rule())
            + ("\n" + "\n".join(b.git_paths) if b.git_paths else "\nno recently changed paths"),
        )
    )
    for path in b.git_paths[:4]:
        rows.append(BarRow("git_path", f"   {path}", 0, 0, style.GIT_COLOUR, "", path, kind="note"))
    for link in b.ambiguous_links[:4]:  # a wiki link by a name several files share counts for none
        text = f"ambiguous link, not counted: {link}"
        rows.append(BarRow("ambiguous_link", f"   {text}", 0, 0, style.GIT_COLOUR, "", text, kind="note"))
    x += b.git_bonus
    removed = x * (1 - b.penalty)
    rows.append(
        BarRow(
            "penalty",
            f"Penalty ×{b.penalty:.2f}",
            x - removed,
            x,
            style.PENALTY_COLOUR,
            f"×{b.penalty:.2f}",
            explain.penalty_rule() if b.penalty < 1 else "no penalty",
        )
    )
    rows.append(
        BarRow(
            "final",
            "Final score",
            0.0,
            b.final,
            style.FINAL_COLOUR,
            f"{b.final:.4f}",
            f"min(1, (base + recency bonus + git bonus) × penalty) = {b.final:.4f}\nlayer {b.layer}",
            kind="total",
        )
    )
    cosine = "n/a" if b.cosine is None else f"{b.cosine:.4f}"
    rows.append(
        BarRow(
            "cosine",
            "Cosine (reference)",
            0.0,
            max(0.0, b.cosine or 0.0),
            style.LIST_COLOURS["vector"],
            cosine,
            "Cosine similarity of query and chunk embeddings; reported for every hit, not added to the score",
            kind="info",
        )
    )
    return rows


class BreakdownView(QWidget):
    """Paints breakdown_rows(); hovering a row shows its explanation."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.rows: list[BarRow] = []
        self.breakdown: Breakdown | None = None
        self.painted: dict[str, str] = {}  # each row's label as last drawn (cut to fit), by key
        self.setMouseTracking(True)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)

    def set_breakdown(self, b: Breakdown | None) -> None:
        self.breakdown = b
        self.rows = breakdown_rows(b) if b else []
        self.setFixedHeight(self.sizeHint().height())
        self.update()

    def value_of(self, key: str) -> str:
        return next((r.value for r in self.rows if r.key == key), "")

    @staticmethod
    def typical_height() -> int:
        """A hybrid hit's bars (three lists, feedback words, signals, cosine)."""
        return 8 + ROW_H * TYPICAL_ROWS + 10

    def sizeHint(self) -> QSize:
        return QSize(520, 8 + ROW_H * len(self.rows) + (10 if self.rows else 0))

    def _scale(self) -> float:
        return max(1.0, max((r.end for r in self.rows), default=1.0))

    def paintEvent(self, _event) -> None:
        if not self.rows:
            return
        t = style.theme(self.palette())
        p = QPainter(self)
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        track_w = max(60, self.width() - LABEL_W - VALUE_W - 16)
        scale = self._scale()
        y = 4
        for row in self.rows:
            if row.key == "base" or row.key == "cosine":
                p.setPen(QPen(t.border, 1, Qt.PenStyle.DashLine))
                p.drawLine(QPointF(8, y + 1), QPointF(self.width() - 8, y + 1))
                y += 5
            self._paint_row(p, row, y, track_w, scale, t)
            y += ROW_H
        p.end()

    def _paint_row(self, p: QPainter, row: BarRow, y: int, track_w: int, scale: float, t) -> None:
        font = QFont(self.font())
        font.setBold(row.kind == "total")
        p.setFont(font)
        p.setPen(t.muted if row.kind in ("note", "info") else t.text)
        if row.kind == "note":  # a line of its own, the value column's width too (nothing is there)
            width = self.width() - 16
            # A sentence is cut at its end (the listing's order); a path or a word list in the middle.
            mode = Qt.TextElideMode.ElideRight if row.key == "listing" else Qt.TextElideMode.ElideMiddle
            label = self.painted[row.key] = p.fontMetrics().elidedText(row.label, mode, width)
            p.drawText(QRectF(8, y, width, ROW_H), Qt.AlignmentFlag.AlignVCenter, label)
            return
        label = self.painted[row.key] = p.fontMetrics().elidedText(
            row.label, Qt.TextElideMode.ElideMiddle, LABEL_W - 12
        )
        p.drawText(QRectF(8, y, LABEL_W, ROW_H), Qt.AlignmentFlag.AlignVCenter, label)
        track = QRectF(LABEL_W, y + 7, track_w, ROW_H - 14)
        p.setPen(Qt.PenStyle.NoPen)
        p.setBrush(t.track)
        p.drawRoundedRect(track, 3, 3)
        x0 = track.left() + track_w * row.start / scale
        x1 = track.left() + track_w * row.end / scale
        colour = QColor(row.colour)
        if row.kind == "info":
            colour.setAlpha(130)
        p.setBrush(colour)
        if x1 - x0 > 0.5:
            p.drawRoundedRect(QRectF(x0, track.top(), max(2.0, x1 - x0), track.height()), 3, 3)
        elif row.kind == "part":  # a zero contribution still shows where it would start
            p.setPen(QPen(colour, 1.5))
            p.drawLine(QPointF(x0, track.top() - 2), QPointF(x0, track.bottom() + 2))
        p.setPen(t.text if row.kind != "info" else t.muted)
        p.setFont(style.mono_font(self.font().pointSize()))
        p.drawText(QRectF(LABEL_W + track_w + 10, y, VALUE_W - 10, ROW_H), Qt.AlignmentFlag.AlignVCenter, row.value)

    def _row_at(self, y: float) -> BarRow | None:
        top = 4
        for row in self.rows:
            if row.key in ("base", "cosine"):
                top += 5
            if top <= y < top + ROW_H:
                return row
            top += ROW_H
        return None

    def mouseMoveEvent(self, event) -> None:
        row = self._row_at(event.position().y())
        if row is None:
            QToolTip.hideText()
            return
        QToolTip.showText(event.globalPosition().toPoint(), f"{row.label.strip()}: {row.value}\n{row.tip}", self)
