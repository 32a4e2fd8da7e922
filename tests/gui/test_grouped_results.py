"""#14 feature 8: one row per file with "n more in this file", expandable, totals, sort."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from kenning.gui import grouping

LONG = "# Deploys\n\n" + "\n\n".join(f"## Step {i}\n\nThe rollback of step {i} restores the release." for i in range(6))
FILES = {
    "deploy.md": LONG,
    "incident.md": "# Incident\n\nWe ran a rollback after the outage.\n",
    "zeta/notes.md": "# Zeta\n\nrollback drills every quarter\n",
}


@pytest.fixture
def grouped_window(qtbot, tmp_path):

    from conftest import index_notes, make_window

    store_path = index_notes(tmp_path, FILES)
    w = make_window(qtbot, store_path)
    w.show()
    w.search_bar.set_mode("lexical")
    with qtbot.wait_signals([w.search_service.results, w.search_service.totals], timeout=10000):
        w.search_bar.set_text("rollback")
    yield w
    w.shutdown()


def _type_query(qtbot, w, mode: str, text: str) -> None:
    """Types text into the search field in this mode and waits for its hits and totals."""
    w.search_bar.set_mode(mode)
    w.search_bar.field.setFocus()
    with qtbot.wait_signals([w.search_service.results, w.search_service.totals], timeout=10000):
        qtbot.keyClicks(w.search_bar.field, text)


def test_one_row_per_file_with_n_more_and_true_totals(grouped_window):
    w = grouped_window
    hits = w.result.hits
    per_file = {}
    for h in hits:
        per_file[h.path] = per_file.get(h.path, 0) + 1
    assert per_file["deploy.md"] > 1
    assert [r.hit.path for r in w.model.rows] == list(dict.fromkeys(h.path for h in hits))  # one row per file
    lead = next(r for r in w.model.rows if r.hit.path == "deploy.md")
    assert lead.more == per_file["deploy.md"] - 1
    assert w.summary.text().startswith(f"{len(hits)} matches in {len(per_file)} files")


def test_a_file_expands_and_collapses(qtbot, grouped_window):
    w = grouped_window
    row = next(i for i, r in enumerate(w.model.rows) if r.hit.path == "deploy.md")
    w.select_row(row)
    qtbot.keyClick(w, Qt.Key.Key_E, Qt.KeyboardModifier.ControlModifier)
    children = [r for r in w.model.rows if r.child]
    assert children and all(r.hit.path == "deploy.md" for r in children)
    assert w.current_hit().path == "deploy.md"
    w.page.toggle_group()
    assert not any(r.child for r in w.model.rows)


def test_sort_by_path_and_date(grouped_window):
    w = grouped_window
    w.page.sort.setCurrentIndex(w.page.sort.findData("path"))
    assert [r.hit.path for r in w.model.rows] == sorted(r.hit.path for r in w.model.rows)
    w.page.sort.setCurrentIndex(w.page.sort.findData("date"))
    recency = [max(h.breakdown.recency for h in w.result.hits if h.path == r.hit.path) for r in w.model.rows]
    assert recency == sorted(recency, reverse=True)


def test_summary_counts_agree_with_nouns():
    from kenning.core.types import MatchTotal, SearchResult

    class H:
        def __init__(self, path):
            self.source, self.path = "notes", path

    assert grouping.summary(SearchResult("q", [H("a")])) == "1 result in 1 file"  # until the total is counted
    assert grouping.summary(SearchResult("q", [H("a"), H("a"), H("b")])) == "3 results in 2 files"
    counted = SearchResult("q", [H("a"), H("a"), H("b")], total=MatchTotal(3, 2))
    assert grouping.summary(counted) == "3 matches in 2 files"
    assert grouping.summary(SearchResult("q", [H("a")], total=MatchTotal(1, 1))) == "1 match in 1 file"
    assert (
        grouping.summary(SearchResult("q", [H("a")], total=MatchTotal(143, 37)))
        == "143 matches in 37 files (best 1 file shown)"
    )
    # Meaning-only: the count is of chunks over the cosine floor, the list holds the nearest
    # files whatever their cosine (seen under Xvfb: "5 matches … in 4 files" over 20 rows).
    nearest = SearchResult("q", [H(p) for p in "abcdef"], total=MatchTotal(2, 2, floor=0.3))
    assert grouping.summary(nearest) == "2 matches by meaning (cosine ≥ 0.30) in 2 files (nearest 6 files shown)"


MANY = {f"ops/run-{i:02}.md": f"# Run {i}\n\nrollback number {i}\n\n## After\n\nthe rollback held\n" for i in range(30)}


@pytest.mark.parametrize("mode", ["lexical", "hybrid"])
def test_the_summary_gives_the_true_total_not_the_rows_shown(qtbot, tmp_path, mode):
    from conftest import index_notes, make_window, wait_for_model

    w = make_window(qtbot, index_notes(tmp_path, MANY))
    wait_for_model(qtbot, w)
    w.show()
    try:
        w.search_bar.set_mode(mode)
        on_results: list[str] = []  # the summary as the hits arrive (the window's own slot ran first)
        w.search_service.results.connect(lambda *_: on_results.append(w.summary.text()))
        with qtbot.wait_signals([w.search_service.results, w.search_service.totals], timeout=10000):
            w.search_bar.set_text("rollback")
        shown = len(w.model.rows)  # files: "Results shown" counts them
        chunks = sum(1 + r.more for r in w.model.rows)
        assert on_results[-1].startswith(f"{chunks} results in {shown} files")  # the hits never wait for the count
        assert shown == w.settings.limit < 30
        assert w.summary.text().startswith(f"60 matches in 30 files (best {shown} files shown) ·")
    finally:
        w.shutdown()


def test_meaning_only_mode_says_what_its_count_means(qtbot, tmp_path):
    from conftest import index_notes, make_window, wait_for_model

    w = make_window(qtbot, index_notes(tmp_path, MANY))
    wait_for_model(qtbot, w)
    w.show()
    try:
        w.search_bar.set_mode("vector")
        with qtbot.wait_signals([w.search_service.results, w.search_service.totals], timeout=10000):
            w.search_bar.set_text("rollback")
        assert "matches by meaning (cosine ≥ 0.30) in " in w.summary.text()
    finally:
        w.shutdown()


BIG = "\n\n".join(f"## Part {i}\n\nThe progressbar progressbar widget draws the progressbar." for i in range(10))
MANY_FILES = {
    **{f"big{n}.py.md": f"# Big {n}\n\n{BIG}\n" for n in range(3)},
    **{
        f"small/s{n:02d}.md": f"# Small {n}\n\nOne progressbar here, among other words about note {n}.\n"
        for n in range(12)
    },
}


def test_grouped_results_list_up_to_the_limit_in_files_not_chunks(qtbot, tmp_path):
    """#25 item 6: 15 files match, 3 of them with many chunks: all 15 files are listed
    (the limit counts files), not the 3 whose chunks filled the first 20 places."""
    from conftest import index_notes, make_window

    w = make_window(qtbot, index_notes(tmp_path, MANY_FILES))
    w.show()
    try:
        _type_query(qtbot, w, "lexical", "progressbar")
        assert w.settings.limit == 20
        files = {r.hit.path for r in w.model.rows}
        assert len(files) == 15 == len(w.model.rows), "every matching file has its row"
        big = next(r for r in w.model.rows if r.hit.path == "big0.py.md")
        assert big.more >= 9, "a file's other matches are still there, under its row"
        assert "in 15 files" in w.summary.text() and "(best" not in w.summary.text()
    finally:
        w.shutdown()


def test_the_summary_counts_files_shown_when_more_files_match_than_are_listed(qtbot, tmp_path):
    from dataclasses import replace

    from conftest import index_notes, make_window

    w = make_window(qtbot, index_notes(tmp_path, MANY_FILES))
    w.settings = replace(w.settings, limit=8)
    w.show()
    try:
        _type_query(qtbot, w, "lexical", "progressbar")
        assert len(w.model.rows) == 8
        assert "in 15 files (best 8 files shown)" in w.summary.text(), w.summary.text()
    finally:
        w.shutdown()


def test_the_summary_counts_what_the_query_words_match(qtbot, tmp_path):
    """#28 item 6: a word of one note lists that note and says "1 match in 1 file": the
    feedback words its other words bring ("notes", "sprint") find no hit and no match."""
    import realistic_workspace as rw
    from conftest import index_notes, make_window, wait_for_model

    w = make_window(qtbot, index_notes(tmp_path, rw.NOTES))
    wait_for_model(qtbot, w)
    w.show()
    try:
        _type_query(qtbot, w, "hybrid", "wibblequark")
        assert [r.hit.path for r in w.model.rows] == ["inbox.md"]
        assert w.summary.text().startswith("1 match in 1 file")
    finally:
        w.shutdown()
