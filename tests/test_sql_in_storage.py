"""All SQL lives in kenning.storage: no other package holds an SQL statement.

Storage is the seam a second backend (PostgreSQL with pgvector) would replace, so a
query written anywhere else would be a query that backend could not answer.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from kenning_testing import docstring_ids

PACKAGE = Path(__file__).parent.parent / "app" / "kenning"
SQL = re.compile(
    r"\bSELECT\b[\s\S]*\bFROM\b|\bINSERT\s+(?:OR\s+\w+\s+)?INTO\b|\bUPDATE\s+\w+\s+SET\b|\bDELETE\s+FROM\b"
    r"|\bMATCH\s+\?|\bPRAGMA\s+\w+|\bCREATE\s+(?:VIRTUAL\s+)?(?:TABLE|INDEX|TRIGGER)\b|\bDROP\s+TABLE\b"
)


def sql_strings(source: str) -> list[str]:
    """String literals (f-strings' literal parts too, joined) that read as SQL statements."""
    tree = ast.parse(source)
    skip = docstring_ids(tree)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            text = "".join(v.value for v in node.values if isinstance(v, ast.Constant) and isinstance(v.value, str))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip:
            text = node.value
        else:
            continue
        if SQL.search(text):
            found.append(text)
    return found


def test_the_detector_finds_sql():
    assert sql_strings('q = "SELECT id FROM chunks WHERE x = ?"')
    assert sql_strings('q = f"SELECT c.id FROM chunks c {JOIN} WHERE {cond}"')
    assert sql_strings('conn.execute("INSERT OR IGNORE INTO t (a) VALUES (?)")')
    assert sql_strings('s = "UPDATE chunks SET vector_fp = NULL"')
    assert sql_strings('s = "DELETE FROM scratch"')
    assert sql_strings('s = "PRAGMA data_version"')
    assert not sql_strings('"""Select the best chunks from the pool."""\nx = "No results."')


def test_no_sql_outside_storage():
    offenders = []
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE)
        if relative.parts[0] == "storage":
            continue
        offenders += [f"{relative}: {text.strip()[:80]}" for text in sql_strings(path.read_text(encoding="utf-8"))]
    assert not offenders, "SQL outside kenning.storage:\n" + "\n".join(offenders)


# Tests of the SQLite backend itself (its schema, migrations, FTS5 index, file), which
# may read and write its tables; every other test reads a store through storage.api
# (tests/kenning_testing.py: documents_by_path, chunk_ids, all_chunks) or the contract
# fixtures, so it holds for any backend.  The list may only shrink.
SQLITE_BACKEND_TESTS = {
    "test_sql_in_storage.py": "this file's detector cases",
    "pgtesting.py": "the PostgreSQL test server (roles, databases)",
    "gui/test_team_store.py": "a PostgreSQL role for the team store (GRANTs)",
    "test_storage.py": "the SQLite store: schema, transactions, triggers",
    "test_vector_migration.py": "SQLite migrations of the vector tables (m006, m010, m011)",
    "test_quantised_scan.py": "storage/vector_scan.py against the SQLite tables it reads",
    "test_substrings.py": "storage/substrings.py over the SQLite trigram index",
    "test_without_sqlite_vec.py": "the legacy vec0 table and its removal (m011)",
    "test_cjk.py": "the m012 migration and its FTS5 table",
    "test_textmatch.py": "the Python matcher against FTS5's own tokenizer",
    "test_query_fusion.py": "query expressions against FTS5's MATCH",
    "test_common_words.py": "FTS5's row set for a common word",
    "test_feedback.py": "a damaged FTS5 index",
    "test_query_semantics.py": "an old store layout, FTS5 integrity",
    "test_obsidian_vault.py": "a store from before m009 (tables dropped)",
    "gui/test_store_upgrade.py": "the app upgrading an old SQLite file",
    "test_extract.py": "m013 on a store written by the old extractor; document meta",
    "test_resume.py": "the SQLite file after the indexer is killed (integrity_check)",
    "test_chunking.py": "SQL as the text of a chunked note, not a query",
    "test_search.py": "SQL as a hostile query's text, not a query",
    "test_serve_safety.py": "an endless SQLite statement for the service's time bound (store.interrupt)",
    # #24's reliability suite checks the SQLite file itself (integrity, crash safety);
    # its plain reads (paths, counts) go through the interface (tests/kenning_testing.py).
    "reliability/helpers.py": "the SQLite file's integrity and a full snapshot of it",
    "reliability/test_corrupt_store.py": "a store from a future migration",
    "reliability/test_bad_values.py": "rows of the SQLite file damaged on purpose (settings, query vectors, codes)",
    "reliability/test_hostile_queries.py": "SQL as a hostile query's text, not a query",
}
TESTS = Path(__file__).parent
# tests/contract runs on every backend through the interface; tests/postgres and the
# benchmarks are the PostgreSQL backend's and the measurements' own.
OWN_BACKEND = ("contract", "postgres", "benchmarks")


def test_tests_above_storage_issue_no_sql():
    """Issue #22: tests of search, ingest, workspace and the front ends read the store
    through its interface, so the PostgreSQL backend can be put under them."""
    found, listed = [], set()
    for path in sorted(TESTS.rglob("*.py")):
        relative = path.relative_to(TESTS).as_posix()
        if relative.split("/")[0] in OWN_BACKEND:
            continue
        if sql_strings(path.read_text(encoding="utf-8")):
            listed.add(relative)
            if relative not in SQLITE_BACKEND_TESTS:
                found.append(relative)
    assert not found, "raw SQL in tests above storage (use storage.api):\n" + "\n".join(found)
    assert set(SQLITE_BACKEND_TESTS) <= listed, f"no SQL left: drop from the list {set(SQLITE_BACKEND_TESTS) - listed}"
