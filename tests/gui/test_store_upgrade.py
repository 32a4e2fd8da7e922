"""Opening an older store in the app converts it first, with a window saying so and
the event loop running (a large store takes minutes: the app must not look frozen)."""

from __future__ import annotations

from PySide6.QtWidgets import QApplication, QProgressDialog

from kenning.gui import upgrade
from kenning.storage import migrations, open_store
from kenning.workspace import store_needs_upgrade


def _store_before_m007(path, monkeypatch):
    older = migrations.MIGRATIONS[: migrations.MIGRATIONS.index(migrations.m007_half_vectors_and_substring_index)]
    monkeypatch.setattr(migrations, "MIGRATIONS", older)
    open_store(path).close()
    monkeypatch.undo()


def test_an_older_store_is_upgraded_behind_a_window_that_names_each_step(qtbot, store_path, monkeypatch):
    _store_before_m007(store_path, monkeypatch)
    assert store_needs_upgrade(store_path)
    labels, events = [], []
    monkeypatch.setattr(QProgressDialog, "setLabelText", lambda self, text: labels.append(text))
    real_process = QApplication.processEvents
    monkeypatch.setattr(upgrade, "POLL_SECONDS", 0.001)
    monkeypatch.setattr(QApplication, "processEvents", staticmethod(lambda *a: (events.append(1), real_process(*a))[1]))
    upgrade.upgrade_if_needed(QApplication.instance(), store_path)
    assert not store_needs_upgrade(store_path)
    store = open_store(store_path)
    try:
        assert "detail='none'" in store.scalar("SELECT sql FROM sqlite_master WHERE name = 'chunks_tri'")
    finally:
        store.close()
    assert any("Upgrading" in text for text in labels)
    assert events  # the event loop ran while the store was converted


def test_a_current_or_new_store_shows_nothing(qtbot, store_path, monkeypatch):
    shown = []
    monkeypatch.setattr(QProgressDialog, "show", lambda self: shown.append(self))
    upgrade.upgrade_if_needed(QApplication.instance(), store_path)  # no file yet
    open_store(store_path).close()
    upgrade.upgrade_if_needed(QApplication.instance(), store_path)
    assert shown == [] and not store_needs_upgrade(store_path)
