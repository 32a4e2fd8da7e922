"""Sources panel and the indexing worker, driven through the real window."""

from __future__ import annotations

from tests_gui_helpers import write_many  # tests/gui is on sys.path (pytest rootdir conftest)

from kenning.gui.main_window import PAGE_SEARCH, PAGE_SOURCES, PAGE_WELCOME
from kenning.storage import open_store
from kenning.storage.stats import source_stats


def test_adding_a_folder_indexes_it_with_progress_and_results_appear(qtbot, empty_window, tmp_path):
    from tests_gui_helpers import write_notes

    w = empty_window
    qtbot.wait_until(lambda: w.stack.currentIndex() == PAGE_WELCOME, timeout=5000)
    notes = write_notes(tmp_path / "kb")
    phases = []
    w.indexer.progress.connect(lambda p: phases.append(p.phase))
    with qtbot.wait_signal(w.indexer.finished, timeout=30000) as finished:
        with qtbot.wait_signal(w.sources_panel.source_added, timeout=10000) as added:
            w.sources_panel.add_folder(str(notes))  # stored on a worker: the window never waits
        source = added.args[0]
        assert source.name == "kb"
        qtbot.wait_until(lambda: w.index_status.isVisible(), timeout=5000)
    run, error = finished.args
    assert error == "" and not run.cancelled
    assert run.reports[0].added == 4
    assert "text" in phases and "embeddings" in phases
    assert not w.index_status.isVisible()
    qtbot.wait_until(lambda: w.stack.currentIndex() == PAGE_SEARCH, timeout=5000)
    with qtbot.wait_signal(w.search_service.results, timeout=10000):
        w.search_bar.set_text("write-ahead logging")
    assert w.model.hits[0].path == "sqlite-wal.md"
    qtbot.wait_until(lambda: bool(w.sources_panel.stats), timeout=5000)
    stats = w.sources_panel.stats[source.id]
    assert (stats.documents, stats.pending_vectors) == (4, 0)


def test_cancel_stops_indexing_and_the_next_run_resumes(qtbot, empty_window, tmp_path):
    w = empty_window
    folder = write_many(tmp_path / "many", 1500)
    seen = []
    w.indexer.progress.connect(seen.append)
    with qtbot.wait_signal(w.indexer.finished, timeout=60000) as finished:
        w.sources_panel.add_folder(str(folder))
        qtbot.wait_until(lambda: any(p.phase == "text" and p.done > 20 for p in seen), timeout=20000)
        w.index_status.cancel.click()
        assert w.index_status.label.text() == "Cancelling…"
    run, error = finished.args
    assert error == "" and run.cancelled
    store = open_store(w.store_path)
    try:
        done = sum(s.documents for s in source_stats(store).values())
        assert 0 < done < 1500, "cancel stopped the run part way, keeping what was committed"
        with qtbot.wait_signal(w.indexer.finished, timeout=120000) as again:
            w.indexer.start(None)
        assert not again.args[0].cancelled
        assert sum(s.documents for s in source_stats(store).values()) == 1500
        assert again.args[0].reports[0].unchanged >= done - 50  # resumed, not redone
    finally:
        store.close()


def test_sources_panel_lists_counts_and_manages_a_source(qtbot, window, tmp_path):
    w = window
    w.show_page(PAGE_SOURCES)
    qtbot.wait_until(lambda: w.sources_panel.table.rowCount() == 1, timeout=5000)
    panel = w.sources_panel
    assert panel.table.item(0, 0).text() == "notes"
    assert panel.table.item(0, 3).text() == "4"  # documents
    assert panel.table.item(0, 5).text() == "0"  # vectors pending
    assert "4 documents" in panel.detail_info.text()
    panel.exclude_edit.setText("rust/")
    with qtbot.wait_signal(w.indexer.finished, timeout=30000):
        panel.save_globs.click()
    qtbot.wait_until(lambda: panel.table.item(0, 3).text() == "3", timeout=5000)
    panel.enabled_box.setChecked(False)
    qtbot.wait_until(lambda: "(disabled)" in panel.table.item(0, 0).text(), timeout=5000)
    assert panel.remove_selected()
    qtbot.wait_until(lambda: panel.table.rowCount() == 0, timeout=5000)


def test_linking_a_non_repo_says_so_and_a_repo_shows_branch(qtbot, window, tmp_path):
    import subprocess

    panel = window.sources_panel
    plain = tmp_path / "plain"
    plain.mkdir()
    panel.link_repo(str(plain))  # git runs on a worker; the answer comes back as a message
    qtbot.wait_until(lambda: bool(window.told), timeout=10000)
    assert "Not a git repository" in window.told[-1][0]
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "README.md").write_text("# Demo repo\n\nHello.\n")
    env = {
        "GIT_AUTHOR_NAME": "A",
        "GIT_AUTHOR_EMAIL": "a@x",
        "GIT_COMMITTER_NAME": "A",
        "GIT_COMMITTER_EMAIL": "a@x",
        "PATH": "/usr/bin:/bin",
    }
    for cmd in (["git", "init", "-q", "-b", "main"], ["git", "add", "."], ["git", "commit", "-qm", "first commit"]):
        subprocess.run(cmd, cwd=repo, check=True, env=env)
    asked = []
    panel.ask = lambda title, text, **_: asked.append(text) or True
    with (
        qtbot.wait_signal(window.indexer.finished, timeout=30000),
        qtbot.wait_signal(panel.source_added, timeout=10000) as added,
    ):
        panel.link_repo(str(repo))
    assert added.args[0].kind == "git"
    assert "branch main" in asked[0] and "first commit" in asked[0]
