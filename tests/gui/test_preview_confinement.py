"""The preview reads a hit's file only inside its source, as the indexer does."""

from __future__ import annotations

import dataclasses
import os

import pytest

from kenning.gui.preview import read_document
from kenning.search.engine import SearchEngine
from kenning.storage import open_store
from kenning_testing import index_folder, write_files

SECRET = "private key material outside every source\n"


@pytest.fixture
def hit_and_secret(tmp_path):
    notes = write_files(tmp_path / "notes", {"a.md": "# Alpha\n\nzebra crossing notes\n"})
    secret = tmp_path / "outside" / "secret.txt"
    secret.parent.mkdir()
    secret.write_text(SECRET)
    store = open_store(tmp_path / "store" / "kenning.db")
    index_folder(store, notes)
    hit = SearchEngine(store, None).search("zebra").hits[0]
    store.close()
    return hit, notes, secret


def test_the_file_as_it_is_now_is_shown(hit_and_secret):
    hit, notes, _ = hit_and_secret
    (notes / "a.md").write_text("# Alpha\n\nzebra crossing notes, edited\n")
    text, note = read_document(hit)
    assert text.endswith("edited\n") and note == ""


def test_a_file_swapped_for_a_symlink_out_of_the_source_is_not_shown(hit_and_secret):
    hit, notes, secret = hit_and_secret
    os.remove(notes / "a.md")
    os.symlink(secret, notes / "a.md")
    text, note = read_document(hit)
    assert SECRET not in text and text == hit.text
    assert note.startswith("File unavailable (") and note.endswith("showing the indexed chunk.")


def test_a_folder_swapped_for_a_symlink_out_of_the_source_is_not_shown(tmp_path):
    notes = write_files(tmp_path / "notes", {"sub/secret.txt": "zebra in a sub folder\n"})
    outside = write_files(tmp_path / "outside", {"secret.txt": SECRET})
    store = open_store(tmp_path / "store" / "kenning.db")
    index_folder(store, notes)
    hit = SearchEngine(store, None).search("zebra").hits[0]
    store.close()
    os.rename(notes / "sub", tmp_path / "old-sub")
    os.symlink(outside, notes / "sub")
    assert SECRET not in read_document(hit)[0]


@pytest.mark.parametrize("crafted", ["../outside/secret.txt", "./../outside/secret.txt"])
def test_a_crafted_stored_path_is_not_followed_out(hit_and_secret, crafted):
    hit, notes, secret = hit_and_secret
    crafty = dataclasses.replace(hit, path=crafted, abs_path=os.path.join(notes, crafted))
    assert os.path.exists(crafty.abs_path)  # the file is there to be read, were it not refused
    text, note = read_document(crafty)
    assert SECRET not in text and note.startswith("File unavailable (")


def _opened_by_enter(qtbot, monkeypatch, hit, folder=False):
    """(what the editor or the system opener was given, the problem the window showed)."""
    from kenning.gui import opener

    given, problems = [], []
    monkeypatch.setattr(
        opener.QDesktopServices, "openUrl", staticmethod(lambda url: given.append(url.toLocalFile()) or True)
    )
    monkeypatch.setattr(opener, "launch", lambda argv: given.append(argv[-1]))
    monkeypatch.setattr(opener.QTimer, "singleShot", staticmethod(lambda *a: None))
    o = opener.Opener()
    o.editor = "ed {file}"
    o.problem.connect(problems.append)
    o.open_hit(hit, folder)
    return given, problems


def test_enter_opens_the_file_inside_its_source(qtbot, monkeypatch, hit_and_secret):
    hit, notes, _ = hit_and_secret
    assert _opened_by_enter(qtbot, monkeypatch, hit) == ([os.path.realpath(notes / "a.md")], [])
    assert _opened_by_enter(qtbot, monkeypatch, hit, folder=True) == ([os.path.realpath(notes)], [])


def test_enter_does_not_open_a_file_swapped_for_a_symlink_out_of_the_source(qtbot, monkeypatch, hit_and_secret):
    hit, notes, secret = hit_and_secret
    os.remove(notes / "a.md")
    os.symlink(secret, notes / "a.md")
    given, problems = _opened_by_enter(qtbot, monkeypatch, hit)
    assert given == [] and problems == ["a.md cannot be opened: it now leads outside its source's folder."]
    assert _opened_by_enter(qtbot, monkeypatch, hit, folder=True)[0] == []  # nor its folder


def test_enter_follows_no_crafted_stored_path(qtbot, monkeypatch, hit_and_secret):
    hit, notes, _ = hit_and_secret
    crafty = dataclasses.replace(hit, path="../outside/secret.txt", abs_path=str(notes / "../outside/secret.txt"))
    given, problems = _opened_by_enter(qtbot, monkeypatch, crafty)
    assert given == [] and problems == ["../outside/secret.txt cannot be opened: not a path inside its source."]
