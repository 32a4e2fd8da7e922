"""#16: the preview of a PDF, notebook or message shows its extracted text, marked, at its location."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from kenning.core.types import Breakdown, Hit
from kenning.embedding import FakeEmbedder
from kenning.ingest.indexer import Indexer
from kenning.ingest.sources import add_source
from kenning.storage import open_store
from kenning.storage.settings import set_setting

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # tests/: docfiles
from docfiles import email_bytes, mbox_bytes, notebook_json, pdf_bytes


@pytest.fixture
def doc_window(qtbot, tmp_path):
    from conftest import make_window, wait_for_model

    files = {
        "paper.pdf": pdf_bytes([["Attention Is All You Need"], ["Results", "The quokka benchmark result"]]),
        "study.ipynb": notebook_json([("markdown", "# Study"), ("code", "wombat_rate = 0.2")]),
        "team.mbox": mbox_bytes([email_bytes("Lunch", "Bob <bob@example.org>", "pizzaword on friday")]),
        "plain.md": "# Plain\n\nA plain note about a numbat.\n",
    }
    store_path = tmp_path / "store" / "kenning.db"
    store = open_store(store_path)
    set_setting(store, "embedding_model", "fake")
    notes = tmp_path / "notes"
    notes.mkdir()
    for name, content in files.items():
        (notes / name).write_bytes(content if isinstance(content, bytes) else content.encode())
    add_source(store, notes, name="notes")
    embedder = FakeEmbedder()
    Indexer(store, lambda: embedder).run()
    store.close()
    w = make_window(qtbot, store_path)
    wait_for_model(qtbot, w)
    w.show()
    yield w
    w.shutdown()


def _search(qtbot, window, text):
    window.search_bar.set_mode("lexical")
    with qtbot.wait_signal(window.search_service.results, timeout=10000):
        window.search_bar.set_text(text)
    qtbot.wait_until(lambda: window.preview.hit is window.current_hit(), timeout=3000)
    preview = window.preview
    text = preview.editor.toPlainText()
    return text, preview.header.text(), [text[s:e] for s, e in preview.matches]


@pytest.mark.parametrize(
    ("query", "shown", "where", "marked"),
    [
        ("quokka", "Attention Is All You Need\nResults\nThe quokka benchmark result", "paper.pdf  ·  p. 2", "quokka"),
        ("wombat_rate", "wombat_rate = 0.2", "study.ipynb  ·  cell 2", "wombat_rate"),
        ("pizzaword", "pizzaword on friday", "team.mbox#1", "pizzaword"),
        ("numbat", "A plain note about a numbat.", "plain.md  ·  lines", "numbat"),
    ],
)
def test_preview_shows_extracted_text_with_location_and_marks(qtbot, doc_window, query, shown, where, marked):
    text, header, marks = _search(qtbot, doc_window, query)
    assert shown in text
    assert "%PDF" not in text and '"cells"' not in text and "Content-Type" not in text
    assert header.startswith(where)
    assert marks and all(m.lower() == marked for m in marks)
    if "p. " in where or "cell" in where:  # the result row names the page or cell too
        from kenning.gui.results import location

        assert location(doc_window.current_hit()).endswith(where.split("  ·  ")[1])
    assert doc_window.current_hit().abs_path.endswith(where.split("#")[0].split("  ")[0])


def test_the_preview_never_waits_for_the_search_thread(qtbot, doc_window):
    """Showing a hit reads the extracted text on the window's own connection: a search (or
    the count after it) holding the search service's connection must not block the window."""
    import threading

    _search(qtbot, doc_window, "quokka")
    held, release = threading.Event(), threading.Event()

    def busy_search():
        with doc_window.search_service.workspace.store._lock:
            held.set()
            release.wait(5)

    threading.Thread(target=busy_search, daemon=True).start()
    assert held.wait(5)
    # Were the preview to wait for the search thread's connection, it would return only
    # once the lock is released: by this timer, which the test then sees having fired.
    timer = threading.Timer(5, release.set)
    timer.start()
    try:
        doc_window.page._show_hit(doc_window.current_hit())
        assert not release.is_set(), "the preview waited for the search thread's connection"
    finally:
        timer.cancel()
        release.set()
    assert "quokka" in doc_window.preview.editor.toPlainText()


def _hit(root, path: str, line: int = 40, location: str = "") -> Hit:
    """A hit on a real file of a source folder (the opener checks the file is inside it)."""
    container = root / path.split("#")[0]
    if not container.exists():
        container.write_bytes(b"x\n")
    return Hit(
        1,
        "notes",
        path,
        str(container),
        "t",
        "prose",
        line,
        line + 2,
        "s",
        0.5,
        Breakdown(),
        location=location,
        root=str(root),
    )


def test_enter_opens_a_pdf_or_word_file_in_its_own_application_and_html_at_the_top(qtbot, monkeypatch, tmp_path):
    from kenning.gui import opener

    opened, launched = [], []
    monkeypatch.setattr(
        opener.QDesktopServices, "openUrl", staticmethod(lambda url: opened.append(url.toLocalFile()) or True)
    )
    monkeypatch.setattr(opener, "launch", lambda argv: launched.append(argv))
    monkeypatch.setattr(opener.QTimer, "singleShot", staticmethod(lambda *a: None))
    o = opener.Opener()
    o.editor = "ed --line {line} {file}"
    notes = tmp_path.resolve()
    assert o.open_hit(_hit(notes, "paper.pdf", location="p. 12")) and opened == [str(notes / "paper.pdf")]
    assert o.open_hit(_hit(notes, "design.docx")) and opened[-1] == str(notes / "design.docx")
    o.open_hit(_hit(notes, "page.html"))
    o.open_hit(_hit(notes, "team.mbox#3"))
    o.open_hit(_hit(notes, "plain.md"))
    assert [argv[2] for argv in launched] == ["1", "1", "40"]
    assert launched[1][3] == str(notes / "team.mbox")  # a message opens as its mailbox file
