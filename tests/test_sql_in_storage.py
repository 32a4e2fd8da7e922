"""All SQL lives in kenning.storage: no other package holds an SQL statement.

Storage is the seam a second backend (PostgreSQL with pgvector) would replace, so a
query written anywhere else would be a query that backend could not answer.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

PACKAGE = Path(__file__).parent.parent / "app" / "kenning"
SQL = re.compile(
    r"\bSELECT\b[\s\S]*\bFROM\b|\bINSERT\s+(?:OR\s+\w+\s+)?INTO\b|\bUPDATE\s+\w+\s+SET\b|\bDELETE\s+FROM\b"
    r"|\bMATCH\s+\?|\bPRAGMA\s+\w+|\bCREATE\s+(?:VIRTUAL\s+)?(?:TABLE|INDEX|TRIGGER)\b|\bDROP\s+TABLE\b"
)


def _docstrings(tree: ast.AST) -> set[int]:
    ids = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                ids.add(id(first.value))
    return ids


def sql_strings(source: str) -> list[str]:
    """String literals (f-strings' literal parts too, joined) that read as SQL statements."""
    tree = ast.parse(source)
    skip = _docstrings(tree)
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
