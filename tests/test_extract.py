"""Extractors on real files of each format, and extracted documents through the pipeline."""

from __future__ import annotations

import json
import os
from datetime import datetime, timezone

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from docfiles import docx_bytes, email_bytes, mbox_bytes, notebook_json, odt_bytes, pdf_bytes, write_pdf
from kenning.core.formats import EXTRACTED_SUFFIXES
from kenning.ingest.extract import EXTRACTED_KINDS, extract_file, extract_in_process
from kenning.ingest.filetypes import classify
from kenning.search.engine import SearchEngine, SearchOptions
from kenning.storage.documents import document_text, skipped_files
from kenning_testing import all_chunks, documents_by_path, index_folder, reindex, write_files

BIG = 10**8
SKIP_REASONS = {"malformed", "encrypted", "no text layer", "zip-bomb", "empty", "too-large"}


def _extract(tmp_path, name: str, content: bytes | str):
    path = tmp_path / name
    if isinstance(content, str):
        path.write_text(content, encoding="utf-8")
    else:
        path.write_bytes(content)
    return extract_in_process(path.read_bytes(), classify(name), BIG, path.name)


def _search(store, query: str, **kw):
    return SearchEngine(store, None).search(query, SearchOptions(limit=10, **kw)).hits


# ---------------------------------------------------------------- each format


def test_pdf_pages_become_located_sections_with_the_metadata_title(tmp_path):
    pages = [["Attention Is All You Need", "self-attention everywhere"], [], ["Results: quokka benchmark"]]
    result = _extract(tmp_path, "paper.pdf", pdf_bytes(pages, title="The Transformer paper"))
    (doc,) = result.documents
    assert doc.title == "The Transformer paper"
    assert [s.location for s in doc.sections] == ["p. 1", "p. 3"]  # the empty page holds nothing
    assert "quokka benchmark" in doc.sections[1].text
    assert doc.meta["pages"] == "3"


def test_pdf_outline_gives_each_page_its_heading_path(tmp_path, store):
    outline = [(0, "1 Introduction", 0), (0, "2 Design", 1), (1, "2.1 Storage", 2), (0, "3 Results", 4)]
    pages = [["intro words"], ["design words"], ["storage words"], ["more storage"], ["results words"]]
    (doc,) = _extract(tmp_path, "paper.pdf", pdf_bytes(pages, outline=outline)).documents
    assert [s.heading for s in doc.sections] == [
        "1 Introduction",
        "2 Design",
        "2 Design > 2.1 Storage",
        "2 Design > 2.1 Storage",
        "3 Results",
    ]
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "paper.pdf").write_bytes(pdf_bytes(pages, outline=outline))
    index_folder(store, notes)
    hit = _search(store, "more storage")[0]
    assert (hit.title, hit.location) == ("2 Design > 2.1 Storage", "p. 4")


def test_pdf_without_metadata_title_uses_its_first_line(tmp_path):
    result = _extract(tmp_path, "paper.pdf", pdf_bytes([["12", "Deep Residual Learning", "body text"]]))
    assert result.documents[0].title == "Deep Residual Learning"


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        (pdf_bytes([["secret"]], encrypt=True), "encrypted"),
        (pdf_bytes([["a"], ["b"]], image_only=True), "no text layer"),
        (pdf_bytes([["cut short"]])[:150], "malformed"),
        (b"%PDF-1.7\n" + os.urandom(3000), "malformed"),
    ],
)
def test_pdfs_that_cannot_be_indexed_say_why(tmp_path, content, reason):
    result = _extract(tmp_path, "bad.pdf", content)
    assert result.skip_reason == reason and not result.documents, result


def test_html_keeps_the_main_text_and_headings_not_navigation_or_scripts(tmp_path):
    page = """<!doctype html><html><head><title>Rust ownership</title><style>.x{color:red}</style>
    <script>var tracking = "cookiemonster";</script></head><body>
    <nav><a href="/">Home</a> navlinkword</nav>
    <main><h1>Ownership</h1><p>The <b>borrow</b> checker.</p><h2>Moves</h2><ul><li>one</li><li>two</li></ul>
    <pre>fn main() {\n    let x = vec![1];\n}</pre></main>
    <footer>footerword</footer></body></html>"""
    (doc,) = _extract(tmp_path, "page.html", page).documents
    text = doc.sections[0].text
    assert doc.title == "Rust ownership"
    assert "# Ownership" in text and "## Moves" in text and "The borrow checker." in text
    assert "- one\n- two" in text and "```\nfn main() {\n    let x = vec![1];\n}\n```" in text
    for absent in ("cookiemonster", "color:red", "navlinkword", "footerword"):
        assert absent not in text


def test_notebook_cells_are_located_and_code_is_chunked_as_the_kernel_language(tmp_path):
    outputs = {
        1: [{"output_type": "stream", "text": "short printed answer\n"}],
        2: [{"output_type": "stream", "text": "x" * 5000}],
    }
    nb = notebook_json(
        [("markdown", "# Churn study\n\nWhy customers leave."), ("code", "print(42)"), ("code", "big()")],
        language="julia",
        outputs=outputs,
    )
    (doc,) = _extract(tmp_path, "study.ipynb", nb).documents
    assert doc.title == "Churn study" and doc.meta["language"] == "julia"
    assert [(s.kind, s.location) for s in doc.sections] == [
        ("markdown", "cell 1"),
        ("code:julia", "cell 2"),
        ("code:julia", "cell 3"),
    ]
    assert "short printed answer" in doc.sections[1].text
    assert "x" * 100 not in doc.sections[2].text  # long outputs are left out


@pytest.mark.parametrize(
    ("name", "content"),
    [
        ("design.docx", docx_bytes([("Title", "Payments"), ("Heading2", "Idempotency"), ("", "Keys live 24 hours.")])),
        ("design.odt", odt_bytes([(1, "Payments"), (2, "Idempotency"), (0, "Keys live 24 hours.")])),
    ],
)
def test_office_headings_become_markdown_headings(tmp_path, name, content):
    (doc,) = _extract(tmp_path, name, content).documents
    assert doc.title == "Payments"
    assert doc.sections[0].text == "# Payments\n\n## Idempotency\n\nKeys live 24 hours.\n"


def test_mbox_yields_one_document_per_message_preferring_plain_text(tmp_path):
    when = datetime(2023, 5, 4, 9, 30, tzinfo=timezone.utc)
    messages = [
        email_bytes(
            "Use Postgres", "Ann <ann@example.org>", "Ledger in Postgres.\nFrom now on.", when, html="<p>HTMLONLY</p>"
        ),
        email_bytes("Only HTML", "Bob <bob@example.org>", "", html="<h1>Menu</h1><p>Pizza <b>Friday</b></p>"),
    ]
    docs = _extract(tmp_path, "team.mbox", mbox_bytes(messages)).documents
    assert [(d.part, d.title) for d in docs] == [("1", "Use Postgres"), ("2", "Only HTML")]
    first = docs[0].sections[0].text
    assert "Ledger in Postgres.\nFrom now on." in first and "HTMLONLY" not in first
    assert docs[0].meta["sender"] == "Ann <ann@example.org>" and docs[0].date == when.timestamp()
    assert "Pizza Friday" in docs[1].sections[0].text


def test_eml_is_one_message(tmp_path):
    (doc,) = _extract(tmp_path, "note.eml", email_bytes("Réunion", "Zoë <z@example.org>", "Ordre du jour")).documents
    assert doc.title == "Réunion" and "Ordre du jour" in doc.sections[0].text and doc.part == ""


def test_every_extracted_suffix_has_an_extractor():
    assert set(EXTRACTED_SUFFIXES.values()) == set(EXTRACTED_KINDS)
    assert {classify(f"x{suffix}") for suffix in EXTRACTED_SUFFIXES} == set(EXTRACTED_KINDS)


# ---------------------------------------------------------------- the worker


def test_the_worker_returns_what_the_extractor_returns(tmp_path):
    path = write_pdf(tmp_path / "p.pdf", [["workerword on page one"], ["and page two"]])
    via_worker = extract_file(path.read_bytes(), "pdf", BIG)
    assert via_worker == extract_in_process(path.read_bytes(), "pdf", BIG)


# ---------------------------------------------------------------- through the pipeline


@pytest.fixture
def library(notes):
    write_pdf(notes / "paper.pdf", [["Attention Is All You Need"], ["The quokka benchmark result"]], title="Attention")
    write_files(
        notes,
        {
            "page.html": "<title>Saved page</title><h1>Ownership</h1><p>borrowcheck rules</p>",
            "nb.ipynb": notebook_json([("markdown", "# Study"), ("code", "churnrate = 0.2")]),
            "design.docx": docx_bytes([("Heading1", "Idempotency"), ("", "ledgerkey stored")]),
            "team.mbox": mbox_bytes(
                [
                    email_bytes("Use Postgres", "Ann <ann@example.org>", "postgresword decision"),
                    email_bytes("Lunch", "Bob <bob@example.org>", "pizzaword friday"),
                ]
            ),
            "notes.md": "# Plain\n\nmarkdownword\n",
        },
    )
    return notes


def test_every_format_is_found_by_words_inside_it_with_its_location(store, library):
    _, run = index_folder(store, library)
    assert not run.reports[0].errors and not skipped_files(store)
    expected = {
        "quokka": ("paper.pdf", "p. 2"),
        "borrowcheck": ("page.html", ""),
        "churnrate": ("nb.ipynb", "cell 2"),
        "ledgerkey": ("design.docx", ""),
        "pizzaword": ("team.mbox#2", ""),
        "markdownword": ("notes.md", ""),
    }
    for word, (path, location) in expected.items():
        top = _search(store, word)[0]
        assert (top.path, top.location) == (path, location), word
    mail = _search(store, "pizzaword")[0]
    assert mail.abs_path == str(library / "team.mbox") and mail.title == "Lunch"
    assert [h.path for h in _search(store, "quokka ext:pdf")] == ["paper.pdf"]
    assert _search(store, "quokka ext:md") == []


def test_extracted_documents_are_reindexed_only_when_their_bytes_change(store, library):
    index_folder(store, library)
    run = reindex(store)
    assert run.reports[0].unchanged == 6 and run.reports[0].added == 0
    os.utime(library / "paper.pdf", (1, 1))  # touched, same bytes
    assert reindex(store).reports[0].unchanged == 6
    write_pdf(library / "paper.pdf", [["A different paper about wombats"]])
    run = reindex(store)
    assert run.reports[0].changed == 1
    assert _search(store, "wombats")[0].location == "p. 1" and not _search(store, "quokka")


def test_messages_removed_from_an_mbox_leave_the_index(store, library):
    index_folder(store, library)
    (library / "team.mbox").write_bytes(mbox_bytes([email_bytes("Use Postgres", "Ann <a@x>", "postgresword")]))
    reindex(store)
    assert _search(store, "postgresword") and not _search(store, "pizzaword")
    (library / "team.mbox").unlink()
    reindex(store)
    assert not _search(store, "postgresword")


def test_a_file_that_becomes_unextractable_is_skipped_and_its_old_text_removed(store, library):
    index_folder(store, library)
    (library / "paper.pdf").write_bytes(pdf_bytes([["x"]], encrypt=True))
    reindex(store)
    skips = {s.rel_path: (s.reason, s.detail) for _, s in skipped_files(store)}
    assert skips["paper.pdf"] == ("encrypted", "the PDF needs a password")
    assert not _search(store, "quokka")


def test_the_extracted_text_is_rebuilt_for_the_preview_at_the_lines_of_its_chunks(store, library):
    source, _ = index_folder(store, library)
    text = document_text(store, source.name, "paper.pdf")
    assert text == "Attention Is All You Need\nThe quokka benchmark result"
    hit = _search(store, "quokka")[0]
    assert text.split("\n")[hit.line_start - 1] == "The quokka benchmark result"
    lines = document_text(store, source.name, "team.mbox#2").split("\n")
    assert lines[0] == "# Lunch" and "pizzaword friday" in lines


def test_a_long_line_cut_into_many_chunks_is_one_line_again(store, notes):
    (notes / "long.html").write_text("<h1>Top</h1><p>" + "wordy " * 2000 + "</p><p>after</p>")
    source, _ = index_folder(store, notes)
    lines = document_text(store, source.name, "long.html").split("\n")
    assert lines[0] == "# Top" and lines[2].split() == ["wordy"] * 2000 and lines[-1] == "after"


def test_notebook_language_and_mail_sender_are_recorded(store, library):
    index_folder(store, library)
    meta = dict(store.execute("SELECT rel_path, meta FROM documents WHERE meta != ''"))
    assert json.loads(meta["nb.ipynb"])["language"] == "python"
    assert json.loads(meta["team.mbox#1"])["sender"] == "Ann <ann@example.org>"


def test_mail_date_is_the_document_date(store, library):
    index_folder(store, library)
    ((created, updated),) = {(r.created_at, r.updated_at) for r in all_chunks(store) if r.rel_path == "team.mbox#1"}
    assert created == updated == datetime(2024, 3, 1, 12, 0, tzinfo=timezone.utc).timestamp()


def test_titles_and_skip_details_from_a_file_carry_no_control_characters(tmp_path):
    title = "Evil\x1b[2J\x1b]0;owned\x07 title\nsecond line"
    (doc,) = _extract(tmp_path, "evil.html", f"<title>{title}</title><p>body</p>").documents
    assert doc.title == "Evil [2J ]0;owned title second line"
    mail = email_bytes("Subject \x1b[31mred", "a@example.org", "body")
    (message,) = _extract(tmp_path, "evil.eml", mail).documents
    assert "\x1b" not in message.title


# ---------------------------------------------------------------- damaged files, any format


def _valid_files() -> dict[str, bytes]:
    return {
        "a.pdf": pdf_bytes([["one page of text"], ["two"]], title="T"),
        "a.html": b"<html><head><title>t</title></head><body><h1>x</h1><p>y</p></body></html>",
        "a.ipynb": notebook_json([("markdown", "# m"), ("code", "x = 1")]).encode(),
        "a.docx": docx_bytes([("Heading1", "H"), ("", "text")]),
        "a.odt": odt_bytes([(1, "H"), (0, "text")]),
        "a.eml": email_bytes("s", "a@example.org", "body"),
        "a.mbox": mbox_bytes([email_bytes("s", "a@example.org", "body")] * 2),
    }


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    name=st.sampled_from(sorted(_valid_files())),
    cut=st.floats(0, 1),
    flips=st.lists(st.tuples(st.floats(0, 1), st.integers(0, 255)), max_size=8),
)
def test_damaged_files_of_every_format_give_text_or_a_reason_never_an_error(tmp_path, name, cut, flips):
    raw = bytearray(_valid_files()[name])
    for where, value in flips:
        raw[int(where * (len(raw) - 1))] = value
    raw = bytes(raw[: max(1, int(len(raw) * cut))]) if cut < 1 else bytes(raw)
    result = _extract(tmp_path, name, raw)
    if result.skip_reason is None:
        assert result.documents and all(isinstance(s.text, str) for d in result.documents for s in d.sections)
    else:
        assert not result.documents and result.skip_reason in SKIP_REASONS, result


def _thunderbird(messages: list[bytes]) -> bytes:
    return mbox_bytes(messages).replace(b"From sender@example.org ", b"From - ")


def test_a_mailbox_without_extension_is_recognised_by_its_first_line(store, notes):
    write_files(
        notes,
        {
            "Mail/Inbox": _thunderbird([email_bytes("Hello", "Ann <a@x>", "inboxword"), email_bytes("Re", "B", "two")]),
            "Mail/Inbox.msf": '// <!-- <mdb:mork:z v="1.4"/> -->\n',  # Thunderbird's summary: not mail
            "Letters": "From the desk of the editor: lettersword\n",  # prose, not a mailbox
            "Notes": "From alice yesterday at 10:30 about notesword\n",  # no mailbox date: prose
            "old.mail": _thunderbird([email_bytes("Old", "C", "oldword")]),  # an extension: never sniffed
        },
    )
    os.mkfifo(notes / "Mail" / "Pipe")  # must not hang the sniffing
    _, run = index_folder(store, notes)
    assert not run.reports[0].errors
    paths = set(documents_by_path(store))
    assert paths == {"Mail/Inbox#1", "Mail/Inbox#2"}
    hit = _search(store, "inboxword")[0]
    assert hit.path == "Mail/Inbox#1" and hit.abs_path == str(notes / "Mail" / "Inbox") and hit.title == "Hello"
    (notes / "Mail" / "Inbox").write_bytes(_thunderbird([email_bytes("Hello", "Ann <a@x>", "inboxword")]))
    reindex(store)
    assert set(documents_by_path(store)) == {"Mail/Inbox#1"}


def test_a_folder_named_like_a_message_is_not_taken_for_one(store, notes):
    one = [email_bytes("Use Postgres", "Ann <a@x>", "postgresword")]
    write_files(
        notes,
        {
            "team.mbox": mbox_bytes(one * 3),
            "team.mbox#2/plan.md": "# Plan\n\nplanword\n",  # a folder whose name a message could have
            "team.mbox#7": "From - Mon Jan 01 09:00:00 2024\nSubject: x\n\nstrayword\n",  # no kind: not indexed
            "Archive#3": _thunderbird(one),  # a mailbox, named as a message of "Archive" would be
        },
    )
    index_folder(store, notes)
    (notes / "team.mbox").write_bytes(mbox_bytes(one))  # two messages fewer
    reindex(store)
    paths = set(documents_by_path(store))
    assert paths == {"team.mbox#1", "team.mbox#2/plan.md"}
    reasons = {s.rel_path: s.reason for _, s in skipped_files(store)}
    assert reasons == {"Archive#3": "reserved-name"}


def test_a_mailbox_cut_at_the_text_limit_says_so(monkeypatch):
    from kenning.ingest.extract import mail
    from kenning.ingest.extract.model import TextBudget

    monkeypatch.setattr(mail, "TextBudget", lambda: TextBudget(120))
    messages = [email_bytes(f"Subject {i}", "a@x", "word " * 20) for i in range(5)]
    docs = mail.extract_mbox(mbox_bytes(messages))
    assert len(docs) < 5 and docs[-1].meta["truncated"]
    monkeypatch.undo()
    assert all("truncated" not in d.meta for d in mail.extract_mbox(mbox_bytes(messages)))


# ---------------------------------------------------------------- generator-default titles (#25 item 9)


@pytest.mark.parametrize(
    "boilerplate",
    ["Enscript Output", "Microsoft Word - draft3.docx", "Untitled", "untitled document", "Untitled-1", "runbook.pdf"],
)
def test_a_pdf_whose_metadata_title_is_generator_boilerplate_is_titled_by_its_first_line(tmp_path, boilerplate):
    result = _extract(tmp_path, "runbook.pdf", pdf_bytes([["Restoring a release", "Step one"]], title=boilerplate))
    assert result.documents[0].title == "Restoring a release"


def test_a_pdf_titled_with_its_own_file_name_is_titled_by_its_first_line(tmp_path):
    result = _extract(tmp_path, "q3_board_notes.pdf", pdf_bytes([["Board meeting, Q3"]], title="q3_board_notes"))
    assert result.documents[0].title == "Board meeting, Q3"


def test_a_real_metadata_title_is_kept(tmp_path):
    result = _extract(tmp_path, "x.pdf", pdf_bytes([["1 Introduction"]], title="Untitled Goose Game: a postmortem"))
    assert result.documents[0].title == "Untitled Goose Game: a postmortem"


def test_html_and_office_titles_that_are_boilerplate_give_way_to_the_first_heading(tmp_path):
    (page,) = _extract(tmp_path, "saved.html", "<title>Untitled</title><h1>Ownership rules</h1><p>x</p>").documents
    assert page.title == "Ownership rules"
    word = docx_bytes([("Heading1", "Quarterly plan"), ("", "text")], title="Microsoft Word - plan.docx")
    (doc,) = _extract(tmp_path, "plan.docx", word).documents
    assert doc.title == "Quarterly plan"
    (odt,) = _extract(tmp_path, "notes.odt", odt_bytes([(1, "Meeting notes"), (0, "text")], title="notes")).documents
    assert odt.title == "Meeting notes"


def test_a_store_indexed_with_a_generator_title_is_retitled_on_the_next_run(tmp_path):
    """m013: documents extracted before the rule are read again once (#25 item 9)."""
    from kenning.storage import open_store

    notes = tmp_path / "notes"
    notes.mkdir()
    write_pdf(notes / "runbook.pdf", [["Restoring a release"]], title="Enscript Output")
    db = tmp_path / "k.db"
    store = open_store(db)
    index_folder(store, notes)
    store.execute("UPDATE documents SET title = 'Enscript Output'")  # as the old extractor stored it
    store.execute("DELETE FROM migrations WHERE name = 'm013_document_titles'")
    store.close()
    store = open_store(db)
    try:
        reindex(store)
        assert store.scalar("SELECT title FROM documents") == "Restoring a release"
    finally:
        store.close()
