"""The app on the application layer: shared settings, error words, the log, argv, workers."""

from __future__ import annotations

import logging
import subprocess
import sys
from pathlib import Path

import pytest

from kenning.cli.main import main as cli
from kenning.gui.app import parse_args
from kenning.gui.settings_dialog import SettingsDialog
from kenning.workspace import Workspace, logs

MODELS = [("default", "default"), ("fake", "fake")]


def _cli(store_path, *argv) -> int:
    return cli(["--store", str(store_path), *argv])


def test_a_setting_changed_in_the_cli_is_what_the_app_reads_and_the_reverse(qtbot, store_path, monkeypatch):
    for variable in ("KENNING_MODEL", "KENNING_FUSION", "KENNING_LIMIT", "KENNING_SIZE_CAP_MB"):
        monkeypatch.delenv(variable, raising=False)
    assert _cli(store_path, "settings", "set", "limit", "7") == 0
    assert _cli(store_path, "settings", "set", "fusion", "linear") == 0
    assert _cli(store_path, "models", "use", "fake") == 0
    with Workspace(store_path) as app_side:  # what the window reads at start
        dialog = SettingsDialog(app_side, "folder", models=MODELS)
        qtbot.addWidget(dialog)
        assert dialog.limit.value() == 7 and dialog.fusion.currentData() == "linear"
        assert dialog.model.currentData() == "fake"
        # The reverse: the dialog changes two settings and keeps the others.
        dialog.limit.setValue(42)
        dialog.weights["trigram"].setValue(0.25)
        settings, model_changed = dialog.apply()
        assert not model_changed and settings.limit == 42
    with Workspace(store_path) as cli_side:
        seen = cli_side.settings
    assert (seen.limit, seen.fusion, seen.weights["trigram"], seen.embedding_model) == (42, "linear", 0.25, "fake")


def test_the_dialog_shows_an_environment_setting_as_fixed_and_never_saves_it(qtbot, store_path, monkeypatch):
    monkeypatch.setenv("KENNING_MODEL", "fake")
    with Workspace(store_path) as ws:
        dialog = SettingsDialog(ws, "folder", models=MODELS)
        qtbot.addWidget(dialog)
        assert dialog.model.currentData() == "fake" and not dialog.model.isEnabled()
        assert "KENNING_MODEL" in dialog.model.toolTip()
        dialog.limit.setValue(11)
        dialog.apply()
        assert ws.stored_settings().embedding_model == "default"  # the environment's value is not stored
        assert ws.stored_settings().limit == 11


def test_the_window_saves_settings_on_a_worker_and_uses_them_at_once(qtbot, window, monkeypatch):
    from PySide6.QtWidgets import QDialog

    def edit_and_accept(dialog):
        dialog.limit.setValue(3)
        return QDialog.DialogCode.Accepted

    monkeypatch.setattr(SettingsDialog, "exec", edit_and_accept)
    used = _options_used(window, monkeypatch)
    with qtbot.wait_signal(window.source_jobs.idle, timeout=10000):
        window.open_settings()
        with qtbot.wait_signal(window.search_service.results, timeout=10000):
            window.run_search("anything", "lexical")
        assert used[-1].files == 3  # in effect before the store has it; the list counts files
    with Workspace(window.store_path) as other:
        assert other.settings.limit == 3


def _options_used(window, monkeypatch) -> list:
    """The options each search of the window's keyword engine ran with."""
    engine = window.search_service.lexical
    real, used = engine.search, []

    def recording(text, options):
        used.append(options)
        return real(text, options)

    monkeypatch.setattr(engine, "search", recording)
    return used


def test_the_window_searches_with_the_stored_settings(qtbot, window, monkeypatch):
    window.workspace.update_settings(fusion="rrf", limit=2)
    window.settings = window.workspace.settings
    used = _options_used(window, monkeypatch)
    with qtbot.wait_signal(window.search_service.results, timeout=10000):
        window.run_search("anything", "lexical")
    assert (used[-1].fusion, used[-1].files) == ("rrf", 2)


def test_a_failing_search_shows_words_and_logs_the_traceback(qtbot, window, monkeypatch):
    path = logs.setup_logging()

    def broken(*_a, **_k):
        raise RuntimeError("engine exploded")

    monkeypatch.setattr(window.search_service.lexical, "search", broken)
    with qtbot.wait_signal(window.search_service.failed, timeout=10000) as failed:
        window.run_search("anything", "lexical")
    message = failed.args[1]
    assert "Something went wrong inside Kenning (RuntimeError: engine exploded)" in message
    assert str(path) in message
    for handler in logging.getLogger("kenning").handlers:
        handler.flush()
    text = path.read_text(encoding="utf-8")
    assert "Traceback" in text and "engine exploded" in text and "searching 'anything'" in text


def test_a_failed_source_change_is_told_in_the_users_words(qtbot, window, tmp_path):
    panel = window.sources_panel
    panel.add_folder(str(tmp_path / "missing"))
    qtbot.wait_until(lambda: bool(window.told), timeout=10000)
    title, text = window.told[-1]
    assert title == "Cannot add this source" and "does not exist" in text


def test_the_about_box_names_the_log_file(qtbot, window):
    from kenning.gui.about import show_about

    path = logs.setup_logging()
    dialog = show_about(window, window.store_path)
    assert str(path) in dialog.text.text() and str(window.store_path) in dialog.text.text()
    assert dialog.open_logs.isEnabled()
    dialog.close()


def test_the_source_counts_come_from_a_connection_of_their_own(window):
    assert window.stats._workspace is not window.workspace
    assert window.stats._workspace is None or window.stats._workspace.store is not window.workspace.store


@pytest.mark.parametrize(
    ("argv", "store", "rest"),
    [
        (["--store", "/x/k.db"], Path("/x/k.db"), []),
        (["--store=/x/k.db"], Path("/x/k.db"), []),
        (["-platform", "offscreen"], None, ["-platform", "offscreen"]),
        ([], None, []),
    ],
)
def test_gui_arguments_are_parsed_by_argparse(argv, store, rest):
    args, qt_args = parse_args(argv)
    assert args.store == store and qt_args == rest


def test_an_unknown_gui_option_is_refused(capsys):
    with pytest.raises(SystemExit):
        parse_args(["--stroe", "x"])
    assert "unrecognized arguments: --stroe" in capsys.readouterr().err


def test_painting_does_not_run_the_interpreter_out_of_none():
    """PySide6 6.12 on Python 3.11 drops a reference to None per void call (see gui/_compat.py)."""
    code = (
        "import os; os.environ['QT_QPA_PLATFORM'] = 'offscreen'\n"
        "import kenning.gui\n"
        "from PySide6.QtGui import QImage, QPainter, QPen\n"
        "from PySide6.QtWidgets import QApplication\n"
        "app = QApplication([]); img = QImage(8, 8, QImage.Format.Format_ARGB32)\n"
        "p = QPainter(img); pen = QPen()\n"
        "for _ in range(60000): p.setPen(pen)\n"
        "p.end(); print('alive')\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and "alive" in proc.stdout, proc.stderr[-500:]


def test_the_refcount_fix_is_limited_to_the_versions_that_need_it():
    from kenning.gui._compat import needs_immortal_singletons

    assert needs_immortal_singletons("6.12.0", (3, 11))
    assert not needs_immortal_singletons("6.11.0", (3, 11))  # measured: no leak
    assert not needs_immortal_singletons("6.12.0", (3, 12))  # None is immortal there


class _NoModel:
    """A query model in the fake model's name that cannot load: only remembered vectors answer."""

    def __init__(self) -> None:
        from kenning.embedding import FakeEmbedder

        real = FakeEmbedder()
        self.model_id, self.dim, self.fingerprint, self.max_tokens = real.model_id, real.dim, real.fingerprint, 256

    def load(self) -> None:
        raise OSError("the model files are gone")

    def embed_query(self, text):
        raise AssertionError("a remembered query must not be embedded again")


def _command_line_answers_without_the_model(store_path, query) -> bool:
    """What `kenning search` in a terminal would do: a new Workspace, a model that cannot load."""
    with Workspace(store_path) as cli_side:
        result = cli_side.searcher(_NoModel()).search(query, "hybrid")
        return result.mode == "hybrid" and not result.notes


def test_a_query_typed_in_the_app_is_remembered_for_the_command_line(qtbot, window_factory, indexed_store):
    """Issue #25 item 12: one query-vector memory for every front end (the store's), written
    once the typing pauses: the user need not close the app before running the query in a
    terminal."""
    from PySide6.QtCore import Qt

    from conftest import wait_for_model

    window = window_factory(indexed_store)
    wait_for_model(qtbot, window)
    window.show()
    field = window.search_bar.field
    field.setFocus()
    with qtbot.wait_signal(window.search_service.results, timeout=10000) as answered:
        qtbot.keyClicks(field, "retry with backoff")
    assert answered.args[1].mode == "hybrid"
    qtbot.wait_until(lambda: window.page.query == "retry with backoff", timeout=5000)
    # The app is still open: the terminal's search finds the vector the app embedded.
    qtbot.wait_until(
        lambda: _command_line_answers_without_the_model(indexed_store, "retry with backoff"), timeout=10000
    )
    assert not _command_line_answers_without_the_model(indexed_store, "a query never searched")
    # One typed after it is remembered too, and closing the app loses nothing.
    with qtbot.wait_signal(window.search_service.results, timeout=10000):
        qtbot.keyClick(field, Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier)
        qtbot.keyClicks(field, "event loop")
    window.shutdown()
    assert _command_line_answers_without_the_model(indexed_store, "event loop")


def test_a_save_that_finds_the_store_busy_is_tried_again_after_another_pause(qtbot, window_factory, indexed_store):
    """The save after a pause waits only briefly for another writer (an indexer, the
    watcher): the query is still remembered once that writer is done, with no new search."""
    import apsw

    from conftest import wait_for_model

    window = window_factory(indexed_store)
    wait_for_model(qtbot, window)
    window.show()
    field = window.search_bar.field
    field.setFocus()
    other_writer = apsw.Connection(str(indexed_store))
    other_writer.execute("BEGIN IMMEDIATE")  # holds the store's write lock, as an indexer would
    try:
        with qtbot.wait_signal(window.search_service._unsaved, timeout=15000):
            qtbot.keyClicks(field, "retry with backoff")
        assert not _command_line_answers_without_the_model(indexed_store, "retry with backoff")
    finally:
        other_writer.execute("COMMIT")
        other_writer.close()
    qtbot.wait_until(
        lambda: _command_line_answers_without_the_model(indexed_store, "retry with backoff"), timeout=10000
    )


def test_the_hybrid_buttons_tooltip_names_the_fusion_in_effect(qtbot, window, monkeypatch):
    from PySide6.QtWidgets import QDialog

    hybrid = next(b for b in window.search_bar.modes.buttons() if b.property("mode") == "hybrid")
    assert "linear" in hybrid.toolTip() and "RRF" not in hybrid.toolTip()  # the default fusion

    def choose_rrf(dialog):
        dialog.fusion.setCurrentIndex(dialog.fusion.findData("rrf"))
        return QDialog.DialogCode.Accepted

    monkeypatch.setattr(SettingsDialog, "exec", choose_rrf)
    with qtbot.wait_signal(window.source_jobs.idle, timeout=10000):
        window.open_settings()
    assert "RRF" in hybrid.toolTip() and "linear" not in hybrid.toolTip()
