"""Hostile documents of every extracted format: each is indexed or skipped with its
reason, a parser that hangs or bloats costs only its own file, and the run goes on.

The extraction worker (kenning/ingest/extract/worker.py) is what makes the last part
true; the tests at the end drive it directly with small limits.
"""

from __future__ import annotations

import io
import json
import os
import struct
import time
import zipfile
import zlib
from pathlib import Path

import pytest

from docfiles import docx_bytes, email_bytes, mbox_bytes, notebook_json, odt_bytes, pdf_bytes
from kenning.ingest.extract.worker import ExtractionWorker
from kenning.ingest.indexer import Indexer
from kenning.ingest.sources import add_source
from kenning.search.engine import SearchEngine, SearchOptions
from kenning.storage import open_store
from kenning.storage.documents import skipped_files
from kenning_testing import documents_by_path
from reliability.helpers import assert_healthy, count, pick, write_files

MB = 1024 * 1024
INDEXED = "indexed"


def zip_bomb(inner_name: str, inflated_bytes: int) -> bytes:
    """A real zip whose one member inflates to `inflated_bytes` zeros, built in well under a second.

    Deflating a gigabyte takes seconds; instead one megabyte of zeros is deflated with a
    full flush (a self-contained, byte-aligned piece) and that piece repeated.
    """
    compressor = zlib.compressobj(9, zlib.DEFLATED, -15)
    piece = compressor.compress(b"\0" * MB) + compressor.flush(zlib.Z_FULL_FLUSH)
    repeats = inflated_bytes // MB
    data = piece * repeats + zlib.compressobj(9, zlib.DEFLATED, -15).flush(zlib.Z_FINISH)
    crc = 0
    zeros = b"\0" * MB
    for _ in range(repeats):
        crc = zlib.crc32(zeros, crc)
    name = inner_name.encode()
    fields = struct.pack("<HHHHHIII", 20, 0, 8, 0, 0x21, crc, len(data), repeats * MB)
    local = b"PK\x03\x04" + fields + struct.pack("<HH", len(name), 0) + name
    central = (
        b"PK\x01\x02" + struct.pack("<H", 20) + fields + struct.pack("<HHHHHII", len(name), 0, 0, 0, 0, 0, 0) + name
    )
    end = b"PK\x05\x06" + struct.pack("<HHHHIIH", 0, 0, 1, 1, len(central), len(local) + len(data), 0)
    return local + data + central + end


def zip_of(members: dict[str, str | bytes]) -> bytes:
    """An archive holding `members` (name → content), in this order."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, content in members.items():
            archive.writestr(name, content)
    return buffer.getvalue()


def billion_laughs_docx() -> bytes:
    entities = "".join(f'<!ENTITY l{i} "{f"&l{i - 1};" * 10}">' for i in range(1, 10))
    document = (
        f'<?xml version="1.0"?><!DOCTYPE w:document [<!ENTITY l0 "lol">{entities}]>'
        '<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main">'
        "<w:body><w:p><w:r><w:t>&l9;</w:t></w:r></w:p></w:body></w:document>"
    )
    return zip_of({"word/document.xml": document})


def external_entity_odt(secret: Path) -> bytes:
    content = (
        f'<?xml version="1.0"?><!DOCTYPE x [<!ENTITY secret SYSTEM "file://{secret}">]>'
        '<office:document-content xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0"'
        ' xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0"><office:body><office:text>'
        "<text:p>&secret;</text:p></office:text></office:body></office:document-content>"
    )
    return zip_of({"content.xml": content})


def encrypted_odt() -> bytes:
    manifest = (
        '<manifest:manifest xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0">'
        '<manifest:file-entry manifest:full-path="content.xml"><manifest:encryption-data/></manifest:file-entry>'
        "</manifest:manifest>"
    )
    return zip_of({"META-INF/manifest.xml": manifest, "content.xml": os.urandom(500)})


def deep_html(depth: int, word: str) -> bytes:
    return b"<html><body>" + b"<div><span>" * depth + word.encode() + b"</span></div>" * depth + b"</body></html>"


def build_documents(root: Path, outside: Path) -> dict[str, tuple[str, str | None]]:
    """rel_path -> (INDEXED, a word inside it) or ("skipped", reason)."""
    expect: dict[str, tuple[str, str | None]] = {}

    def doc(rel: str, content: bytes | str, outcome: str, word: str | None = None) -> None:
        write_files(root, {rel: content})
        expect[rel] = (outcome, word)

    good_pdf = pdf_bytes([["pdfgoodword on one page"]])
    doc("ok.pdf", good_pdf, INDEXED, "pdfgoodword")
    doc("truncated.pdf", good_pdf[: len(good_pdf) // 2], "malformed")
    doc("random.pdf", b"%PDF-1.5\n" + os.urandom(4096), "malformed")
    doc("empty.pdf", b"", "malformed")
    doc("encrypted.pdf", pdf_bytes([["secretpdfword"]], encrypt=True), "encrypted")
    doc("scan.pdf", pdf_bytes([[], []], image_only=True), "no text layer")
    pages = pick(5000, 20000)
    doc(
        "pages.pdf",
        pdf_bytes([[f"page {i} manypagesword{i}"] for i in range(1, pages + 1)]),
        INDEXED,
        f"manypagesword{pages}",
    )

    doc("ok.html", "<title>t</title><p>htmlgoodword</p>", INDEXED, "htmlgoodword")
    doc("deep.html", deep_html(5000, "deephtmlword"), INDEXED, "deephtmlword")
    doc(
        "oneline.html",
        b"<html><body><p>" + b"onelineword " * (50 * MB // 12) + b"</p></body></html>",
        INDEXED,
        "onelineword",
    )
    doc("binary.html", os.urandom(20000), INDEXED, None)  # browsers show noise too; nothing to crash on
    doc("unclosed.htm", "<div><p><b><i>unclosedword" + "<table><tr><td>" * 300, INDEXED, "unclosedword")

    nb = json.loads(notebook_json([("markdown", "# Big\n\nbignotebookword"), ("code", "make_output()")]))
    nb["cells"][1]["outputs"] = [{"output_type": "stream", "name": "stdout", "text": "y" * (pick(100, 100) * MB)}]
    doc("huge_output.ipynb", json.dumps(nb), INDEXED, "bignotebookword")
    doc("truncated.ipynb", notebook_json([("markdown", "cut here")])[:40], "malformed")
    doc("not_a_notebook.ipynb", "[1, 2, 3]", "malformed")
    doc("deep.ipynb", "[" * 100_000 + "]" * 100_000, "malformed")
    doc(
        "strange_cells.ipynb",
        json.dumps(
            {
                "cells": [
                    None,
                    3,
                    {"cell_type": "code", "source": 7},
                    {"cell_type": "markdown", "source": ["strangecellword"]},
                ]
            }
        ),
        INDEXED,
        "strangecellword",
    )

    good_docx = docx_bytes([("Heading1", "Plan"), ("", "docxgoodword")])
    doc("ok.docx", good_docx, INDEXED, "docxgoodword")
    doc("truncated.docx", good_docx[: len(good_docx) // 2], "malformed")
    doc("random.docx", os.urandom(3000), "malformed")
    doc("encrypted.docx", b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + os.urandom(3000), "encrypted")
    doc("bomb.docx", zip_bomb("word/document.xml", 1024 * MB), "zip-bomb")
    doc("laughs.docx", billion_laughs_docx(), "malformed")
    doc("ok.odt", odt_bytes([(1, "Plan"), (0, "odtgoodword")]), INDEXED, "odtgoodword")
    doc("bomb.odt", zip_bomb("content.xml", 256 * MB), "zip-bomb")
    doc("encrypted.odt", encrypted_odt(), "encrypted")
    doc("xxe.odt", external_entity_odt(outside), "malformed")

    doc("ok.eml", email_bytes("Subject", "a@example.org", "emlgoodword"), INDEXED, "emlgoodword")
    doc("garbage.eml", os.urandom(2000).replace(b"\0", b"x"), INDEXED, None)
    doc("empty.eml", b"", "empty")
    doc("not.mbox", b"just text, no From line", "malformed")
    many = [email_bytes(f"Message {i}", f"u{i}@example.org", f"mboxword{i}") for i in range(pick(300, 3000))]
    doc("big.mbox", mbox_bytes(many), INDEXED, f"mboxword{len(many) - 1}")
    broken = b"From x\nSubject: =?utf-8?b?!!!?=\nContent-Type: text/plain; charset=klingon\n\n\xff\xfe brokenmailword\n"
    doc("broken.mbox", broken, INDEXED, "brokenmailword")
    return expect


def test_every_hostile_document_is_indexed_or_skipped_with_its_reason(tmp_path):
    root = tmp_path / "docs"
    root.mkdir()
    outside = tmp_path / "secret.txt"
    outside.write_text("xxesecretword")
    started = time.perf_counter()
    expect = build_documents(root, outside)
    count("hostile documents tried", len(expect))
    store = open_store(tmp_path / "store" / "kenning.db")
    try:
        add_source(store, root)
        run = Indexer(store, None).run(embed=False)
        elapsed = time.perf_counter() - started
        assert not run.reports[0].errors, run.reports[0].errors
        skipped = {s.rel_path: (s.reason, s.detail) for _, s in skipped_files(store)}
        stored = set(documents_by_path(store))
        engine = SearchEngine(store, None)
        for rel, (outcome, word) in expect.items():
            if outcome != INDEXED:
                assert skipped.get(rel, ("indexed",))[0] == outcome, (rel, skipped.get(rel))
                continue
            assert rel in stored or any(s.startswith(rel + "#") for s in stored), (rel, skipped.get(rel))
            if word:
                hits = engine.search(word, SearchOptions(limit=3)).hits
                assert hits and hits[0].path.split("#")[0] == rel, (rel, word)
        assert not engine.search("xxesecretword", SearchOptions(limit=3)).hits
        assert not engine.search("secretpdfword", SearchOptions(limit=3)).hits
    finally:
        store.close()
    assert_healthy(tmp_path / "store" / "kenning.db")
    assert elapsed < 240  # every file bounded: the slowest hostile file costs seconds, not minutes


# ---------------------------------------------------------------- the worker's limits


def test_a_parser_that_hangs_is_killed_and_the_next_file_still_extracts(tmp_path):
    slow = tmp_path / "slow.html"
    slow.write_bytes(deep_html(100_000, "never"))  # Lexbor takes about a minute on this
    fine = tmp_path / "fine.html"
    fine.write_text("<p>afterwards</p>")
    worker = ExtractionWorker(time_limit=2.0)
    try:
        started = time.perf_counter()
        result = worker.extract(slow.read_bytes(), "html", 10**9)
        assert result.skip_reason == "timeout" and "2 s" in result.detail
        assert time.perf_counter() - started < 10
        after = worker.extract(fine.read_bytes(), "html", 10**9)
        assert after.documents and "afterwards" in after.documents[0].sections[0].text
    finally:
        worker.close()


@pytest.mark.skipif(not Path("/proc/self/statm").exists(), reason="the memory cap is enforced on Linux")
def test_a_file_that_needs_more_memory_than_the_limit_costs_only_itself(tmp_path):
    nb = {
        "cells": [
            {"cell_type": "code", "source": "x", "outputs": [{"output_type": "stream", "text": "z" * (200 * MB)}]}
        ]
    }
    big = tmp_path / "big.ipynb"
    big.write_text(json.dumps(nb))
    fine = tmp_path / "fine.ipynb"
    fine.write_text(notebook_json([("markdown", "stillworks")]))
    worker = ExtractionWorker(memory_limit=150 * MB)
    try:
        result = worker.extract(big.read_bytes(), "notebook", 10**9)
        assert result.skip_reason in ("too-large", "extract-failed"), result
        after = worker.extract(fine.read_bytes(), "notebook", 10**9)
        assert after.documents and "stillworks" in after.documents[0].sections[0].text
    finally:
        worker.close()


def test_a_crashing_worker_is_replaced(tmp_path):
    fine = tmp_path / "fine.html"
    fine.write_text("<p>survivor</p>")
    worker = ExtractionWorker()
    try:
        assert worker.extract(fine.read_bytes(), "html", 10**6).documents
        worker._proc.kill()  # as the OS's out-of-memory killer would
        worker._proc.wait()
        result = worker.extract(fine.read_bytes(), "html", 10**6)
        # Either the dead child was noticed before the request, or the request reports the crash.
        if result.skip_reason:
            assert result.skip_reason == "extract-failed"
            result = worker.extract(fine.read_bytes(), "html", 10**6)
        assert "survivor" in result.documents[0].sections[0].text
    finally:
        worker.close()
