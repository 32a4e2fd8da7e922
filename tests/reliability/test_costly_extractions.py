"""A file that makes its parser time out is tried once per content, not on every run
(issue #24, item 22), and the quadratic .docx parse it was found with is linear."""

from __future__ import annotations

import io
import os
import zipfile

import pytest

from kenning.ingest import extract as extract_package
from kenning.ingest.extract.worker import ExtractionWorker
from reliability.helpers import cli, count, write_files

_W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"


def nested_docx(depth: int, word: str = "word") -> bytes:
    """`depth` paragraphs each nested in the one before (about 11 bytes each, zipped)."""
    body = f"<w:p><w:r><w:t>{word}</w:t></w:r>" * depth + "</w:p>" * depth
    document = f'<?xml version="1.0"?><w:document xmlns:w="{_W}"><w:body>{body}</w:body></w:document>'
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("[Content_Types].xml", "<Types/>")
        archive.writestr("word/document.xml", document)
    return out.getvalue()


def test_nested_paragraphs_are_read_once_each():
    """Each paragraph held the text of every one nested in it: 20,000 nested paragraphs made
    8 MB of text (cut at the budget) in 30 s and more; each paragraph is now its own line."""
    from kenning.ingest.extract.office import extract_docx

    depth = 20_000
    (doc,) = extract_docx(nested_docx(depth))
    text = doc.sections[0].text
    assert text.count("word") == depth and len(text) < 7 * depth  # linear in the input
    count("security: costly documents made linear")


def test_a_deeply_nested_docx_is_indexed(tmp_path):
    notes = write_files(tmp_path / "notes", {"deep.docx": nested_docx(20_000, "nestedword")})
    db = tmp_path / "home" / "k.db"
    assert cli(db, "sources", "add", str(notes))[0] == 0
    rc, out, err = cli(db, "index", "--no-embed")
    assert rc == 0 and "0 skipped" in out, out + err
    rc, out, _ = cli(db, "search", "--mode", "lexical", "nestedword")
    assert "deep.docx" in out


@pytest.fixture
def slow_worker(monkeypatch):
    """The shared extraction worker with a 1 s limit, counting what it is asked to extract."""
    worker = ExtractionWorker(time_limit=1.0)
    asked: list[str] = []
    real = worker.extract

    def extract(raw, kind, *rest):
        asked.append(kind)
        return real(raw, kind, *rest)

    worker.extract = extract
    monkeypatch.setattr(extract_package, "_worker", worker)
    yield asked
    worker.close()


def _slow_html() -> bytes:
    depth = 100_000  # Lexbor takes about a minute on this (test_hostile_documents)
    return b"<html><body>" + b"<div><span>" * depth + b"never" + b"</span></div>" * depth + b"</body></html>"


def test_a_file_that_timed_out_is_not_extracted_again_until_it_changes(tmp_path, slow_worker):
    notes = write_files(tmp_path / "notes", {"slow.html": _slow_html(), "a.md": "# A\n\nalpha\n"})
    db = tmp_path / "home" / "k.db"
    assert cli(db, "sources", "add", str(notes), "--name", "notes")[0] == 0
    rc, out, err = cli(db, "index", "--no-embed")
    assert rc == 0 and "1 skipped" in out, out + err
    assert slow_worker == ["html"]
    status = cli(db, "status")[1]
    assert "slow.html: timeout" in status, status
    assert "not tried again until the file changes" in status
    # Touched, not changed: a full run and the watcher both leave it alone, still listed.
    os.utime(notes / "slow.html", (1, 1))
    assert cli(db, "index", "--no-embed")[0] == 0
    from reliability.test_watch_data_loss import Watch

    watch = Watch(db)
    try:
        os.utime(notes / "slow.html", (2, 2))
        watch.changed("notes", "slow.html")
    finally:
        watch.close()
    assert slow_worker == ["html"], slow_worker
    assert "slow.html: timeout" in cli(db, "status")[1]
    # Changed: tried again.
    (notes / "slow.html").write_bytes(b"<html><body><p>quick now</p></body></html>")
    assert cli(db, "index", "--no-embed")[0] == 0
    assert slow_worker == ["html", "html"]
    assert "slow.html" not in cli(db, "status")[1]
    assert "slow.html" in cli(db, "search", "--mode", "lexical", "quick")[1]
    count("data-loss: costly failures remembered per content")
