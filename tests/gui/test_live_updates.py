"""#14 bug 3: with the window open (and focused), a saved file shows up in search within 2 s."""

from __future__ import annotations

from conftest import make_window
from kenning.search.fusion import DEFAULT_FUSION


def test_saved_file_reaches_the_open_window(qtbot, indexed_store, tmp_path):
    window = make_window(qtbot, indexed_store, watch=True)
    window.show()
    try:
        with qtbot.wait_signal(window.watcher.ready, timeout=20000):
            pass  # the watching process is up and its watches are in place
        window.search_bar.set_mode("lexical")
        with qtbot.wait_signal(window.search_service.results, timeout=10000):
            window.search_bar.set_text("capybara")
        assert not window.model.hits or window.result.layer != DEFAULT_FUSION
        (tmp_path / "notes" / "python" / "asyncio.md").write_text(
            "# Asyncio event loop\n\nA capybara sits on the event loop.\n", encoding="utf-8"
        )
        qtbot.wait_until(
            lambda: (
                window.result is not None
                and window.result.layer == DEFAULT_FUSION
                and [h.path for h in window.model.hits] == ["python/asyncio.md"]
            ),
            timeout=10000,  # the 2-second promise is measured by tests/benchmarks/bench_watch.py
        )
        assert "1 file changed" in window.message.text()
        assert window.watch_note.isVisible()
    finally:
        window.shutdown()


def test_with_the_app_serving_a_saved_file_reaches_the_window_and_the_served_cli(
    qtbot, indexed_store, tmp_path, monkeypatch
):
    """The window and its service search through one Searcher: what the window's watcher
    indexes shows in both, the window's list and `kenning search` through the app."""
    from kenning.cli.serving import handlers_for
    from kenning.gui.service_host import ServiceHost
    from kenning.serve import client

    monkeypatch.delenv("KENNING_HOME")  # the service's own environment: the app's
    window = make_window(qtbot, indexed_store, watch=True)
    window.show()
    host = ServiceHost.for_window(window, handlers_for).start()

    def served(query: str) -> str:
        request = client.request_for(["search", "--mode", "lexical", query], str(indexed_store), {}, (False, False))
        answer = client.ask(str(indexed_store), request)
        assert answer["ok"] is True, answer
        return "".join(text for _, text in answer["output"])

    try:
        with qtbot.wait_signal(window.watcher.ready, timeout=20000):
            pass
        window.search_bar.set_mode("lexical")
        with qtbot.wait_signal(window.search_service.results, timeout=10000):
            window.search_bar.set_text("capybara")
        assert "python/asyncio.md" not in served("capybara")
        (tmp_path / "notes" / "python" / "asyncio.md").write_text(
            "# Asyncio event loop\n\nA capybara sits on the event loop.\n", encoding="utf-8"
        )
        qtbot.wait_until(lambda: [h.path for h in window.model.hits] == ["python/asyncio.md"], timeout=10000)
        assert "python/asyncio.md" in served("capybara")
    finally:
        host.stop()
        window.shutdown()
