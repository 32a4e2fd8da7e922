"""Helpers shared by the GUI tests and the responsiveness benchmark."""

from __future__ import annotations

from pathlib import Path

WORDS = [
    "index",
    "query",
    "vector",
    "commit",
    "branch",
    "cache",
    "latency",
    "thread",
    "window",
    "render",
    "parser",
    "token",
    "schema",
    "migration",
    "journal",
    "snapshot",
    "replica",
    "cluster",
    "shard",
    "quorum",
    "lease",
]


def write_many(root: Path, count: int) -> Path:
    """count small markdown notes in nested folders, each with distinct words."""
    for i in range(count):
        path = root / f"d{i // 100:03d}" / f"note-{i:05d}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        words = " ".join(WORDS[(i * 7 + k) % len(WORDS)] for k in range(60))
        path.write_text(f"# Note {i}\n\n{words}\n\n## Details {i}\n\n{words[::-1]}\n", encoding="utf-8")
    return root


NOTES = {
    "sqlite-wal.md": "# SQLite WAL mode\n\nWrite-ahead logging lets readers continue while a writer commits.\n"
    "Checkpoints move pages from the WAL file back into the database.\n",
    "rust/borrowing.md": "# Borrow checker\n\nThe borrow checker enforces that references never outlive their owner.\n"
    "Lifetimes annotate how long a reference stays valid.\n",
    "python/asyncio.md": "# Asyncio event loop\n\nThe event loop runs coroutines; await yields control back to it.\n"
    "Blocking calls freeze the loop, so run them in an executor.\n",
    "retry.py": 'def retry_with_backoff(fn, attempts=5):\n    """Call fn, sleeping exponentially longer after each failure."""\n'
    "    for i in range(attempts):\n        try:\n            return fn()\n        except OSError:\n"
    "            time.sleep(2 ** i)\n",
}


def write_notes(root, files=NOTES):
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def typed(qtbot, window, text):
    """Text typed into the window's search field over whatever it held (Ctrl+A first),
    until the results arrive and the preview shows the current hit."""
    from PySide6.QtCore import Qt

    field = window.search_bar.field
    field.setFocus()
    with qtbot.wait_signal(window.search_service.results, timeout=10000):
        qtbot.keyClick(field, Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier)
        qtbot.keyClicks(field, text)
    qtbot.wait_until(lambda: window.preview.hit is window.current_hit(), timeout=5000)
