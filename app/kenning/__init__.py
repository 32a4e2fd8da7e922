"""Kenning: offline hybrid search over notes and git repositories."""

__version__ = "0.1.0"
# The application's id: the desktop file's and the metainfo's name, and (Wayland) the
# window's app id, which must equal the desktop file's name for the launcher to match it.
APP_ID = "io.github.kenning.Kenning"
