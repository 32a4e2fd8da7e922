"""#14 feature 10: "Related notes" — the selected hit's nearest other files by meaning, with cosines."""

from __future__ import annotations

from kenning.embedding import FakeEmbedder
from kenning.search.related import related_notes
from kenning.search.vector import VectorIndex
from kenning_testing import chunk_ids, index_folder, write_files


def test_related_notes_are_other_files_best_cosine_first(store, notes):
    embedder = FakeEmbedder()
    write_files(
        notes,
        {
            "a.md": "# Sourdough\n\nsourdough starter flour water levain\n\n## More\n\nsourdough bread crust\n",
            "b.md": "# Bread\n\nsourdough starter flour water bake\n",
            "c.md": "# Taxes\n\nincome tax return deadline form\n",
        },
    )
    index_folder(store, notes, embedder)
    index = VectorIndex(store, embedder.fingerprint)
    chunk = chunk_ids(store, "a.md")[0]
    related = related_notes(store, index, chunk, limit=5)
    paths = [n.path for n in related]
    assert "a.md" not in paths  # its own file is "more in this file", not related
    assert paths[0] == "b.md" and set(paths) == {"b.md", "c.md"}
    assert related[0].cosine > related[1].cosine and all(-1.0 <= n.cosine <= 1.0001 for n in related)


def test_window_lists_related_notes_for_the_selected_result(qtbot, window):
    window.search_bar.set_mode("hybrid")
    with qtbot.wait_signal(window.search_service.related, timeout=10000):
        window.search_bar.set_text("borrow checker")
    qtbot.wait_until(lambda: bool(window.page.related_notes), timeout=5000)
    notes = window.page.related_notes
    assert all(n.path != window.current_hit().path for n in notes)
    assert [n.cosine for n in notes] == sorted((n.cosine for n in notes), reverse=True)
    assert window.page.related.count() == len(notes)
    assert f"{notes[0].cosine:.2f}" in window.page.related.item(0).text()
