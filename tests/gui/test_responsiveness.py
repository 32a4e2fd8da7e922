"""#14 bug 4: lexical results at once while the model loads; a slow search says so."""

from __future__ import annotations

import threading

from kenning.embedding import FakeEmbedder
from kenning.gui.main_window import SEARCHING_NOTICE_MS
from kenning.gui.workers import background_threads


class SlowModel:
    """A model that takes its time to load, as the real one does (1.6-2.9 s measured)."""

    release = threading.Event()

    def __call__(self):
        self.release.wait(10)
        return FakeEmbedder()


def test_lexical_results_at_once_while_the_model_loads(qtbot, indexed_store):
    from kenning.gui.main_window import MainWindow

    loader = SlowModel()
    loader.release.clear()
    window = MainWindow(indexed_store, embedder_factory=loader, auto_index=False)
    qtbot.addWidget(window)
    window.show()
    try:
        with qtbot.wait_signal(window.search_service.results, timeout=5000) as answered:
            window.search_bar.set_text("borrow checker")
        assert not loader.release.is_set() and answered.args[1].mode == "lexical"  # before the model was there
        assert window.model.hits[0].path == "rust/borrowing.md"
        assert "loading" in window.message.text()  # the window says semantic is not there yet
        with qtbot.wait_signal(window.search_service.results, timeout=10000):
            loader.release.set()  # model ready: the query runs again, hybrid
        assert "borrow" in window.result.query
        assert window.current_hit().breakdown.lists.get("vector") is not None
    finally:
        loader.release.set()
        window.shutdown()


def test_a_slow_search_shows_searching_after_150_ms(qtbot, window):
    engine = window.search_service.engine
    original = engine.search
    gate = threading.Event()

    def slow(text, options):
        gate.wait(5)
        return original(text, options)

    engine.search = slow
    window.search_bar.set_mode("hybrid")
    window.run_search("asyncio", "hybrid")
    # Quick answers never flash it: it waits for a timer of 150 ms, not shown before.
    assert window._searching_soon.isActive() and window._searching_soon.interval() == SEARCHING_NOTICE_MS == 150
    assert not window.page.searching.isVisible()
    qtbot.wait_until(lambda: window.page.searching.isVisible(), timeout=1000)
    with qtbot.wait_signal(window.search_service.results, timeout=5000):
        gate.set()
    assert not window.page.searching.isVisible()


def test_background_model_leaves_a_core_for_the_window():
    assert background_threads(2) == 1
    assert background_threads(8) == 7
    assert background_threads(1) == 1
