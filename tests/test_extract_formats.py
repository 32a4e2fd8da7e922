"""Spreadsheets, slides, e-books and RTF: found by the words inside them, located by sheet,
slide or chapter, and every hostile file (zip bombs, entity tricks, huge sheets, DRM)
indexed or skipped with its reason, through the same worker and limits as .docx."""

from __future__ import annotations

import io
import time
import zipfile

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from docfiles import epub_bytes, odp_bytes, ods_bytes, pptx_bytes, rtf_bytes, xlsx_bytes
from kenning.core.formats import is_binary_document
from kenning.ingest.extract import extract_file, extract_in_process
from kenning.ingest.filetypes import classify
from kenning.search.engine import SearchEngine, SearchOptions
from kenning.storage.documents import skipped_files
from kenning_testing import index_folder, write_files
from reliability.test_hostile_documents import zip_bomb

BIG = 10**9
MB = 1024 * 1024
NEW = ("x.xlsx", "x.xlsm", "x.ods", "x.pptx", "x.odp", "x.epub", "x.rtf")


def _extract(tmp_path, name: str, content: bytes):
    path = tmp_path / name
    path.write_bytes(content)
    return extract_in_process(path.read_bytes(), classify(name), BIG, path.name)


def _with_member(archive: bytes, name: str, content: bytes | str) -> bytes:
    """The archive with one member replaced (or added)."""
    source = zipfile.ZipFile(io.BytesIO(archive))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as target:
        for info in source.infolist():
            if info.filename != name:
                target.writestr(info, source.read(info))
        target.writestr(name, content)
    return out.getvalue()


def _bombed(archive: bytes, name: str, inflated: int) -> bytes:
    """The archive with `name` replaced by a member that inflates to `inflated` zeros."""
    source = zipfile.ZipFile(io.BytesIO(archive))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as target:
        for info in source.infolist():
            if info.filename != name:
                target.writestr(info, source.read(info))
    return _concatenated(out.getvalue(), zip_bomb(name, inflated))


def _concatenated(first: bytes, second: bytes) -> bytes:
    """One zip holding the members of two (their central directories merged, offsets moved)."""
    a, b = zipfile.ZipFile(io.BytesIO(first)), zipfile.ZipFile(io.BytesIO(second))
    a_end = first.rindex(b"PK\x05\x06")
    a_dir_size = int.from_bytes(first[a_end + 12 : a_end + 16], "little")
    a_dir_start = int.from_bytes(first[a_end + 16 : a_end + 20], "little")
    b_end = second.rindex(b"PK\x05\x06")
    b_dir_size = int.from_bytes(second[b_end + 12 : b_end + 16], "little")
    b_dir_start = int.from_bytes(second[b_end + 16 : b_end + 20], "little")
    a_local, b_local = first[:a_dir_start], second[:b_dir_start]
    b_dir = bytearray(second[b_dir_start : b_dir_start + b_dir_size])
    # Each central entry of b points at its local header: shift by the length of a's local part.
    offset = 0
    while offset < len(b_dir):
        name_len, extra_len, comment_len = (
            int.from_bytes(b_dir[offset + k : offset + k + 2], "little") for k in (28, 30, 32)
        )
        old = int.from_bytes(b_dir[offset + 42 : offset + 46], "little")
        b_dir[offset + 42 : offset + 46] = (old + len(a_local)).to_bytes(4, "little")
        offset += 46 + name_len + extra_len + comment_len
    directory = first[a_dir_start : a_dir_start + a_dir_size] + bytes(b_dir)
    count = len(a.infolist()) + len(b.infolist())
    end = (
        b"PK\x05\x06"
        + (0).to_bytes(4, "little")
        + count.to_bytes(2, "little") * 2
        + len(directory).to_bytes(4, "little")
        + (len(a_local) + len(b_local)).to_bytes(4, "little")
        + b"\x00\x00"
    )
    return a_local + b_local + directory + end


ENTITIES = (
    '<!DOCTYPE x [<!ENTITY l0 "lol">' + "".join(f'<!ENTITY l{i} "{f"&l{i - 1};" * 10}">' for i in range(1, 10)) + "]>"
)


def _external(secret) -> str:
    return f'<!DOCTYPE x [<!ENTITY secret SYSTEM "file://{secret}">]>'


# ---------------------------------------------------------------- each format


def test_new_formats_are_recognised_and_open_in_their_own_application():
    assert [classify(name) for name in NEW] == ["xlsx", "xlsx", "ods", "pptx", "odp", "epub", "rtf"]
    assert all(is_binary_document(name) for name in NEW)


def test_a_workbook_is_one_located_section_per_sheet_with_computed_values(tmp_path):
    import datetime as dt

    content = xlsx_bytes(
        {
            "Budget": [["Item", "Cost"], ["zeppelin fuel", 12.0], [None, None], ["when", dt.datetime(2024, 3, 1)]],
            "Empty": [],
            "Team": [["Ann", "walrus keeper", 3.5]],
        },
        title="Money",
    )
    (doc,) = _extract(tmp_path, "m.xlsx", content).documents
    assert doc.title == "Money"
    assert [(s.location, s.text) for s in doc.sections] == [
        ("sheet Budget", "Item | Cost\nzeppelin fuel | 12\nwhen | 2024-03-01\n"),
        ("sheet Team", "Ann | walrus keeper | 3.5\n"),
    ]


def test_a_formula_is_read_as_its_last_computed_value_never_run(tmp_path):
    content = _with_member(
        xlsx_bytes({"S": [["x"]]}),
        "xl/worksheets/sheet1.xml",
        '<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>'
        '<row r="1"><c r="A1"><f>WEBSERVICE("http://example.invalid/")</f><v>42</v></c>'
        '<c r="B1" t="inlineStr"><is><t>cachedword</t></is></c></row></sheetData></worksheet>',
    )
    (doc,) = _extract(tmp_path, "f.xlsx", content).documents
    assert doc.sections[0].text == "42 | cachedword\n"


def test_an_ods_sheet_reads_its_rows_and_never_expands_an_empty_repeated_tail(tmp_path):
    started = time.perf_counter()
    result = _extract(tmp_path, "p.ods", ods_bytes({"Plan": [["a", "b"], ["walrus", "tusk"]]}, tail_repeat=1048000))
    assert time.perf_counter() - started < 5
    (doc,) = result.documents
    assert [(s.location, s.text) for s in doc.sections] == [("sheet Plan", "a | b\nwalrus | tusk\n")]


def test_slides_are_located_in_the_order_shown_with_titles_and_speaker_notes(tmp_path):
    slides = [("Intro", ["hello quokka"], ["say hi first"]), ("Roadmap", ["numbat launch"], [])]
    (doc,) = _extract(tmp_path, "deck.pptx", pptx_bytes(slides, order=[2, 1], title="Kickoff")).documents
    assert doc.title == "Kickoff"
    assert [(s.location, s.heading) for s in doc.sections] == [("slide 1", "Roadmap"), ("slide 2", "Intro")]
    assert doc.sections[1].text == "# Intro\n\nhello quokka\n\nNotes:\n\nsay hi first\n"
    assert "slide image" not in doc.sections[1].text  # the notes page's picture of the slide is not its text
    (odp,) = _extract(tmp_path, "deck.odp", odp_bytes(slides)).documents
    assert [(s.location, s.heading) for s in odp.sections] == [("slide 1", "Intro"), ("slide 2", "Roadmap")]
    assert "say hi first" in odp.sections[0].text and odp.title == "Intro"


def test_an_epub_is_read_chapter_by_chapter_in_spine_order(tmp_path):
    chapters = [("z.xhtml", "<h1>Departure</h1><p>The narwhal sails.</p>"), ("a.xhtml", "<h2>Arrival</h2><p>okapi</p>")]
    (doc,) = _extract(tmp_path, "b.epub", epub_bytes(chapters, title="Voyage")).documents
    assert doc.title == "Voyage"
    assert [(s.location, s.text) for s in doc.sections] == [
        ("ch. 1", "# Departure\n\nThe narwhal sails.\n"),
        ("ch. 2", "## Arrival\n\nokapi\n"),
    ]


def test_rtf_text_without_its_control_words(tmp_path):
    (doc,) = _extract(tmp_path, "n.rtf", rtf_bytes(["Caf\\'e9 \\b bold\\b0  text", "second line"], "Memo")).documents
    assert doc.title == "Memo" and doc.sections[0].text == "Café bold text\nsecond line\n"


@pytest.fixture
def shelf(notes):
    write_files(
        notes,
        {
            "budget.xlsx": xlsx_bytes({"Costs": [["zeppelinfuel", 12]]}),
            "plan.ods": ods_bytes({"Q3": [["walrusplan"]]}),
            "deck.pptx": pptx_bytes([("Intro", ["x"], []), ("Later", ["quokkaslide"], [])]),
            "talk.odp": odp_bytes([("Talk", ["y"], []), ("End", ["numbatslide"], [])]),
            "book.epub": epub_bytes([("1.xhtml", "<p>a</p>"), ("2.xhtml", "<h1>Two</h1><p>okapichapter</p>")]),
            "memo.rtf": rtf_bytes(["tapirmemo"]),
        },
    )
    return notes


def test_every_new_format_is_found_by_words_inside_it_with_its_location(store, shelf):
    _, run = index_folder(store, shelf)
    assert not run.reports[0].errors and not skipped_files(store)
    engine = SearchEngine(store, None)
    expected = {
        "zeppelinfuel": ("budget.xlsx", "sheet Costs"),
        "walrusplan": ("plan.ods", "sheet Q3"),
        "quokkaslide": ("deck.pptx", "slide 2"),
        "numbatslide": ("talk.odp", "slide 2"),
        "okapichapter": ("book.epub", "ch. 2"),
        "tapirmemo": ("memo.rtf", ""),
    }
    for word, (path, location) in expected.items():
        top = engine.search(word, SearchOptions(limit=3)).hits[0]
        assert (top.path, top.location) == (path, location), word
    assert [h.path for h in engine.search("quokkaslide ext:pptx").hits] == ["deck.pptx"]


def test_the_worker_extracts_the_new_formats_as_in_process(tmp_path):
    path = tmp_path / "b.xlsx"
    path.write_bytes(xlsx_bytes({"S": [["workerword"]]}))
    via_worker = extract_file(path.read_bytes(), "xlsx", BIG, path.name)
    assert via_worker == extract_in_process(path.read_bytes(), "xlsx", BIG, path.name)
    assert via_worker.documents[0].sections[0].text == "workerword\n"


# ---------------------------------------------------------------- hostile files


def _hostile(tmp_path) -> dict[str, tuple[bytes, str]]:
    """name -> (content, the skip reason it must get)."""
    secret = tmp_path / "secret.txt"
    secret.write_text("xxesecretword")
    xlsx = xlsx_bytes({"S": [["fine"]]})
    pptx = pptx_bytes([("T", ["fine"], [])])
    epub = epub_bytes([("1.xhtml", "<p>fine</p>")])
    sheet_ns = 'xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"'
    ods_ns = 'xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0"'
    return {
        "bomb.xlsx": (_bombed(xlsx, "xl/worksheets/sheet1.xml", 1024 * MB), "zip-bomb"),
        "strings-bomb.xlsx": (_bombed(xlsx, "xl/sharedStrings.xml", 256 * MB), "zip-bomb"),
        "laughs.xlsx": (
            _with_member(xlsx, "xl/worksheets/sheet1.xml", f'<?xml version="1.0"?>{ENTITIES}<worksheet {sheet_ns}/>'),
            "malformed",
        ),
        "xxe.xlsx": (
            _with_member(
                xlsx,
                "xl/worksheets/sheet1.xml",
                f'<?xml version="1.0"?>{_external(secret)}<worksheet {sheet_ns}><sheetData><row r="1">'
                '<c r="A1" t="inlineStr"><is><t>&secret;</t></is></c></row></sheetData></worksheet>',
            ),
            "malformed",
        ),
        "random.xlsx": (b"PK\x03\x04" + bytes(range(256)) * 20, "malformed"),
        "encrypted.xlsx": (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(3000), "encrypted"),
        "bomb.ods": (_bombed(ods_bytes({"S": [["x"]]}), "content.xml", 512 * MB), "zip-bomb"),
        "xxe.ods": (
            _with_member(
                ods_bytes({"S": [["x"]]}), "content.xml", f"{_external(secret)}<office:document-content {ods_ns}/>"
            ),
            "malformed",
        ),
        "bomb.pptx": (_bombed(pptx, "ppt/slides/slide1.xml", 1024 * MB), "zip-bomb"),
        "laughs.pptx": (_with_member(pptx, "ppt/slides/slide1.xml", f"{ENTITIES}<p:sld/>"), "malformed"),
        "bomb.odp": (_bombed(odp_bytes([("T", ["x"], [])]), "content.xml", 512 * MB), "zip-bomb"),
        "bomb.epub": (_bombed(epub, "OEBPS/text/1.xhtml", 1024 * MB), "zip-bomb"),
        "xxe.epub": (_with_member(epub, "OEBPS/content.opf", f"{_external(secret)}<package/>"), "malformed"),
        "drm.epub": (epub_bytes([("1.xhtml", "<p>lockedword</p>")], encrypted=True), "encrypted"),
        "nocontainer.epub": (_with_member(epub, "META-INF/container.xml", "<container/>"), "malformed"),
        "notrtf.rtf": (b"just text pretending", "malformed"),
    }


def test_every_hostile_file_of_the_new_formats_is_skipped_with_its_reason(tmp_path):
    for name, (content, reason) in _hostile(tmp_path).items():
        started = time.perf_counter()
        result = _extract(tmp_path, name, content)
        assert (result.skip_reason, name) == (reason, name), result.detail
        assert time.perf_counter() - started < 10, name
        assert "xxesecretword" not in result.detail


def test_a_huge_sheet_is_read_within_its_limits(tmp_path):
    """A sheet claiming every row and column Excel allows, rows jumping to the last one."""
    rows = "".join(
        f'<row r="{r}"><c r="A{r}" t="inlineStr"><is><t>row{r}word</t></is></c>'
        f'<c r="XFD{r}" t="inlineStr"><is><t>farword</t></is></c></row>'
        for r in (1, 2, 1048576)
    )
    sheet = (
        '<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">'
        f'<dimension ref="A1:XFD1048576"/><sheetData>{rows}</sheetData></worksheet>'
    )
    content = _with_member(xlsx_bytes({"S": [["x"]]}), "xl/worksheets/sheet1.xml", sheet)
    started = time.perf_counter()
    (doc,) = _extract(tmp_path, "huge.xlsx", content).documents
    assert time.perf_counter() - started < 20
    text = doc.sections[0].text
    assert text.startswith("row1word\nrow2word\n") and "row1048576word" not in text  # past MAX_ROWS
    assert "farword" not in text  # past MAX_COLUMNS


def test_a_sheet_of_too_much_text_stops_at_the_per_file_limit(tmp_path, monkeypatch):
    from kenning.ingest.extract import sheets
    from kenning.ingest.extract.model import TextBudget

    monkeypatch.setattr(sheets, "TextBudget", lambda: TextBudget(10_000))  # MAX_TEXT_CHARS, made small
    rows = [[f"cell{i} " + "x" * 200] for i in range(200)]
    (doc,) = _extract(tmp_path, "long.xlsx", xlsx_bytes({"S": rows, "T": [["after"]]})).documents
    assert len(doc.sections[0].text) <= 10_001 and doc.meta["truncated"] and len(doc.sections) == 1


def test_hostile_files_through_the_indexer_are_listed_with_their_reasons_and_leak_nothing(store, tmp_path):
    folder = tmp_path / "docs"
    files = _hostile(tmp_path)
    write_files(folder, {name: content for name, (content, _) in files.items()})
    write_files(folder, {"fine.xlsx": xlsx_bytes({"S": [["finesheetword"]]})})
    _, run = index_folder(store, folder)
    assert not run.reports[0].errors
    reasons = {s.rel_path: s.reason for _, s in skipped_files(store)}
    assert reasons == {name: reason for name, (_, reason) in files.items()}
    engine = SearchEngine(store, None)
    assert engine.search("finesheetword").hits
    assert not engine.search("xxesecretword").hits and not engine.search("lockedword").hits


def _valid() -> dict[str, bytes]:
    return {
        "a.xlsx": xlsx_bytes({"S": [["one", 2]], "T": [["three"]]}),
        "a.ods": ods_bytes({"S": [["one", "two"]]}),
        "a.pptx": pptx_bytes([("T", ["body"], ["notes"])]),
        "a.odp": odp_bytes([("T", ["body"], ["notes"])]),
        "a.epub": epub_bytes([("1.xhtml", "<h1>H</h1><p>text</p>")]),
        "a.rtf": rtf_bytes(["some \\b text\\b0  here"]),
    }


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    name=st.sampled_from(sorted(_valid())),
    cut=st.floats(0, 1),
    flips=st.lists(st.tuples(st.floats(0, 1), st.integers(0, 255)), max_size=8),
)
def test_damaged_files_of_the_new_formats_give_text_or_a_reason_never_an_error(tmp_path, name, cut, flips):
    raw = bytearray(_valid()[name])
    for where, value in flips:
        raw[int(where * (len(raw) - 1))] = value
    raw = bytes(raw[: max(1, int(len(raw) * cut))]) if cut < 1 else bytes(raw)
    result = _extract(tmp_path, name, raw)
    if result.skip_reason is None:
        assert result.documents and all(isinstance(s.text, str) for d in result.documents for s in d.sections)
    else:
        assert not result.documents and result.skip_reason in {"malformed", "encrypted", "zip-bomb", "empty"}, result
