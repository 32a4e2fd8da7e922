"""Take the README screenshots under a virtual X server.

    xvfb-run -s "-screen 0 1400x900x24" .venv/bin/python packaging/screenshots.py [--fake-model]

Builds a realistic store in a temporary KENNING_HOME (a folder of developer notes,
the asyncio package of this Python, and a clone of this repository linked as a git
source), then saves assets/screenshots/{welcome,sources-indexing,search-light,search-dark}.png
and the browsing shots: grouped-related, tags, preview-rendered, settings-editor.
`--browsing` takes only the browsing shots and the dark one (no repository clone).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "assets" / "screenshots"
sys.path.insert(0, str(Path(__file__).resolve().parent))

from screenshot_notes import NOTES  # noqa: E402


def write_notes(root: Path) -> Path:
    for rel, text in NOTES.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text.strip() + "\n", encoding="utf-8")
    return root


def scratch_folders() -> tuple[Path, Path, Path]:
    """A temporary KENNING_HOME beside the developer notes and a few asyncio modules: (root, notes, asyncio)."""
    tmp = Path(tempfile.mkdtemp(prefix="kenning-shots-"))
    os.environ["KENNING_HOME"] = str(tmp / "home")
    notes = write_notes(tmp / "notes")
    stdlib = tmp / "asyncio"
    stdlib.mkdir()
    for name in ("locks.py", "queues.py", "timeouts.py", "taskgroups.py", "runners.py", "threads.py"):
        shutil.copy(Path(asyncio.__file__).parent / name, stdlib / name)
    return tmp, notes, stdlib


def wait(app, condition, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        app.processEvents()
        if condition():
            return True
        time.sleep(0.02)
    return False


def settle(app, seconds: float = 0.4) -> None:
    wait(app, lambda: False, seconds)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--fake-model", action="store_true")
    parser.add_argument("--browsing", action="store_true", help="only the #14 browsing shots and dark mode")
    args = parser.parse_args()
    if args.browsing:
        return browsing_shots(args)
    tmp, notes, stdlib = scratch_folders()
    repo = tmp / "kenning"
    subprocess.run(["git", "clone", "-q", str(ROOT), str(repo)], check=True)
    # The notes above live in this repository too; one copy of them is enough.
    subprocess.run(["git", "-C", str(repo), "rm", "-q", "packaging/screenshot_notes.py"], check=True)
    subprocess.run(
        [
            "git",
            "-C",
            str(repo),
            "-c",
            "user.name=screenshots",
            "-c",
            "user.email=screenshots@localhost",
            "commit",
            "-q",
            "-m",
            "drop the screenshot notes",
        ],
        check=True,
    )

    from kenning.embedding import FakeEmbedder
    from kenning.gui.app import make_app
    from kenning.gui.main_window import MainWindow
    from kenning.gui.style import apply_theme

    app = make_app()
    apply_theme(app, "light")
    factory = FakeEmbedder if args.fake_model else None
    store_path = tmp / "home" / "kenning.db"

    window = MainWindow(store_path, embedder_factory=factory, auto_index=False)
    window.sources_panel.ask = lambda *_: True
    window.resize(1360, 860)
    window.show()
    wait(app, lambda: window.has_sources is False, 10)
    settle(app)
    window.grab().save(str(OUT / "welcome.png"))

    window.sources_panel.add_folder(str(notes))
    window.sources_panel.link_repo(str(repo))
    window.sources_panel.add_folder(str(stdlib))
    window.show_page(2)
    window.indexer.start(None)
    wait(
        app,
        lambda: (
            window.index_status.last is not None
            and window.index_status.last.phase == "embeddings"
            and window.index_status.last.done > 40
        ),
        300,
    )
    window.stats.refresh()
    settle(app, 1.0)
    window.sources_panel.select("kenning")
    settle(app)
    window.grab().save(str(OUT / "sources-indexing.png"))
    wait(app, lambda: not window.indexer.running, 1200)
    window.stats.refresh()
    settle(app, 1.0)

    for theme in ("light", "dark"):
        apply_theme(app, theme)
        window.show_page(1)
        window.search_bar.set_text("")
        settle(app, 0.3)
        for _ in range(2):  # the first query warms the vector matrix; show a warm timing
            window.model.set_rows([])
            window.search_bar.set_text("retry with backoff when sqlite is locked")
            wait(app, lambda: window.model.rowCount() > 0, 30)
        settle(app, 0.8)
        window.select_row(0)
        settle(app, 0.5)
        window.grab().save(str(OUT / f"search-{theme}.png"))
    window.close()
    print("screenshots in", OUT)
    return 0


def browsing_shots(args) -> int:
    """Grouped results with related notes, the tag pane, the rendered preview, dark mode, the editor setting."""
    tmp, notes, stdlib = scratch_folders()

    from kenning.embedding import FakeEmbedder
    from kenning.gui.app import make_app
    from kenning.gui.main_window import MainWindow
    from kenning.gui.settings_dialog import SettingsDialog
    from kenning.gui.style import apply_theme

    app = make_app()
    apply_theme(app, "light")
    window = MainWindow(tmp / "home" / "kenning.db", embedder_factory=FakeEmbedder if args.fake_model else None)
    window.sources_panel.ask = lambda *_: True
    window.resize(1360, 860)
    window.show()
    wait(app, lambda: window.has_sources is False, 10)
    window.sources_panel.add_folder(str(notes))
    window.sources_panel.add_folder(str(stdlib))
    settle(app, 1.0)
    wait(app, lambda: not window.indexer.running and window.search_service.engine is not None, 900)
    window.stats.refresh()
    settle(app, 1.5)
    window.show_page(1)
    window.page.main_split.setSizes([170, 560, 630])

    def search(text: str) -> None:
        for _ in range(2):  # the first query warms the vector matrix; show a warm timing
            window.model.set_rows([])
            window.search_bar.set_text(text)
            wait(app, lambda: window.model.rowCount() > 0, 30)
        settle(app, 0.8)

    search("retry with backoff when the lock is busy")
    grouped = next((i for i, r in enumerate(window.model.rows) if r.more), 0)
    window.select_row(grouped)
    window.page.toggle_group()
    wait(app, lambda: bool(window.page.related_notes), 20)
    settle(app, 0.8)
    window.grab().save(str(OUT / "grouped-related.png"))

    window.page.tag_pane.tag_clicked.emit("python")
    wait(app, lambda: "tag:python" in window.search_bar.text and window.model.rowCount() > 0, 30)
    settle(app, 1.0)
    window.grab().save(str(OUT / "tags.png"))

    search("busy timeout begin immediate")
    window.page.detail_split.setSizes([200, 560])
    row = next((i for i, h in enumerate(window.model.hits) if h.path.endswith(".md")), 0)
    window.select_row(row)
    settle(app, 1.0)
    window.grab().save(str(OUT / "preview-rendered.png"))

    apply_theme(app, "dark")
    window.page.detail_split.setSizes([370, 380])
    search("retry with backoff when the lock is busy")
    window.select_row(0)
    settle(app, 1.0)
    window.grab().save(str(OUT / "search-dark.png"))
    apply_theme(app, "light")

    dialog = SettingsDialog(window.workspace, str(tmp / "home"), window)
    dialog.editor.setCurrentIndex(dialog.editor.findData("vscode"))
    dialog.show()
    settle(app, 0.8)
    dialog.grab().save(str(OUT / "settings-editor.png"))
    dialog.close()
    window.close()
    print("screenshots in", OUT)
    return 0


if __name__ == "__main__":
    sys.exit(main())
