"""#14 feature 10: a tag pane listing every tag (front matter and inline #tags) with counts; click filters."""

from __future__ import annotations

import pytest

from kenning.gui.tag_pane import toggle_tag_filter

FILES = {
    "a.md": "---\ntitle: Alpha\ntags: [ops, deploy]\n---\n# Alpha\n\nRelease steps.\n",
    "b.md": "---\ntags: [ops]\n---\n# Beta\n\nOn-call rota for #incident response.\n",
    "c.md": "# Gamma\n\nPlain note without tags about releases.\n",
}


@pytest.fixture
def tag_window(qtbot, tmp_path):

    from conftest import index_notes, make_window

    store_path = index_notes(tmp_path, FILES)
    w = make_window(qtbot, store_path)
    w.show()
    qtbot.wait_until(lambda: bool(w.page.tag_pane.counts), timeout=10000)
    yield w
    w.shutdown()


def test_every_tag_with_its_count_most_used_first(tag_window):
    pane = tag_window.page.tag_pane
    assert pane.tags() == [("ops", 2), ("deploy", 1), ("incident", 1)]
    assert pane.list.item(0).text().startswith("#ops") and pane.list.item(0).text().endswith("2")
    pane.filter.setText("dep")
    assert pane.tags() == [("deploy", 1)] and pane.list.count() == 1


def test_clicking_a_tag_filters_the_search_and_again_drops_it(qtbot, tag_window):
    w = tag_window
    pane = w.page.tag_pane
    w.search_bar.set_mode("lexical")
    with qtbot.wait_signal(w.search_service.results, timeout=10000):
        pane.list.itemClicked.emit(pane.list.item(0))  # #ops
    assert w.search_bar.text == "tag:ops"
    assert sorted(h.path for h in w.result.hits) == ["a.md", "b.md"]
    with qtbot.wait_signal(w.search_service.results, timeout=10000):
        w.search_bar.set_text("release tag:ops")
    assert [h.path for h in w.result.hits] == ["a.md"]
    assert toggle_tag_filter("release tag:ops", "ops") == "release"


def test_no_tags_shows_an_empty_state(qtbot, window):
    pane = window.page.tag_pane
    qtbot.wait_until(lambda: window.has_sources is not None, timeout=5000)
    assert pane.list.count() == 0 and not pane.empty.isHidden()
