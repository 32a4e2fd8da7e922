"""#14 bug 7: a second window on the same store is not opened; the first comes to the front."""

from __future__ import annotations

from kenning.gui.single_instance import bring_existing_to_front, server_name


def test_a_second_start_brings_the_open_window_forward(qtbot, window, tmp_path):
    assert window.instance.listening
    raised = []
    window.instance.raise_requested.connect(lambda: raised.append(True))
    assert bring_existing_to_front(window.store_path)  # the second start: told to stop
    qtbot.wait_until(lambda: bool(raised), timeout=3000)
    assert "this window is the one" in window.message.text()
    assert not bring_existing_to_front(tmp_path / "other" / "kenning.db")  # another store opens freely


def test_the_name_depends_on_the_store(tmp_path):
    a, b = tmp_path / "a.db", tmp_path / "b.db"
    assert server_name(a) == server_name(a) != server_name(b)


def test_closing_frees_the_store_for_a_new_window(qtbot, indexed_store, window_factory):
    first = window_factory(indexed_store)
    first.shutdown()
    assert not bring_existing_to_front(indexed_store)
