"""The window's commands: one table for the menu bar, the keyboard and the About box.

Each command is a menu entry (File, Search, View, Help) with its keys; the window maps
its name to what it does.  The About box lists exactly these keys, with the few the
search field handles itself (arrows, Enter, Up in an empty box, Esc), so the list can
never miss one again.  The search field yields every command key to the window: a
line edit would otherwise take Ctrl+E as "end of line" and Ctrl+K as "delete to the
end" on X11 desktops.
"""

from __future__ import annotations

from PySide6.QtGui import QKeySequence

from kenning.core.records import Record


class Command(Record, frozen=True):
    name: str  # the window's handler for it (MainWindow.command_handlers)
    menu: str
    label: str
    keys: tuple[str, ...] = ()
    help: str = ""  # the About box's words ("" leaves it out)
    shown: str = ""  # the keys as the About box writes them (default: the first)


MENUS = ("File", "Search", "View", "Help")
TEAM_STORE_LABEL = "Connect to a team store…"  # the File menu's entry and the Sources page's button
COMMANDS = (
    Command("add_folder", "File", "Add folder…"),
    Command("link_repo", "File", "Link git repository…"),
    Command("team_store", "File", TEAM_STORE_LABEL),
    Command("reindex_all", "File", "Re-index all"),
    Command("settings", "File", "Settings…", ("Ctrl+,",), "settings"),
    Command("quit", "File", "Quit", ("Ctrl+Q",), "quit Kenning"),
    Command(
        "focus_search", "Search", "Go to the search box", ("Ctrl+K", "Ctrl+L"), "focus the search box", "Ctrl+K, Ctrl+L"
    ),
    Command(
        "open_folder",
        "Search",
        "Open containing folder",
        ("Ctrl+Return", "Ctrl+Enter"),
        "open its folder",
        "Ctrl+Enter",
    ),
    Command("copy_path", "Search", "Copy path", ("Ctrl+Shift+C",), "copy its path"),
    Command(
        "expand",
        "Search",
        "Show or hide the other matches in its file",
        ("Ctrl+E",),
        "show or hide the other matches in its file",
    ),
    Command("find", "Search", "Find in the preview…", ("Ctrl+F",), "find in the preview"),
    Command(
        "next_match",
        "Search",
        "Next match",
        ("F3",),
        "next / previous match (of the find bar when it is open)",
        "F3, Shift+F3",
    ),
    Command("previous_match", "Search", "Previous match", ("Shift+F3",)),
    Command("page_search", "View", "Search", ("Ctrl+1",), "search page, sources page", "Ctrl+1, Ctrl+2"),
    Command("page_sources", "View", "Sources", ("Ctrl+2",)),
    Command("about", "Help", "About Kenning and keyboard shortcuts", ("F1",), "this window"),
    Command("log_folder", "Help", "Open the log folder"),
)
# Keys the search field handles itself (they mean something else in other widgets).
FIELD_KEYS = (
    ("↑ ↓", "move through the results"),
    ("↑ in an empty search box", "the last search again"),
    ("Enter", "open the result in your editor, at its match"),
    ("Esc", "clear the search (first closes the find bar)"),
)


def help_rows() -> list[tuple[str, str]]:
    """(keys, what they do) for the About box, in menu order."""
    rows = list(FIELD_KEYS)
    rows += [(c.shown or c.keys[0], c.help) for c in COMMANDS if c.keys and c.help]
    return rows


def command_keys() -> set[str]:
    """Every command's keys in portable text form ("Ctrl+E")."""
    return {QKeySequence(k).toString() for c in COMMANDS for k in c.keys}
