"""#25 item 11: related notes are notes, not test files, and the notes that link to a note
(or that it links to) come first, beside the nearest by meaning."""

from __future__ import annotations

import pytest

from conftest import index_notes, make_window, wait_for_model

VAULT = {
    "Deploy checklist.md": "# Deploy checklist\n\nTag the release, run the migrations, watch the error rate.\n",
    "Friday notes.md": "# Friday notes\n\nLunch was good. See [[Deploy checklist]] before the next one.\n",
    "Runbook.md": "# Runbook\n\nWhen paged, open the dashboards. The steps: [[Deploy checklist]].\n",
    "Release process.md": "# Release process\n\nTag the release, run the migrations, watch the error rate closely.\n",
    "tests/test_deploy.py": "def test_deploy_checklist():\n    # Tag the release, run the migrations, watch the error rate.\n"
    "    assert True\n",
    "CHANGES.md": "# Changes\n\n## 1.2\n\nTag the release; run the migrations; watch the error rate.\n",
}


@pytest.fixture
def vault_window(qtbot, tmp_path):
    w = make_window(qtbot, index_notes(tmp_path, VAULT))
    wait_for_model(qtbot, w)
    w.show()
    yield w
    w.shutdown()


def related_of(qtbot, w, query):
    w.search_bar.set_mode("lexical")
    field = w.search_bar.field
    field.setFocus()
    with qtbot.wait_signal(w.search_service.results, timeout=10000):
        qtbot.keyClicks(field, query)
    qtbot.wait_until(lambda: bool(w.page.related_notes), timeout=10000)
    return w.page.related_notes


def test_related_notes_leave_test_files_out(qtbot, vault_window):
    notes = related_of(qtbot, vault_window, "deploy checklist")
    assert vault_window.current_hit().path == "Deploy checklist.md"
    assert "tests/test_deploy.py" not in [n.path for n in notes]


def test_the_notes_linking_to_a_note_come_first_and_say_so(qtbot, vault_window):
    notes = related_of(qtbot, vault_window, "deploy checklist")
    paths = [n.path for n in notes]
    assert set(paths[:2]) == {"Friday notes.md", "Runbook.md"}, paths
    assert all(n.link == "links here" for n in notes[:2])
    texts = [vault_window.page.related.item(i).text() for i in range(2)]
    assert all("links here" in t for t in texts), texts
    assert "Release process.md" in paths[2:], "the nearest by meaning follow"


def test_a_note_it_links_to_is_listed_as_linked_from_here(qtbot, vault_window):
    notes = related_of(qtbot, vault_window, "friday lunch")
    assert vault_window.current_hit().path == "Friday notes.md"
    assert notes[0].path == "Deploy checklist.md" and notes[0].link == "linked from here"
