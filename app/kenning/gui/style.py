"""Colours and the stylesheet, derived from the system palette (light or dark)."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtGui import QColor, QFont, QFontDatabase, QGuiApplication, QIcon, QPalette

from kenning.core.records import Record
from kenning.core.types import NEIGHBOURS_LIST

# Bars of the score breakdown: one hue per kind of evidence, the same in both themes.
LIST_COLOURS = {
    "porter": "#4C8BF5",
    "trigram": "#8E6CEF",
    "vector": "#12A594",
    "feedback": "#7FB2F0",
    "definition": "#E0A526",
    NEIGHBOURS_LIST: "#C466A8",  # not the meaning list's teal: evidence made of every list
}
PROXIMITY_COLOUR = "#E69A28"
RECENCY_COLOUR = "#3FA34D"
GIT_COLOUR = "#E5534B"
PENALTY_COLOUR = "#9A9A9A"
FINAL_COLOUR = "#2F6FDB"


class Theme(Record, frozen=True):
    dark: bool
    text: QColor
    muted: QColor
    base: QColor
    panel: QColor
    border: QColor
    accent: QColor
    mark_bg: QColor  # matched words
    mark_fg: QColor
    band: QColor  # the hit's lines in the preview
    track: QColor  # empty part of a bar
    error: QColor  # words saying what went wrong


def is_dark(palette: QPalette | None = None) -> bool:
    palette = palette or QGuiApplication.palette()
    return palette.color(QPalette.ColorRole.Window).lightness() < 128


def theme(palette: QPalette | None = None) -> Theme:
    palette = palette or QGuiApplication.palette()
    dark = is_dark(palette)
    text = palette.color(QPalette.ColorRole.WindowText)
    muted = QColor(text)
    muted.setAlpha(150)
    return Theme(
        dark=dark,
        text=text,
        muted=QColor("#9AA4B2") if dark else QColor("#5F6B7A"),
        base=palette.color(QPalette.ColorRole.Base),
        panel=QColor("#23272E") if dark else QColor("#F4F6F9"),
        border=QColor("#3A404A") if dark else QColor("#D9DEE5"),
        accent=QColor("#5B9BFF") if dark else QColor("#2F6FDB"),
        mark_bg=QColor("#6B5A12") if dark else QColor("#FFE58A"),
        mark_fg=QColor("#FFF4C2") if dark else QColor("#1F1A00"),
        band=QColor(91, 155, 255, 46) if dark else QColor(47, 111, 219, 26),
        track=QColor("#30353D") if dark else QColor("#E8ECF1"),
        error=QColor("#FF7B72") if dark else QColor("#C62828"),
    )


def mono_font(point_size: int | None = None) -> QFont:
    font = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
    if point_size:
        font.setPointSize(point_size)
    return font


def app_icon() -> QIcon:
    """The shared icon set's app icon when it is there; Qt's default otherwise."""
    root = Path(__file__).resolve().parents[3] / "resources" / "icons"
    for name in ("kenning.svg", "kenning.png"):
        if (root / name).is_file():
            return QIcon(str(root / name))
    return QIcon()


def stylesheet(t: Theme) -> str:
    """Small touches only: the palette does the rest, so the OS theme still shows."""
    border, panel, accent = t.border.name(), t.panel.name(), t.accent.name()
    muted = t.muted.name()
    return f"""
QLineEdit#searchField {{
    padding: 7px 10px; font-size: 15px; border: 1px solid {border}; border-radius: 8px;
}}
QLineEdit#searchField:focus {{ border: 1px solid {accent}; }}
QToolButton#chip {{
    border: 1px solid {border}; border-radius: 11px; padding: 2px 8px; background: {panel};
}}
QToolButton#chip:hover {{ border-color: {accent}; }}
QToolButton#history::menu-indicator {{ image: none; width: 0px; }}
QToolButton#modeButton {{ border: 1px solid {border}; border-radius: 6px; padding: 3px 10px; }}
QToolButton#modeButton:checked {{ background: {accent}; color: white; border-color: {accent}; font-weight: 600; }}
QLabel#muted, QLabel#hint {{ color: {muted}; }}
QLabel#error {{ color: {t.error.name()}; }}
QLabel#sectionTitle {{ font-weight: 600; font-size: 13px; }}
QLabel#fuzzyBanner {{
    background: {t.mark_bg.name()}; color: {t.mark_fg.name()}; border-radius: 6px; padding: 4px 8px;
}}
QFrame#card {{ background: {panel}; border: 1px solid {border}; border-radius: 10px; }}
QListView#results {{ border: none; }}
QPushButton#primary {{
    background: {accent}; color: white; border: none; border-radius: 6px; padding: 7px 16px;
    font-weight: 600;
}}
QPushButton#primary:hover {{ background: {t.accent.lighter(112).name()}; }}
QTabBar::tab {{ padding: 6px 14px; }}
QSplitter::handle {{ background: {border}; }}
QSplitter::handle:horizontal {{ width: 1px; }}
QSplitter::handle:vertical {{ height: 1px; }}
"""


_DARK = {
    "Window": "#1E2127",
    "WindowText": "#E3E7ED",
    "Base": "#16181D",
    "AlternateBase": "#1B1E24",
    "Text": "#E3E7ED",
    "Button": "#2A2F37",
    "ButtonText": "#E3E7ED",
    "Highlight": "#2F5FB3",
    "HighlightedText": "#FFFFFF",
    "ToolTipBase": "#2A2F37",
    "ToolTipText": "#E3E7ED",
    "PlaceholderText": "#7D8796",
    "Link": "#7FB0FF",
    "Mid": "#3A404A",
    "Midlight": "#343A43",
    "Dark": "#121419",
}
_DARK_DISABLED = {"Text": "#6B7380", "ButtonText": "#6B7380", "WindowText": "#6B7380"}
_LIGHT = {
    "Window": "#FBFBFC",
    "WindowText": "#1F2328",
    "Base": "#FFFFFF",
    "AlternateBase": "#F6F8FA",
    "Text": "#1F2328",
    "Button": "#F3F4F6",
    "ButtonText": "#1F2328",
    "Highlight": "#DCE8FB",
    "HighlightedText": "#0B2A5B",
    "ToolTipBase": "#FFFFFF",
    "ToolTipText": "#1F2328",
    "PlaceholderText": "#8B949E",
    "Link": "#2F6FDB",
    "Mid": "#D0D7DE",
    "Midlight": "#E6E9ED",
    "Dark": "#AFB8C1",
}


def _palette(colors: dict[str, str], disabled: dict[str, str] | None = None) -> QPalette:
    p = QPalette()
    role = QPalette.ColorRole
    for name, color in colors.items():
        p.setColor(getattr(role, name), QColor(color))
    for name, color in (disabled or {}).items():
        p.setColor(QPalette.ColorGroup.Disabled, getattr(role, name), QColor(color))
    return p


def dark_palette() -> QPalette:
    """Fusion's palette for a dark system scheme (Qt leaves Fusion light on some desktops)."""
    return _palette(_DARK, _DARK_DISABLED)


def light_palette() -> QPalette:
    return _palette(_LIGHT)


_chosen_theme = ["system"]  # the theme setting, kept for the system's light/dark flips


def apply_theme(app, scheme: str | None = None) -> None:
    """Fusion in the theme setting's colours: system (follows the desktop), light or dark."""
    from PySide6.QtCore import Qt

    if scheme is not None:
        _chosen_theme[0] = scheme
    app.setStyle("Fusion")
    scheme = _chosen_theme[0]
    if scheme not in ("light", "dark"):
        system = app.styleHints().colorScheme()
        scheme = "dark" if system == Qt.ColorScheme.Dark else "light"
    app.setPalette(dark_palette() if scheme == "dark" else light_palette())
    app.setStyleSheet(stylesheet(theme(app.palette())))
