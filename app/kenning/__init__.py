"""Kenning: offline hybrid search over notes and git repositories."""

__version__ = "0.1.0"
# typing.TYPE_CHECKING without importing typing (~11 M instructions, 4% of a lexical
# search: issue #27): a module on the quick commands' path writes `from kenning import
# TYPE_CHECKING` and imports what it needs from typing under `if TYPE_CHECKING:`.  Type
# checkers take any name TYPE_CHECKING as true (mypy, pyright); at run time it is False.
TYPE_CHECKING = False
# The application's id: the desktop file's and the metainfo's name, and (Wayland) the
# window's app id, which must equal the desktop file's name for the launcher to match it.
APP_ID = "io.github.kenning.Kenning"
