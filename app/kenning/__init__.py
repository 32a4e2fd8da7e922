"""Kenning: offline hybrid search over notes and git repositories."""

__version__ = "0.1.0"
