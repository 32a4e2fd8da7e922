"""Bugs 1-2 of #14: result rows and the preview mark what matched, from spans.

Real notes with [[wiki links]] and Python's Callable[[Store], None] must come out as
written; corrected (fuzzy) and substring hits must be highlighted in the preview.
"""

from __future__ import annotations

import pytest

from kenning.search.fusion import DEFAULT_FUSION

FUZZY = f"{DEFAULT_FUSION}-fuzzy"  # the layer of a search found only by correcting its words

FILES = {
    "vault/links.md": "# Vault links\n\nSee [[wiki links]] and [[Other note]] for the store layout.\n"
    "The callback type is Callable[[Store], None] and a[[0]] is the first store.\n",
    "ops/rollback.md": "# Deploys\n\nA rollback restores the previous release when a deploy fails.\n",
    "net/limits.py": "class RateLimiter:\n    def acquire(self):\n        return True\n",
}


@pytest.fixture
def hl_window(qtbot, tmp_path):
    from conftest import index_notes, make_window, wait_for_model

    store_path = index_notes(tmp_path, FILES)
    w = make_window(qtbot, store_path)
    wait_for_model(qtbot, w)
    w.show()
    yield w
    w.shutdown()


def search(qtbot, window, text, mode="lexical"):
    window.search_bar.set_mode(mode)
    with qtbot.wait_signal(window.search_service.results, timeout=10000):
        window.search_bar.set_text(text)
    qtbot.wait_until(lambda: window.preview.hit is window.current_hit(), timeout=3000)
    return window.result


def preview_marks(window):
    text = window.preview.editor.toPlainText()
    return [text[s:e] for s, e in window.preview.matches]


def test_brackets_in_notes_are_shown_as_written(qtbot, hl_window):
    result = search(qtbot, hl_window, "store")
    hit = result.hits[0]
    assert hit.path == "vault/links.md"
    assert "[[Other note]]" in hit.snippet
    assert "Callable[[Store], None]" in hit.snippet and "a[[0]]" in hit.snippet
    assert {hit.snippet[s:e].lower() for s, e in hit.spans} == {"store"}


def test_wiki_link_words_are_highlighted_not_swallowed(qtbot, hl_window):
    hit = search(qtbot, hl_window, "wiki").hits[0]
    assert [hit.snippet[s:e] for s, e in hit.spans] == ["wiki"]
    assert "[[wiki links]]" in hit.snippet


def test_preview_highlights_the_corrected_word(qtbot, hl_window):
    result = search(qtbot, hl_window, "rolback")
    assert result.layer == FUZZY and result.hits[0].path == "ops/rollback.md"
    assert preview_marks(hl_window) == ["rollback"]
    assert hl_window.preview.position.text() != "no matches in file"


def test_preview_highlights_substring_hits(qtbot, hl_window):
    result = search(qtbot, hl_window, "ratelimi")
    assert result.hits and result.hits[0].path == "net/limits.py"
    assert preview_marks(hl_window) == ["RateLimi"]
    hit = result.hits[0]
    assert [hit.snippet[s:e] for s, e in hit.spans] == ["RateLimi"]
