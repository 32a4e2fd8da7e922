"""The window's layout across runs, fitted to the screen it opens on.

Saved: geometry, splitter positions and the search mode (per store, through the
workspace).  The first size is a share of the screen's available area in
device-independent pixels, so QT_SCALE_FACTOR=2 on a 1600×1000 screen opens a
window that fits (fixed pixel sizes gave 2560×1640); a saved geometry from a larger
screen, or another scale factor, is shrunk and moved back onto this one.
"""

from __future__ import annotations

from PySide6.QtCore import QByteArray, QRect
from PySide6.QtGui import QGuiApplication

LAYOUT_KEY = "gui_layout"
PREFERRED = (1280, 820)
SCREEN_SHARE = 0.9  # at most this much of the available area on first start
MINIMUM = (640, 420)
DETAIL_LAYOUT = 2  # the detail split's saved sizes are kept from this version on


def fitted(rect: QRect, available: QRect) -> QRect:
    """rect shrunk to fit `available` and moved inside it."""
    width = min(rect.width(), available.width())
    height = min(rect.height(), available.height())
    x = min(max(rect.x(), available.x()), available.right() - width + 1)
    y = min(max(rect.y(), available.y()), available.bottom() - height + 1)
    return QRect(x, y, width, height)


def first_size(available: QRect) -> tuple[int, int]:
    width = min(PREFERRED[0], int(available.width() * SCREEN_SHARE))
    height = min(PREFERRED[1], int(available.height() * SCREEN_SHARE))
    return max(min(MINIMUM[0], available.width()), width), max(min(MINIMUM[1], available.height()), height)


def _available(window) -> QRect:
    screen = window.screen() or QGuiApplication.primaryScreen()
    return screen.availableGeometry()


def restore(window) -> None:
    """Saved layout back, or a first size that fits the screen; always on screen."""
    available = _available(window)
    window.resize(*first_size(available))
    saved = window.workspace.load_state(LAYOUT_KEY, {}) or {}
    page = window.page
    for key, target in (
        ("geometry", window.restoreGeometry),
        ("state", window.restoreState),
        ("main", page.main_split.restoreState),
        ("detail", page.detail_split.restoreState),
    ):
        if key == "detail" and saved.get("detail_layout") != DETAIL_LAYOUT:
            continue  # saved before the split followed the window: fit_detail sizes it
        if saved.get(key):
            target(QByteArray.fromHex(saved[key].encode()))
            if key == "detail":
                page.detail_sized_by_user = True
    geometry = window.geometry()
    if not available.contains(geometry):
        window.setGeometry(fitted(geometry, available))
    if saved.get("mode"):
        window.search_bar.set_mode(saved["mode"])


def save(window) -> None:
    page = window.page
    window.workspace.save_state(
        LAYOUT_KEY,
        {
            "geometry": bytes(window.saveGeometry().toHex()).decode(),
            "state": bytes(window.saveState().toHex()).decode(),
            "main": bytes(page.main_split.saveState().toHex()).decode(),
            # Kept only once the user moved it; until then it follows the window (fit_detail).
            "detail": bytes(page.detail_split.saveState().toHex()).decode() if page.detail_sized_by_user else "",
            "mode": window.search_bar.mode,
            "detail_layout": DETAIL_LAYOUT,
        },
    )
