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
