"""The real window against a real store: search, stale results, breakdown, fuzzy layer."""

from __future__ import annotations

import threading

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from kenning.gui.main_window import PAGE_SEARCH, PAGE_WELCOME
from kenning.search.fusion import DEFAULT_FUSION
from kenning_testing import json_hits

FUZZY = f"{DEFAULT_FUSION}-fuzzy"  # the layer of a search found only by correcting its words


def search(qtbot, window, text, mode=None):
    if mode:
        window.search_bar.set_mode(mode)
    with qtbot.wait_signal(window.search_service.results, timeout=10000):
        window.search_bar.set_text(text)
    return window.result


def test_typing_a_query_shows_the_expected_hit(qtbot, window):
    assert window.stack.currentIndex() == PAGE_SEARCH
    with qtbot.wait_signal(window.search_service.results, timeout=10000):
        qtbot.keyClicks(window.search_bar.field, "borrow checker")  # debounced: one search
    assert window.model.hits[0].path == "rust/borrowing.md"
    assert window.current_hit().path == "rust/borrowing.md"
    qtbot.wait_until(lambda: window.preview.hit is window.current_hit(), timeout=2000)  # one turn later
    assert "borrow" in window.preview.editor.toPlainText().lower()
    assert window.preview.matches, "matched words are highlighted in the preview"


def test_a_slow_older_query_never_replaces_a_newer_one(qtbot, window):
    engines = [window.search_service.lexical, window.search_service.engine]
    started, newer_typed = threading.Event(), threading.Event()
    finished_old = []
    for engine in engines:
        original = engine.search

        def slow(text, options, original=original):
            if "asyncio" in text:
                started.set()
                assert newer_typed.wait(10)  # the old query is still running when the new one is typed
                result = original(text, options)
                finished_old.append(result)
                return result
            return original(text, options)

        engine.search = slow
    delivered = []
    window.search_service.results.connect(lambda rid, result: delivered.append((rid, result.query)))
    old_id = window.run_search("asyncio event loop", "hybrid")
    assert started.wait(5)
    new_id = window.run_search("borrow checker", "hybrid")
    newer_typed.set()
    qtbot.wait_until(lambda: bool(finished_old and delivered), timeout=10000)
    # Every answer the worker sent has reached the window: its thread is idle and the
    # queued signals are delivered.
    qtbot.wait_until(lambda: window.search_service.pool.activeThreadCount() == 0, timeout=10000)
    QApplication.processEvents()
    assert new_id > old_id
    assert delivered == [(new_id, "borrow checker")]
    assert window.model.hits[0].path == "rust/borrowing.md"


def test_new_rows_are_drawn_a_few_per_paint_and_the_detail_pane_follows(qtbot, window, monkeypatch):
    """#25 item 3: the detail pane follows after the list's first paint, not after every row
    (while indexing each row took a paint of its own, and the previous hit stayed for seconds)."""
    from kenning.gui import results

    monkeypatch.setattr(results, "RENDER_BUDGET_SECONDS", 0.0)  # one new row per paint
    delegate, events = window.delegate, []
    render, start_pass, set_hit = delegate._render, delegate.start_pass, window.preview.set_hit
    monkeypatch.setattr(delegate, "_render", lambda *a: (events.append("row"), render(*a))[1])
    monkeypatch.setattr(delegate, "start_pass", lambda: (events.append("paint"), start_pass())[1])
    monkeypatch.setattr(window.preview, "set_hit", lambda *a: (events.append("detail"), set_hit(*a))[1])
    search(qtbot, window, "the")
    qtbot.wait_until(lambda: "detail" in events and not delegate.behind, timeout=5000)
    assert events.count("row") >= 2, "several rows are visible"
    assert "row row" not in " ".join(events), "never two new rows in one paint"
    first_detail = events.index("detail")
    assert events[:first_detail].count("paint") >= 1, "the detail pane never adds to the list's first paint"
    assert events[:first_detail].count("row") == 1, "it follows after the first row, not after every row"
    assert window.preview.hit is window.current_hit()


def test_related_notes_say_they_are_being_found_never_the_previous_hits(qtbot, window):
    """#25 item 3: while the search thread is busy, the list says so instead of showing
    the previous hit's related notes (or nothing)."""
    import threading

    from kenning.gui.workers import _Task

    search(qtbot, window, "the")
    qtbot.wait_until(lambda: bool(window.page.related_notes), timeout=10000)
    before = [window.page.related.item(i).text() for i in range(window.page.related.count())]
    gate = threading.Event()
    window.search_service.pool.start(_Task(lambda: gate.wait(10)))  # the search thread is busy
    try:
        window.search_bar.field.setFocus()
        qtbot.keyClick(window.search_bar.field, Qt.Key.Key_Down)
        qtbot.wait_until(lambda: window.preview.hit is window.current_hit(), timeout=5000)
        shown = [window.page.related.item(i).text() for i in range(window.page.related.count())]
        assert shown != before and not window.page.related_notes
        assert len(shown) == 1 and shown[0].startswith("Finding related notes"), shown
    finally:
        gate.set()
    qtbot.wait_until(lambda: bool(window.page.related_notes), timeout=10000)
    assert not window.page.related.item(0).text().startswith("Finding")


def test_breakdown_shows_the_numbers_of_kenning_search_explain(qtbot, window, indexed_store, capsys):
    from kenning.cli.main import main as cli

    result = search(qtbot, window, "event loop coroutines")
    window.select_row(0)
    hit = window.current_hit()
    qtbot.wait_until(lambda: window.breakdown.breakdown is hit.breakdown, timeout=2000)
    assert (
        cli(["--store", str(indexed_store), "search", "-n", "20", "--json", "--explain", "event loop coroutines"]) == 0
    )
    rows = json_hits(capsys.readouterr().out)
    first = rows[0]
    assert first["chunk_id"] == hit.chunk_id == result.hits[0].chunk_id
    b = first["breakdown"]
    view = window.breakdown
    assert view.value_of("final") == f"{b['final']:.4f}"
    assert view.value_of("base") == f"{b['base']:.4f}"
    assert view.value_of("proximity") == f"+{b['proximity']:.5f}"
    assert view.value_of("cosine") == f"{b['cosine']:.4f}"
    assert view.value_of("recency") == f"+{b['recency_bonus']:.4f}"
    assert view.value_of("git") == f"+{b['git_bonus']:.4f}"
    assert view.value_of("penalty") == f"×{b['penalty']:.2f}"
    assert set(b["lists"]) == set(hit.breakdown.lists) >= {"porter", "vector"}
    for name, s in b["lists"].items():
        assert view.value_of(name) == f"+{s['contribution']:.5f}"
    # The bars stack up to the base exactly: the picture is the formula.
    parts = [r for r in view.rows if r.key in (*b["lists"], "proximity")]
    assert abs(parts[-1].end - hit.breakdown.base) < 1e-9


def test_fuzzy_layer_and_did_you_mean_show(qtbot, window):
    result = search(qtbot, window, "borow", mode="lexical")
    assert result.layer == FUZZY
    assert window.banner.isVisible()
    assert "No exact matches" in window.banner.text() and "borow → borrow" in window.banner.text()
    assert "layer" not in window.banner.text(), "no internal names in what the user reads"
    assert window.model.hits and window.model.hits[0].breakdown.layer == FUZZY

    result = search(qtbot, window, "checkpoints borow", mode="hybrid")
    assert result.suggestion == "checkpoints borrow"
    assert window.suggestion.isVisible() and "checkpoints borrow" in window.suggestion.text()
    with qtbot.wait_signal(window.search_service.results, timeout=10000):
        window.suggestion.linkActivated.emit("suggest")  # clicking the suggestion searches it
    assert window.search_bar.text == "checkpoints borrow"


def test_a_quoted_phrase_nothing_contains_shows_results_for_its_words(qtbot, window):
    from kenning.gui.results import row_tag

    with qtbot.wait_signal(window.search_service.results, timeout=10000):
        qtbot.keyClicks(window.search_bar.field, '"zebra borrow checker"')
    assert window.banner.isVisible()
    assert window.banner.text() == 'No note contains "zebra borrow checker"; showing results for its words'
    assert window.model.hits[0].path == "rust/borrowing.md"
    window.search_bar.field.clear()
    with qtbot.wait_signal(window.search_service.results, timeout=10000):
        qtbot.keyClicks(window.search_bar.field, '"borrow checker" reference loop')
    hits = window.model.hits
    assert window.banner.text().startswith('Only 1 result contains "borrow checker"')
    assert hits[0].path == "rust/borrowing.md" and "python/asyncio.md" in [h.path for h in hits]
    assert row_tag(hits[0]) == "" and hits[1:] and all(row_tag(h) == "lacks the phrase" for h in hits[1:])


def test_filter_chips_render_and_remove(qtbot, window):
    search(qtbot, window, "loop ext:md source:notes")
    chips = [
        w.text()
        for w in window.search_bar.findChildren(type(window.search_bar.modes.button(0)))
        if w.objectName() == "chip"
    ]
    assert chips == ["ext: md  ✕", "source: notes  ✕"]
    assert all(h.path.endswith(".md") for h in window.model.hits)
    chip = next(
        w for w in window.search_bar.findChildren(type(window.search_bar.modes.button(0))) if w.text().startswith("ext")
    )
    with qtbot.wait_signal(window.search_service.results, timeout=10000):
        chip.click()
    assert window.search_bar.text == "loop source:notes"


def test_keyboard_focus_move_and_escape(qtbot, window):
    window.activateWindow()
    search(qtbot, window, "the")
    assert window.model.rowCount() >= 2
    qtbot.keyClick(window.search_bar.field, Qt.Key.Key_Down)
    assert window.list.currentIndex().row() == 1
    qtbot.keyClick(window.search_bar.field, Qt.Key.Key_Up)
    assert window.list.currentIndex().row() == 0
    window.list.setFocus()
    qtbot.keyClick(window, Qt.Key.Key_K, Qt.KeyboardModifier.ControlModifier)
    assert window.search_bar.field.hasFocus()
    qtbot.keyClick(window.search_bar.field, Qt.Key.Key_Escape)
    assert window.search_bar.text == "" and window.model.rowCount() == 0


def test_layout_persists(qtbot, indexed_store, window_factory):
    make_window = window_factory
    first = make_window(indexed_store)
    first.resize(760, 540)  # within the offscreen screen (800×600): restored as it was
    first.show()
    first.page.main_split.setSizes([150, 260, 340])
    first.search_bar.set_mode("lexical")
    sizes = first.page.main_split.sizes()
    first.close()
    second = make_window(indexed_store)
    second.show()
    assert second.search_bar.mode == "lexical"
    assert second.page.main_split.sizes() == sizes
    second.shutdown()


def test_first_run_shows_the_welcome_state(qtbot, empty_window):
    qtbot.wait_until(lambda: empty_window.has_sources is False, timeout=5000)
    assert empty_window.stack.currentIndex() == PAGE_WELCOME
    assert empty_window.welcome.add_button.isVisible() and empty_window.welcome.link_button.isVisible()


def test_the_vectors_are_read_before_the_first_meaning_search(qtbot, window):
    """Once the model is ready the scan's copy of the vectors is read on the search thread,
    so the first meaning search does not wait for it (0.6 s at a million chunks)."""
    engine = window.search_service.engine
    scan = window.search_service.workspace.store.vector_scan(engine.vectors.fingerprint)
    qtbot.wait_until(lambda: scan.memory_bytes > 0, timeout=10000)
    assert scan.rows_held == engine.store.vectors.count(engine.vectors.fingerprint)


def test_the_keyword_and_hybrid_engines_share_what_they_know_of_the_words(qtbot, window):
    service = window.search_service
    assert service.engine.vocabulary is service.lexical.vocabulary
    assert service.engine.term_stats is service.lexical.term_stats


def test_quotes_in_a_long_question_are_quotation_and_each_hit_says_whether_it_holds_them(
    qtbot, window_factory, tmp_path
):
    """#28 item 0/8: typed into the app, a question of more than PROSE_WORDS words ranks its
    quoted word as a word; the banner says so, rows lacking it are tagged, and the clicked
    hit's breakdown says whether it holds the quoted words."""
    from conftest import index_notes, wait_for_model
    from kenning.gui.results import row_tag
    from test_phrase_quotation import BANNER, NOTES, QUESTION

    window = window_factory(index_notes(tmp_path, NOTES))
    wait_for_model(qtbot, window)
    window.show()
    with qtbot.wait_signal(window.search_service.results, timeout=10000):
        qtbot.keyClicks(window.search_bar.field, QUESTION)
    assert window.banner.isVisible() and window.banner.text() == BANNER
    hits = window.model.hits
    tags = {h.path: row_tag(h) for h in hits}
    assert tags["interface.md"] == tags["online.md"] == "lacks the phrase"
    assert tags.get("memory.md", "") == ""
    row = next(i for i, h in enumerate(hits) if h.path == "interface.md")
    rect = window.list.visualRect(window.list.model().index(row, 0))
    qtbot.mouseClick(window.list.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    qtbot.wait_until(lambda: window.current_hit() is not None and window.current_hit().path == "interface.md")
    qtbot.wait_until(lambda: window.breakdown.breakdown is window.current_hit().breakdown, timeout=2000)
    note = next(r for r in window.breakdown.rows if r.key == "phrases")
    assert note.label == "Lacks the quoted words (in a question of over 20 words quotes are not required)"


def test_every_row_tag_fits_under_the_score(qtbot, window):
    """The tag under a row's score is cut on the left when too wide: "without the quoted
    phrase" was drawn as "the quoted phrase", the opposite of what it means."""
    from PySide6.QtGui import QFontMetrics

    from kenning.core.types import LACKS_PHRASES_LABEL, MEANING_ONLY_LABEL
    from kenning.gui.results import TAG_W, tag_font

    metrics = QFontMetrics(tag_font(window.list.font()))
    for tag in (LACKS_PHRASES_LABEL, MEANING_ONLY_LABEL, "fuzzy"):
        assert metrics.horizontalAdvance(tag) <= TAG_W, tag
