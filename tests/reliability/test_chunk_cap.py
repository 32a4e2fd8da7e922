"""The chunks-per-file cap holds for every format (issue #24, item 25): a 1 MB HTML page
or a notebook of tiny sections, a PDF whose page tree repeats one page, each write at
most MAX_CHUNKS_PER_FILE chunks and are listed as partially indexed.  Markdown is
tested in test_arguments_and_advice.py."""

from __future__ import annotations

import pytest

from docfiles import notebook_json, pdf_bytes
from kenning.ingest.extracted import MAX_CHUNKS_PER_FILE
from reliability.helpers import chunk_count, cli, count, write_files

MANY = MAX_CHUNKS_PER_FILE + 700


FILES = {
    "page.html": lambda: (
        "<html><body>" + "".join(f"<h2>Section {i}</h2><p>w{i}</p>" for i in range(MANY)) + "</body></html>"
    ),
    "book.ipynb": lambda: notebook_json([("markdown", f"# Cell {i}\n\nw{i}") for i in range(MANY)]),
    "pages.pdf": lambda: pdf_bytes([["alpha on the one page"]], repeat_first=MANY),
}


@pytest.mark.parametrize("name", sorted(FILES))
def test_a_file_of_tiny_sections_is_capped_in_every_format(tmp_path, name):
    notes = write_files(tmp_path / "notes", {name: FILES[name](), "small.md": "# s\n\nsmall\n"})
    db = tmp_path / "home" / "k.db"
    assert cli(db, "sources", "add", str(notes))[0] == 0
    rc, out, err = cli(db, "index", "--no-embed")
    assert rc == 0, out + err
    assert chunk_count(db, name) == MAX_CHUNKS_PER_FILE and chunk_count(db, "small.md") == 1
    rc, out, _ = cli(db, "status")
    assert f"{name}: partial" in out and f"first {MAX_CHUNKS_PER_FILE} of" in out, out
    count("data-loss: huge files capped and reported")


def test_the_watcher_caps_a_new_file_the_same_way(tmp_path):
    from reliability.test_watch_data_loss import Watch

    notes = write_files(tmp_path / "notes", {"small.md": "# s\n\nsmall\n"})
    db = tmp_path / "home" / "k.db"
    assert cli(db, "sources", "add", str(notes), "--name", "notes")[0] == 0
    assert cli(db, "index", "--no-embed")[0] == 0
    watch = Watch(db)
    try:
        (notes / "page.html").write_text(FILES["page.html"](), encoding="utf-8")
        watch.changed("notes", "page.html")
    finally:
        watch.close()
    assert chunk_count(db, "page.html") == MAX_CHUNKS_PER_FILE
    assert "page.html: partial" in cli(db, "status")[1]
