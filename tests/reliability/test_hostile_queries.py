"""Hostile queries: no exception, no SQL error, bounded time.

hypothesis drives the engine (every mode and fusion) with text built from FTS5 and
filter syntax, SQL fragments, odd Unicode, control characters and lone surrogates;
the CLI gets the same through argv.  atheris (coverage-guided, libFuzzer) runs the
engine in a subprocess for a bounded number of runs when it is installed.
KENNING_LONG_TESTS=1 multiplies the examples and the atheris runs.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import subprocess
import sys
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kenning.cli.main import main
from kenning.embedding import FakeEmbedder
from kenning.ingest.indexer import Indexer
from kenning.ingest.sources import add_source
from kenning.search.engine import SearchEngine, SearchOptions
from kenning.search.query import parse_query
from kenning.storage import open_store
from reliability.helpers import code, count, note, pick, write_files

EXAMPLES = pick(200, 5000)
PARSER_EXAMPLES = pick(300, 50000)
ATHERIS_RUNS = pick(1000, 200000)
ATHERIS_SECONDS = pick(12, 1800)  # whichever limit comes first
MAX_SECONDS_PER_QUERY = (
    10.0  # catches runaway queries (backtracking, huge scans); ~100x a normal one, so load cannot trip it
)

TOKENS = [
    '"',
    "'",
    "*",
    "^",
    "(",
    ")",
    "{",
    "}",
    "[",
    "]",
    ":",
    "-",
    "+",
    "NEAR(",
    "NEAR/2",
    "AND",
    "OR",
    "NOT",
    "source:",
    "path:",
    "ext:",
    "tag:",
    "after:",
    "before:",
    "-tag:test",
    "tag:test",
    "after:2024-13-45",
    "before:yesterday",
    "after:9999-01-01",
    "after:0000-00-00",
    "path:../..",
    "ext:.md",
    'path:"a b',
    "source:nope",
    "'; DROP TABLE chunks; --",
    "%",
    "_",
    "\\",
    "\x00",
    "\u202e",
    "\ufeff",
    "\ud800",
    "\U0001f600",
    "ﬁ",
    "İ",
    "ß",
    "note",
    "details",
    "w5",
    "func_1_2",
    "src/mod1.py",
    "x" * 300,
    "a" * 3,
    " ",
    "\t",
    "\n",
    "...",
    "::",
    "--",
    "__init__",
    "1e309",
    "NaN",
    "-1",
    "0x",
    "𝔘𝔫𝔦",
    "日本語",
    "مرحبا",
    "*" * 50,
]

query_text = st.one_of(
    st.text(max_size=200),
    st.lists(st.sampled_from(TOKENS), max_size=25).map(" ".join),
    st.lists(st.sampled_from(TOKENS), max_size=25).map("".join),
    st.lists(st.one_of(st.sampled_from(TOKENS), st.text(max_size=8)), max_size=15).map(" ".join),
)


@pytest.fixture(scope="module")
def engine_store(tmp_path_factory):
    base = tmp_path_factory.mktemp("queries")
    files = {f"n{i:02}.md": note(i) for i in range(30)}
    files.update({f"src/mod{i}.py": code(i) for i in range(5)})
    files["tests/test_x.md"] = "---\ntags: [test]\n---\n# Test note\n\ntested words\n"
    root = write_files(base / "notes", files)
    store = open_store(base / "k.db")
    add_source(store, root)
    Indexer(store, FakeEmbedder).run()
    yield store
    store.close()


def _check(engine: SearchEngine, text: str, options: SearchOptions) -> None:
    started = time.perf_counter()
    result = engine.search(text, options)
    elapsed = time.perf_counter() - started
    assert elapsed < MAX_SECONDS_PER_QUERY, (text, elapsed)
    assert len(result.hits) <= options.limit
    for hit in result.hits:
        assert 0.0 <= hit.score <= 1.0


@settings(max_examples=PARSER_EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
@given(text=query_text)
def test_parser_never_raises(text):
    parsed = parse_query(text)
    assert isinstance(parsed.content_terms, tuple)
    count("fuzzed queries run (parser)")


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    text=query_text,
    mode=st.sampled_from(["hybrid", "lexical", "vector"]),
    fusion=st.sampled_from(["rrf", "linear"]),
    limit=st.integers(min_value=1, max_value=60),
)
def test_engine_never_raises_and_answers_quickly(engine_store, text, mode, fusion, limit):
    engine = SearchEngine(engine_store, FakeEmbedder())
    _check(engine, text, SearchOptions(limit=limit, mode=mode, fusion=fusion))
    count("fuzzed queries run (engine)")


def test_known_nasty_queries(engine_store):
    engine = SearchEngine(engine_store, FakeEmbedder())
    nasty = [
        "",
        " ",
        '"',
        '""',
        '"""',
        "*",
        "NEAR(a b",
        "a NEAR/-1 b",
        "(",
        ")",
        "a AND",
        "OR OR",
        "NOT",
        "-",
        "--",
        "source:",
        "path:",
        'path:"',
        "after:",
        "after:2024-02-30",
        "before:-1",
        "tag:",
        "-tag:",
        "ext:",
        "\x00",
        "a\x00b",
        "\ud800",
        "note \udcff",
        "'; DROP TABLE chunks; --",
        "chunks_fts MATCH 'x'",
        "x" * 10_000,
        " ".join(f"w{i}" for i in range(2000)),
        "\u202e\u202d",
        "détails",
        "DETAILS",
        "*" * 1000,
        '"' * 1001,
        "a:" * 500,
        "-" * 500 + "x",
    ]
    for text in nasty:
        for mode in ("hybrid", "lexical", "vector"):
            _check(engine, text, SearchOptions(limit=10, mode=mode))
            count("fuzzed queries run (hand-picked)")
    # The store was never written by searching.
    assert engine_store.chunks.count() > 0


@settings(max_examples=pick(40, 1000), deadline=None, suppress_health_check=list(HealthCheck))
@given(words=st.lists(query_text, min_size=1, max_size=4))
def test_cli_search_with_hostile_argv(engine_store, words):
    out, err = io.StringIO(), io.StringIO()
    argv = ["--store", str(engine_store.path), "--model", "fake", "search", "--", *words]
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main(argv)
    assert rc in (0, 2), err.getvalue()
    assert "Traceback" not in err.getvalue()
    count("fuzzed queries run (CLI)")


ATHERIS_HARNESS = r"""
import sys, time
import atheris
with atheris.instrument_imports(include=["kenning.search"]):  # numpy etc. would take minutes
    from kenning.search import query as _q, fts as _f, filters as _fl, engine as _e
from kenning.embedding import FakeEmbedder
from kenning.search.engine import SearchEngine, SearchOptions
from kenning.storage import open_store

store = open_store(sys.argv[1])
engine = SearchEngine(store, FakeEmbedder())
MODES = ("hybrid", "lexical", "vector")

def one(data: bytes) -> None:
    fdp = atheris.FuzzedDataProvider(data)
    mode = MODES[fdp.ConsumeIntInRange(0, 2)]
    text = fdp.ConsumeUnicode(400)
    started = time.perf_counter()
    engine.search(text, SearchOptions(limit=10, mode=mode))
    if time.perf_counter() - started > 2.0:
        raise AssertionError(f"slow query {text!r}")

atheris.Setup([sys.argv[0], *sys.argv[2:]], one)
atheris.Fuzz()
"""


def test_atheris_fuzz_of_the_engine(engine_store, tmp_path):
    pytest.importorskip("atheris")
    harness = tmp_path / "harness.py"
    harness.write_text(ATHERIS_HARNESS)
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for i, seed in enumerate(["w5 note", 'source:notes "a b" -tag:test', "NEAR(a b) after:2024"]):
        (corpus / f"s{i}").write_bytes(b"\x00" + seed.encode())
    proc = subprocess.run(
        [
            sys.executable,
            str(harness),
            str(engine_store.path),
            f"-runs={ATHERIS_RUNS}",
            f"-max_total_time={ATHERIS_SECONDS}",
            "-max_len=512",
            "-timeout=10",
            "-rss_limit_mb=4096",
            str(corpus),
        ],
        capture_output=True,
        text=True,
        timeout=pick(240, 3600),
        env={**os.environ, "PYTHONHASHSEED": "0"},
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    done = re.search(r"Done (\d+) runs", proc.stderr)
    assert done, proc.stderr[-2000:]
    count("fuzzed queries run (atheris)", int(done.group(1)))
