"""GUI tests: the real window, offscreen, against real temporary stores."""

from __future__ import annotations

import os

os.environ["QT_QPA_PLATFORM"] = "offscreen"  # before any Qt import: no display needed

import pytest
from tests_gui_helpers import NOTES, write_notes

from kenning.embedding import FakeEmbedder
from kenning.ingest.indexer import Indexer
from kenning.ingest.sources import add_source
from kenning.storage import open_store
from kenning.storage.settings import set_setting


@pytest.fixture
def store_path(tmp_path):
    return tmp_path / "store" / "kenning.db"


def index_notes(tmp_path, files=NOTES):
    """A store under tmp_path with `files` written as the source "notes" and indexed
    (text + fake vectors), its model set to the fake one.  Returns the store's path."""
    store_path = tmp_path / "store" / "kenning.db"
    store = open_store(store_path)
    set_setting(store, "embedding_model", "fake")  # the CLI then uses the same embedder
    add_source(store, write_notes(tmp_path / "notes", files), name="notes")
    embedder = FakeEmbedder()
    Indexer(store, lambda: embedder).run()
    store.close()
    return store_path


@pytest.fixture
def indexed_store(store_path, tmp_path):
    """A store with the notes indexed (text + fake vectors), model set to the fake one."""
    assert index_notes(tmp_path) == store_path
    return store_path


def wait_for_model(qtbot, window, timeout: int = 10000) -> None:
    """Until the model is in.  model_ready is emitted on the UI side as the search thread is
    handed the model, so the meaning engine exists a moment later (under load, later still):
    a test that reads search_service.engine waits for that too."""
    with qtbot.wait_signal(window.search_service.model_ready, timeout=timeout) as ready:
        pass
    if ready.args[0]:
        qtbot.wait_until(lambda: window.search_service.engine is not None, timeout=timeout)


def make_window(qtbot, store_path, **kw):
    from kenning.gui.main_window import MainWindow

    window = MainWindow(store_path, embedder_factory=FakeEmbedder, auto_index=kw.pop("auto_index", False), **kw)
    qtbot.addWidget(window)
    window.sources_panel.ask = lambda *_a, **_k: True
    window.sources_panel.tell = lambda *a: window.told.append(a)
    window.sources_panel.choose = lambda *a: window.chosen.append(a) or None  # Cancel unless a test says
    window.chosen = []
    window.told = []
    return window


@pytest.fixture
def window(qtbot, indexed_store):
    w = make_window(qtbot, indexed_store)
    wait_for_model(qtbot, w)
    w.show()
    yield w
    w.shutdown()


@pytest.fixture
def empty_window(qtbot, store_path):
    w = make_window(qtbot, store_path)
    w.show()
    yield w
    w.shutdown()


@pytest.fixture
def window_factory(qtbot):
    made = []

    def factory(path, **kw):
        made.append(make_window(qtbot, path, **kw))
        return made[-1]

    yield factory
    for w in made:
        w.shutdown()
