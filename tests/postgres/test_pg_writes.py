"""Writing to the team store: hostile text, killed writers, statistics that stay exact (#23 items 4, 9)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from kenning.core.types import ChunkDraft, Document
from kenning.storage.postgres import documents, lexical, open_pg_store, records
from kenning.storage.postgres.words import MAX_LEXEME_BYTES
from pgtesting import note_document, statistics_problems


def _document(source_id: int, rel_path: str, title: str = "t") -> Document:
    """Tags and title words holding quotes and a backslash, as a hostile note's would."""
    return note_document(source_id, rel_path, title=title, tags=("a'b", 'c"d', "e\\f"), title_words="a'b c\"d e\\f")


HOSTILE = [
    "it's a 'quoted' word and ''doubled'' quotes",
    'back\\slash \\\\ and "double" quotes \\x00 literally',
    "NUL in text\x00 here",
    "tsvector syntax: 'a':1A 'b':2 & | ! <-> :* ( )",
    "COPY syntax\ttabs\nnewlines\r\n\\N \\. end",
    "x" * (MAX_LEXEME_BYTES + 10) + " longword " + "é" * 1500,  # lexemes over PostgreSQL's limit
    " ".join(f"w{i % 50}" for i in range(20000)),  # positions past 16383
    "emoji 🦀 zwj 👩‍💻 rtl \u202e evil \ufeff bom \u0301 combining",
    "lone surrogate \udc80 in a file name's text",
    "",
]


def test_hostile_text_is_stored_and_found(pg_url):
    store = open_pg_store(pg_url)
    source = records.insert_source(store, kind="folder", root="/r'oot\\", name="n'ame")
    for number, text in enumerate(HOSTILE):
        drafts = [ChunkDraft(0, f"title {number} 'q' \\", "prose", text, 1, 1, location="p. '1'")]
        documents.replace_document(store, _document(source.id, f"f'{number}\\.md"), drafts, {0: {"a'b.md"}}, {0: "s"})
    assert records.count_chunks(store) == len(HOSTILE)
    assert not statistics_problems(store)
    assert lexical.ranked(store, [("quot",)], (3.0, 1.0), 5)
    assert lexical.ranked(store, [("longword",)], (3.0, 1.0), 5)
    assert lexical.ranked_substrings(store, ["'a':1a"], (3.0, 1.0), 5)
    stored = [r[0] for r in store.execute("SELECT text FROM chunks ORDER BY id")]
    assert stored[2] == "NUL in text\ufffd here" and "\udc80" not in stored[8]
    assert records.tag_counts(store) == {"a'b": len(HOSTILE), 'c"d': len(HOSTILE), "e\\f": len(HOSTILE)}
    store.close()


def test_replacing_and_deleting_keeps_the_statistics_exact(pg_url):
    store = open_pg_store(pg_url)
    source = records.insert_source(store, kind="folder", root="/r", name="n")
    for round_ in range(3):
        for number in range(6):
            words = " ".join(f"w{(number * 7 + k * round_) % 23}" for k in range(number * 5 + 1))
            drafts = [ChunkDraft(o, f"h{o}", "prose", f"{words} {o}", 1, 1) for o in range(number % 3 + 1)]
            documents.replace_document(
                store, _document(source.id, f"d{number}.md"), drafts, {}, {o: "s" for o in range(3)}
            )
        assert not statistics_problems(store)
    doc_ids = [r[0] for r in store.execute("SELECT id FROM documents ORDER BY id")]
    documents.delete_documents(store, doc_ids[:2])
    assert not statistics_problems(store)
    records.delete_source(store, source.id)  # a cascade from sources to every chunk
    assert not statistics_problems(store)
    assert records.count_chunks(store) == 0 and not lexical.vocabulary(store)
    store.close()


WRITER = textwrap.dedent(
    """
    import sys, time
    from kenning.core.types import ChunkDraft, Document
    from kenning.storage.postgres import documents, open_pg_store, records
    store = open_pg_store(sys.argv[1])
    source = records.get_source(store, "n")
    n = 0
    while True:
        n += 1
        drafts = [ChunkDraft(o, f"h{o}", "prose", f"chunk {o} of round {n} " + "word " * (o % 40), 1, 1) for o in range(200)]
        record = Document(source_id=source.id, rel_path=f"d{n % 3}.md", sha256=str(n), size=1, mtime=1.0,
                          created_at=None, updated_at=None, kind="markdown", title="t", tags=(), ext="md", is_test=False)
        documents.replace_document(store, record, drafts, {}, {o: "s" for o in range(200)})
        print(n, flush=True)
    """
)


@pytest.mark.slow
def test_a_killed_writer_leaves_each_document_whole(pg_url):
    """SIGKILL in the middle of a document's transaction: the server rolls it back."""
    store = open_pg_store(pg_url)
    records.insert_source(store, kind="folder", root="/r", name="n")
    writer = subprocess.Popen([sys.executable, "-c", WRITER, pg_url], stdout=subprocess.PIPE, text=True)
    try:
        for _ in range(3):  # let it commit a few documents
            assert writer.stdout.readline()
        time.sleep(0.05)  # then kill it somewhere inside the next one (where does not matter)
    finally:
        os.kill(writer.pid, signal.SIGKILL)
        writer.wait()
    deadline = time.monotonic() + 30
    while store.scalar(
        "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'kenning' AND pid <> pg_backend_pid()"
    ):
        assert time.monotonic() < deadline, "the killed writer's session never ended"
        time.sleep(0.05)
    per_document = store.execute(
        "SELECT d.sha256, count(c.id) FROM documents d LEFT JOIN chunks c ON c.document_id = d.id GROUP BY d.id"
    )
    assert per_document and all(count == 200 for _, count in per_document), per_document
    assert not statistics_problems(store)
    store.close()
