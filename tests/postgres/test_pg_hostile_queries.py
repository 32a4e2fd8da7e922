"""Hostile queries against a team store: the fuzzer's corpus, and proof that user text only
ever reaches PostgreSQL as parameters (#23 item 9)."""

from __future__ import annotations

import re
import uuid

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kenning.embedding import FakeEmbedder
from kenning.ingest.indexer import Indexer
from kenning.ingest.sources import add_source
from kenning.search.engine import SearchEngine, SearchOptions
from kenning.storage import open_store
from kenning.storage.postgres import open_pg_store
from pgtesting import copy_store
from reliability.helpers import code, note, pick, write_files
from reliability.test_hostile_queries import TOKENS, _check, query_text

EXAMPLES = pick(120, 3000)


@pytest.fixture(scope="module")
def team(tmp_path_factory, pg_server):
    base = tmp_path_factory.mktemp("pg-queries")
    files = {f"n{i:02}.md": note(i) for i in range(30)}
    files.update({f"src/mod{i}.py": code(i) for i in range(5)})
    files["tests/test_x.md"] = "---\ntags: [test]\n---\n# Test note\n\ntested words\n"
    staging = open_store(base / "k.db")
    add_source(staging, write_files(base / "notes", files))
    Indexer(staging, FakeEmbedder).run()
    staging.close()
    database = pg_server.new_database()
    store = open_pg_store(pg_server.url(database))
    copy_store(base / "k.db", store)
    yield store, database
    store.close()
    pg_server.drop_database(database)


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    text=query_text,
    mode=st.sampled_from(["hybrid", "lexical", "vector"]),
    fusion=st.sampled_from(["rrf", "linear"]),
    limit=st.integers(min_value=1, max_value=60),
)
def test_the_engine_over_a_team_store_never_raises(team, text, mode, fusion, limit):
    store, _ = team
    _check(SearchEngine(store, FakeEmbedder()), text, SearchOptions(limit=limit, mode=mode, fusion=fusion))


NASTY = [
    "'; DROP TABLE kenning.chunks; --",
    "x' OR '1'='1",
    "$$; SELECT pg_sleep(10); $$",
    "\\'; TRUNCATE sources; --",
    "a:* & !b | (c <-> d)",
    "'a':1A",
    "source:x'); DELETE FROM kenning.documents; --",
    "path:%' OR 1=1 --",
    "path:*'; --",
    'ext:"; DROP',
    "tag:' OR ''='",
    '"quoted \' phrase"',
    "-'; --",
    "a\x00b",
    "\ud800 lone",
]


def test_user_text_reaches_the_server_only_as_parameters(team, pg_server):
    """Every statement the server runs while hostile queries are searched is logged; the
    marker in each query appears in the logged parameters, never in a statement's text."""
    store, database = team
    marker = "zq" + uuid.uuid4().hex[:10]
    pg_server.admin(f"ALTER DATABASE \"{database}\" SET log_statement = 'all'")
    searcher = open_pg_store(pg_server.url(database))  # a new session, so it logs
    try:
        engine = SearchEngine(searcher, FakeEmbedder())
        for text in NASTY + [" ".join(TOKENS[:30])]:
            for mode in ("lexical", "hybrid"):
                query = f"{marker}{text} {text}{marker} source:{marker}' path:{marker}%' tag:{marker}"
                _check(engine, query, SearchOptions(mode=mode, limit=20))
    finally:
        searcher.close()
        pg_server.admin(f'ALTER DATABASE "{database}" RESET log_statement')
    log = (pg_server.pgdata / "log").read_text(encoding="utf-8", errors="replace")
    statements = re.findall(r"LOG:  (?:statement|execute [^:]*): (.*)", log)
    assert any("FROM chunks" in s for s in statements), "the server logged no statement"
    leaked = [s for s in statements if marker in s]
    assert not leaked, leaked[:3]
    assert marker in log  # it did reach the server: as a parameter
    assert store.chunks.count() > 0 and store.sources.list()  # nothing was dropped or emptied
