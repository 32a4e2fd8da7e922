"""Compound words reach bm25 as their words (issue #28 item 3): the plain bm25 baseline
reads "fuzzy-set-theoretic" as three words, and as one FTS5 phrase Kenning's keyword list
found only the chunks that write the compound so — CISI's keyword Recall@100 fell under
the baseline's.  A bound prefix stays with its word, identifiers and abbreviations stay
whole."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from gitutil import commit, make_repo
from kenning.search.engine import COMPOUND_NAME_WORDS, SearchEngine, SearchOptions
from kenning.search.query import compound_words, parse_query
from kenning_testing import index_folder, json_hits, write_files

LEXICAL = SearchOptions(mode="lexical", limit=10)


@pytest.mark.parametrize(
    ("term", "expected"),
    [
        ("fuzzy-set-theoretic", ("fuzzy", "set", "theoretic")),
        ("zero/one", ("zero", "one")),
        ("and/or", ("and", "or")),
        ("conditions--that", ("conditions", "that")),
        ("three-dimensional", ("three", "dimensional")),
        ("non-steady-state", ("non-steady", "state")),  # a bound prefix stays with its word
        ("pre-school", ("pre-school",)),
        ("re-entry", ("re-entry",)),
        ("x-ray", ("x-ray",)),  # a single letter: one term
        ("e-mail", ("e-mail",)),
        ("e.g", ("e.g",)),  # an abbreviation
        ("os.path", ("os.path",)),  # identifiers and paths stay whole
        ("pass_context", ("pass_context",)),
        ("src/kenning/engine.py", ("src/kenning/engine.py",)),
        ("host:port", ("host:port",)),
        ("retrieval", ("retrieval",)),
    ],
)
def test_compound_words(term, expected):
    assert compound_words(term) == expected


def _engine(store, notes, files):
    write_files(notes, files)
    index_folder(store, notes)
    return SearchEngine(store, None)


def _names(result):
    return [h.path.rsplit("/", 1)[-1] for h in result.hits]


def test_a_compound_finds_the_chunks_that_use_its_words(store, notes):
    engine = _engine(
        store,
        notes,
        {
            "sets.md": "# Membership\n\ngrades of membership in fuzzy sets\n",
            "hedges.md": "# Hedges\n\na fuzzy-set-theoretic view of linguistic hedges\n",
            "cost.md": "# Cost\n\nconsiderations of cost and time\n",
            "other.md": "# Other\n\nnothing to do with any of it\n",
        },
    )
    names = _names(engine.search("fuzzy-set-theoretic considerations", LEXICAL))
    assert {"hedges.md", "sets.md", "cost.md"} <= set(names) and "other.md" not in names
    # Hybrid search keeps the compound as a phrase (engine.COMPOUND_WORDS_MODES).
    porter, _, _ = engine._porter_words(parse_query("fuzzy-set-theoretic"), SearchOptions(mode="hybrid"))
    assert porter == ("fuzzy-set-theoretic",)


def test_a_prefixed_word_is_one_word(store, notes):
    """ "pre-school" is not "pre" and "school": a note on pre-operative care is no match."""
    engine = _engine(
        store,
        notes,
        {
            "age.md": "# Language\n\nlanguage development at pre-school age\n",
            "care.md": "# Surgery\n\npre-operative care of the patient\n",
        },
    )
    assert _names(engine.search("pre-school", LEXICAL)) == ["age.md"]


def test_an_identifier_stays_one_term(store, notes):
    engine = _engine(
        store,
        notes,
        {
            "join.py": "import os\n\ndef where(a, b):\n    return os.path.join(a, b)\n",
            "words.md": "# Notes\n\nthe os we use, the path we took, join us\n",
        },
    )
    assert _names(engine.search("os.path", LEXICAL))[0] == "join.py"
    porter, _, _ = engine._porter_words(parse_query("os.path"), LEXICAL)
    assert porter == ("os.path",)


# A workspace as a developer has one: dated notes and a linked repository.  The note that
# names `sqlite-vec` must come first in keyword search, though the storage note and the
# Rust port say "sqlite" and "vec" more often (apart): the words find, the compound ranks.
WORKSPACE_NOTES = {
    "2026-03-vector-search.md": (
        "# Vector search in the desktop app\n\n"
        "We picked sqlite-vec for the embeddings: it is one loadable extension, the vectors\n"
        "live in the same file as the word index, and a KNN query is plain SQL.\n"
        "Open question: how sqlite-vec behaves past a million rows on a laptop.\n"
    ),
    "2026-02-storage.md": (
        "# Storage decisions\n\n"
        "SQLite in WAL mode for everything; one writer, many readers. The sqlite file sits in\n"
        "the user's data folder. We measured sqlite page sizes of 4k and 8k, and checkpoints\n"
        "after each batch. Backups use the sqlite backup API.\n\n"
        "## Meeting with Ana\n\n"
        "She asked whether the Rust port keeps its rows in a Vec or streams them; a vec of\n"
        "100k rows is fine.\n"
    ),
    "todo.md": "# Todo\n\n- review the search explanations\n- ship the sqlite migration\n",
}
PORT_STORE_RS = (
    "use rusqlite::Connection;\n\n"
    "/// Reads every row of the sqlite table into a Vec.\n"
    "pub fn load_rows(conn: &Connection) -> rusqlite::Result<Vec<Row>> {\n"
    "    let mut stmt = conn.prepare(ROWS)?; // one sqlite statement for the whole table\n"
    "    let mut out: Vec<Row> = Vec::new();\n"
    "    for row in stmt.query_map([], |r| Ok(Row { id: r.get(0)?, text: r.get(1)? }))? {\n"
    "        out.push(row?);\n"
    "    }\n"
    "    Ok(out)\n"
    "}\n"
)


def _workspace(tmp_path) -> str:
    from kenning.cli.main import main

    notes = write_files(tmp_path / "notes", WORKSPACE_NOTES)
    repo = make_repo(tmp_path, "port")
    readme = "# port\n\nA Rust port of the store (sqlite).\n"
    commit(repo, {"src/store.rs": PORT_STORE_RS, "README.md": readme}, datetime(2026, 3, 1, tzinfo=timezone.utc))
    store = str(tmp_path / "kenning.db")
    for folder in (notes, repo):
        assert main(["--store", store, "--model", "fake", "sources", "add", str(folder)]) == 0
    assert main(["--store", store, "--model", "fake", "index"]) == 0
    return store


def _searched(capsys, store: str, *args: str) -> list[dict]:
    from kenning.cli.main import main

    capsys.readouterr()
    assert main(["--store", store, "--model", "fake", "search", "--json", *args]) == 0
    return json_hits(capsys.readouterr().out)


def test_keyword_search_puts_the_note_that_writes_the_compound_first(tmp_path, capsys):
    store = _workspace(tmp_path)
    for mode in ("lexical", "hybrid"):
        hits = _searched(capsys, store, "--mode", mode, "sqlite-vec")
        assert hits[0]["path"] == "2026-03-vector-search.md", (mode, [h["path"] for h in hits])
    lexical = _searched(capsys, store, "--mode", "lexical", "--explain", "sqlite-vec")
    # The words still find the chunks that say them apart (recall as before) ...
    assert {"2026-02-storage.md", "src/store.rs"} <= {h["path"] for h in lexical}
    # ... and the rerank's early stop counts the bonus: one hit asked is the first of many.
    assert [h["path"] for h in _searched(capsys, store, "--mode", "lexical", "-n", "1", "sqlite-vec")] == [
        lexical[0]["path"]
    ]
    breakdown = lexical[0]["breakdown"]
    assert breakdown["proximity_parts"]["compound"] == 1.0 and breakdown["proximity"] > 0
    assert all(h["breakdown"]["proximity_parts"]["compound"] == 0.0 for h in lexical[1:])


def test_the_explanation_says_the_compound_was_written_together(tmp_path, capsys):
    from kenning.cli.main import main

    store = _workspace(tmp_path)
    capsys.readouterr()
    assert main(["--store", store, "--model", "fake", "search", "--mode", "lexical", "--explain", "sqlite-vec"]) == 0
    first = capsys.readouterr().out.split("\n 2. ")[0]
    assert "compound written together 1.00" in first


def test_a_compound_in_a_question_ranks_as_its_words(store, notes):
    """Past COMPOUND_NAME_WORDS words the query is a question, its compounds prose: where
    the words stand earns nothing (on Cranfield's longer questions it cost nDCG@10)."""
    engine = _engine(store, notes, WORKSPACE_NOTES)
    question = "which extension, sqlite-vec or another, keeps vectors beside the word index"
    assert len(parse_query(question).content_terms) > COMPOUND_NAME_WORDS
    hits = engine.search(question, LEXICAL).hits
    assert hits and all("compound" not in h.breakdown.proximity_parts for h in hits)
    assert all(h.breakdown.proximity == 0.0 for h in hits)
    short = engine.search("sqlite-vec", LEXICAL).hits
    assert short[0].breakdown.proximity_parts["compound"] == 1.0
    # Hybrid search keeps the compound a phrase, so no bonus is needed there.
    assert (
        "compound"
        not in engine.search("sqlite-vec", SearchOptions(mode="hybrid", limit=10)).hits[0].breakdown.proximity_parts
    )


@pytest.mark.parametrize("written", ["sqlite-vec", "sqlite vec", "sqlite_vec", "SQLite-Vec", "sqlite--vec"])
def test_the_compound_counts_as_written_together_however_it_is_joined(store, notes, written):
    engine = _engine(
        store, notes, {"named.md": f"# Setup\n\nload {written} first\n", "apart.md": "# Vec\n\nvec before sqlite\n"}
    )
    (hit,) = (h for h in engine.search("sqlite-vec", LEXICAL).hits if h.path.endswith("named.md"))
    assert hit.breakdown.proximity_parts["compound"] == 1.0
    (apart,) = (h for h in engine.search("sqlite-vec", LEXICAL).hits if h.path.endswith("apart.md"))
    assert apart.breakdown.proximity_parts["compound"] == 0.0  # both words, the wrong order
