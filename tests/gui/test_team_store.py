"""The app connects to a team store through Sources → Connect to a team store… (#23 items 1, 5, 6, 9)."""

from __future__ import annotations

import tempfile
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication
from tests_gui_helpers import NOTES

from kenning.gui.results import fit_location, location
from kenning.gui.shortcuts import TEAM_STORE_LABEL
from kenning.gui.team_store import CHECK_SECONDS
from kenning.workspace import setup_logging
from kenning.workspace.teamstore import TEAM_STORE_STATE
from pgtesting import add_notes, start_server, stop_server

TEAM_NOTES = [
    ("Borrow checker in the team's style guide", "Our team's rules for the borrow checker and lifetimes."),
    ("Database failover runbook", "Promote the replica; the write-ahead log replays on the new primary."),
]


def _team(pg_server, pg_database, embedder_fingerprint=None):
    from kenning.storage.postgres import open_pg_store

    store = open_pg_store(pg_server.url(pg_database))
    add_notes(store, TEAM_NOTES, source="runbooks")
    store.close()
    for statement in (
        "DO $$ BEGIN IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'gui_reader') THEN"
        " CREATE ROLE gui_reader LOGIN PASSWORD 'pw-gui-secret-77'; END IF; END $$",
        "GRANT USAGE ON SCHEMA kenning TO gui_reader",
        "GRANT SELECT ON ALL TABLES IN SCHEMA kenning TO gui_reader",
    ):
        pg_server.admin(statement, database=pg_database)
    return pg_server.url(pg_database, user="gui_reader", password="pw-gui-secret-77")


def _open_the_dialog_from_the_menu(qtbot, window):
    """File → Connect to a team store…, clicked as a person would."""
    bar = window.menuBar()
    file_menu = next(a for a in bar.actions() if a.text().replace("&", "") == "File")
    qtbot.mouseClick(bar, Qt.MouseButton.LeftButton, pos=bar.actionGeometry(file_menu).center())
    menu = file_menu.menu()
    qtbot.wait_until(menu.isVisible, timeout=5000)
    entry = next(a for a in menu.actions() if a.text() == TEAM_STORE_LABEL)
    qtbot.mouseClick(menu, Qt.MouseButton.LeftButton, pos=menu.actionGeometry(entry).center())
    qtbot.wait_until(lambda: window.team_dialog is not None and window.team_dialog.isVisible(), timeout=5000)
    return window.team_dialog


def _connect_through_the_dialog(qtbot, window, url):
    """Type the URL into the dialog and press Enter (the Connect button is its default)."""
    dialog = _open_the_dialog_from_the_menu(qtbot, window)
    qtbot.keyClicks(dialog.target, url)
    qtbot.keyClick(dialog.target, Qt.Key.Key_Return)
    qtbot.wait_until(lambda: "Connected" in dialog.state.text(), timeout=20000)
    qtbot.wait_until(lambda: window.search_service.team_attached, timeout=10000)
    return dialog


def _search(qtbot, window, text):
    """Type a query into the search box; the rows' location lines as the list draws them."""
    with qtbot.wait_signal(window.search_service.results, timeout=10000):
        qtbot.keyClicks(window.search_bar.field, text)
    return [location(h) for h in window.model.hits]


def test_the_app_searches_both_stores_after_connecting_through_the_dialog(qtbot, window, pg_server, pg_database):
    log = setup_logging(verbose=True)  # debug records too: every line Kenning writes about the store
    url = _team(pg_server, pg_database)
    dialog = _connect_through_the_dialog(qtbot, window, url)
    assert "Connected" in dialog.state.text() and "never stores it" in dialog.state.text()
    assert dialog.state.text().startswith("Connected: Team store gui_reader@") and ", 1 source." in dialog.state.text()
    assert window.team_status.isVisible() and "Team store gui_reader@local socket/" in window.team_status.text()
    assert "updated" in window.team_status.text()
    qtbot.keyClick(dialog, Qt.Key.Key_Escape)
    qtbot.wait_until(lambda: not dialog.isVisible(), timeout=5000)
    qtbot.mouseClick(window.search_tab, Qt.MouseButton.LeftButton)
    rows = _search(qtbot, window, "borrow checker")
    assert any(row.startswith("[personal] ") and "rust/borrowing.md" in row for row in rows), rows
    assert f"[{pg_database}] runbooks · d0.md:1" in rows, rows  # the team's note, labelled with its store
    # The password was used, never kept: not in the personal store's state, not in the log.
    kept = window.workspace.load_state(TEAM_STORE_STATE)
    assert kept and "pw-gui-secret-77" not in kept and "gui_reader" in kept
    written = log.read_text(encoding="utf-8", errors="replace")
    assert "gui_reader@local socket" in written  # the log names the team store...
    assert "pw-gui-secret-77" not in written  # ...never with its password


def test_a_narrow_list_keeps_each_hit_s_store_label_before_its_source_name(qtbot, window, pg_server, pg_database):
    """In one list over two stores the label tells a team's note from one's own: a row too
    narrow for the whole location gives up the folders and the source's name first (at
    1280 px a team hit once read "0007-connection-pooling.md:1–4", its "[kb]" gone)."""
    url = _team(pg_server, pg_database)
    dialog = _connect_through_the_dialog(qtbot, window, url)
    qtbot.keyClick(dialog, Qt.Key.Key_Escape)
    qtbot.mouseClick(window.search_tab, Qt.MouseButton.LeftButton)
    _search(qtbot, window, "borrow checker")
    hits = window.model.hits
    assert {h.store_label for h in hits} == {"personal", pg_database}
    metrics = window.page.list.fontMetrics()
    for hit in hits:
        label = f"[{hit.store_label}] "
        name = hit.path.rpartition("/")[2]
        name_and_lines = name + location(hit).rpartition(name)[2]
        for width in range(40, metrics.horizontalAdvance(location(hit)) + 20, 5):
            shown = fit_location(hit, metrics, width)
            if metrics.horizontalAdvance(label + name_and_lines) <= width:
                assert shown.startswith(label), (width, shown)


def test_related_notes_over_both_stores_say_which_store_each_is_in(qtbot, window, pg_server, pg_database, tmp_path):
    """The related notes of a hit come from both stores, as the hits do: each line names its
    store beside its source, as the hit's location does."""
    from conftest import index_notes
    from kenning.storage.postgres import open_pg_store
    from pgtesting import copy_store

    team_files = {"runbooks/borrow-rules.md": "# Borrow checker rules\n\nThe team's rules for the borrow checker.\n"}
    team = open_pg_store(pg_server.url(pg_database))
    copy_store(index_notes(tmp_path / "team", team_files), team)  # the same fake model's vectors
    team.close()
    url = _team(pg_server, pg_database)
    dialog = _connect_through_the_dialog(qtbot, window, url)
    qtbot.keyClick(dialog, Qt.Key.Key_Escape)
    qtbot.mouseClick(window.search_tab, Qt.MouseButton.LeftButton)
    _search(qtbot, window, "borrow checker")
    page = window.page
    qtbot.wait_until(lambda: len(page.related_notes) >= 2, timeout=10000)
    lines = [page.related.item(row).text() for row in range(page.related.count())]
    assert any("  ·  [personal] notes:" in line for line in lines), lines
    assert any(f"  ·  [{pg_database}] " in line for line in lines), lines
    assert {n.store_label for n in page.related_notes} == {"personal", pg_database}


def test_a_new_commit_in_the_team_store_reaches_the_window(qtbot, window, pg_server, pg_database):
    from kenning.storage.postgres import open_pg_store

    url = _team(pg_server, pg_database)
    dialog = _connect_through_the_dialog(qtbot, window, url)
    assert " 2 chunks · " in window.team_status.text()
    qtbot.keyClick(dialog, Qt.Key.Key_Escape)
    qtbot.mouseClick(window.search_tab, Qt.MouseButton.LeftButton)
    assert _search(qtbot, window, "kestrel") == []
    writer = open_pg_store(pg_server.url(pg_database))  # another machine's indexer commits
    add_notes(writer, [("Kestrel migration", "The kestrel service moves to the new cluster.")], source="more")
    writer.close()
    # Nothing is touched here: the window's own check (every CHECK_SECONDS) sees the commit,
    # says it in the status bar and runs the shown query again.
    expected = f"[{pg_database}] more · d0.md:1"
    qtbot.wait_until(lambda: expected in [location(h) for h in window.model.hits], timeout=4000 * CHECK_SECONDS)
    assert " 3 chunks · updated just now" in window.team_status.text()
    assert window.search_bar.text == "kestrel"  # the page stayed where the user was


def test_an_unreachable_team_store_is_said_and_the_personal_store_still_answers(qtbot, window):
    server = start_server(Path(tempfile.mkdtemp(prefix="kenning-pg-gone-")) / "data")  # a short socket path
    database = server.new_database()
    url = _team(server, database)
    dialog = _connect_through_the_dialog(qtbot, window, url)
    qtbot.keyClick(dialog, Qt.Key.Key_Escape)
    qtbot.mouseClick(window.search_tab, Qt.MouseButton.LeftButton)
    stop_server(server)  # the team's server goes away
    with qtbot.wait_signal(window.search_service.results, timeout=20000):
        qtbot.keyClicks(window.search_bar.field, "borrow checker")
    assert [h.path for h in window.model.hits][:1] == ["rust/borrowing.md"]
    qtbot.wait_until(lambda: "unreachable" in window.team_status.text(), timeout=20000)
    assert not window.search_service.team_attached
    assert NOTES  # the personal store's notes are all still there
    QApplication.processEvents()


def test_with_a_team_store_attached_the_apps_service_still_answers_for_the_personal_store(
    qtbot, window, pg_server, pg_database, monkeypatch
):
    """The window searches both stores on a Workspace of its own; the Searcher it shares
    with the app's service stays the personal store's, so `kenning search` through the
    app prints what it prints in its own process.  Disconnecting goes back to the shared one."""
    from kenning.cli.serving import handlers_for
    from kenning.gui.service_host import ServiceHost
    from kenning.serve import client

    monkeypatch.delenv("KENNING_HOME")
    host = ServiceHost.for_window(window, handlers_for).start()
    search = window.search_service

    def served(query: str) -> str:
        request = client.request_for(["search", "--json", query], str(window.store_path), {}, (False, False))
        answer = client.ask(str(window.store_path), request)
        assert answer["ok"] is True and answer["exit"] == 0, answer
        return answer["output"][0][1]

    try:
        url = _team(pg_server, pg_database)
        dialog = _connect_through_the_dialog(qtbot, window, url)
        qtbot.keyClick(dialog, Qt.Key.Key_Escape)
        qtbot.mouseClick(window.search_tab, Qt.MouseButton.LeftButton)
        rows = _search(qtbot, window, "borrow checker")
        assert f"[{pg_database}] runbooks · d0.md:1" in rows, rows  # the window: both stores
        assert search._together is not None and search._together is not search.searcher
        personal = served("borrow checker")
        assert "rust/borrowing.md" in personal and "runbooks" not in personal  # the service: its own store
        assert not search.workspace.searching_together
        dialog = _open_the_dialog_from_the_menu(qtbot, window)
        qtbot.mouseClick(dialog.disconnect_button, Qt.MouseButton.LeftButton)
        qtbot.wait_until(lambda: not search.team_attached, timeout=10000)
        window.search_bar.field.clear()
        rows = _search(qtbot, window, "failover runbook")
        assert not any(row.startswith(f"[{pg_database}]") for row in rows), rows
        assert served("checkpoints").count('"path": "sqlite-wal.md"') == 1
    finally:
        host.stop()
