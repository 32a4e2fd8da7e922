"""Shared pieces of the reliability suite: the long-mode switch, store snapshots and
health checks, and the counters the suite prints at the end.

KENNING_LONG_TESTS=1 multiplies kill points, fuzz examples and tree sizes; CI runs
the short setting.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path

from kenning.storage import open_store

LONG = os.environ.get("KENNING_LONG_TESTS", "") not in ("", "0")

# What the run survived/tried, printed by conftest at the end of the session.
COUNTS: Counter = Counter()
# Keys "category: what" of these categories are also totalled (see conftest).
CATEGORIES = ("security", "data-loss", "streams", "watch data-loss", "TOCTOU", "completion", "MCP writes")


def pick(short, long):
    """The CI value, or the manual (KENNING_LONG_TESTS=1) one."""
    return long if LONG else short


def count(key: str, n: int = 1) -> None:
    COUNTS[key] += n


# -- what a store holds, independent of row ids -------------------------------------


def snapshot(store) -> dict:
    """Everything a user's data consists of, keyed by names, never by row ids
    (ids legitimately differ between a clean and a recovered run)."""
    docs = store.execute(
        "SELECT s.name, d.rel_path, d.sha256, d.size, d.mtime, d.created_at, d.updated_at,"
        " d.kind, d.title, d.tags, d.ext, d.is_test FROM documents d"
        " JOIN sources s ON s.id = d.source_id ORDER BY 1, 2"
    )
    chunks = store.execute(
        "SELECT s.name, d.rel_path, c.ord, c.title, c.kind, c.text, c.line_start, c.line_end,"
        " c.input_sha, c.vector_fp FROM chunks c JOIN documents d ON d.id = c.document_id"
        " JOIN sources s ON s.id = d.source_id ORDER BY 1, 2, 3"
    )
    refs = store.execute(
        "SELECT s.name, d.rel_path, c.ord, r.path FROM chunk_refs r JOIN chunks c ON c.id = r.chunk_id"
        " JOIN documents d ON d.id = c.document_id JOIN sources s ON s.id = d.source_id ORDER BY 1, 2, 3, 4"
    )
    skipped = store.execute(
        "SELECT s.name, k.rel_path, k.reason FROM skipped_files k JOIN sources s ON s.id = k.source_id ORDER BY 1, 2"
    )
    sources = store.execute("SELECT name, kind, root, enabled FROM sources ORDER BY name")
    embeddings = store.execute("SELECT * FROM embeddings ORDER BY 1, 2")
    vectors = []
    if store.scalar("SELECT 1 FROM sqlite_master WHERE name='vector_codes'"):
        vectors = store.execute(
            "SELECT s.name, d.rel_path, c.ord, v.code FROM vector_codes v"
            " JOIN chunks c ON c.id = v.chunk_id JOIN documents d ON d.id = c.document_id"
            " JOIN sources s ON s.id = d.source_id ORDER BY 1, 2, 3"
        )
    return {
        "sources": sources,
        "documents": docs,
        "chunks": chunks,
        "refs": refs,
        "skipped": skipped,
        "embeddings": embeddings,
        "vectors": vectors,
        "vector_rows": store.scalar("SELECT count(*) FROM vector_codes") if vectors else 0,
        "pending": store.scalar("SELECT count(*) FROM chunks WHERE vector_fp IS NULL"),
        "fts_rows": _fts_count(store, "chunks_fts"),
        "tri_rows": _fts_count(store, "chunks_tri"),
    }


def _fts_count(store, table: str) -> int:
    # The docsize shadow table has one row per indexed row (content is external).
    return store.scalar(f"SELECT count(*) FROM {table}_docsize")


def diff_snapshots(a: dict, b: dict) -> list[str]:
    """Human-readable differences (empty when equal)."""
    out = []
    for key in a:
        if a[key] != b[key]:
            if isinstance(a[key], list):
                sa, sb = set(map(_hashable, a[key])), set(map(_hashable, b[key]))
                out.append(
                    f"{key}: {len(a[key])} vs {len(b[key])} rows; only left {_short(sa - sb)};"
                    f" only right {_short(sb - sa)}"
                )
            else:
                out.append(f"{key}: {a[key]!r} vs {b[key]!r}")
    return out


def _hashable(row):
    return tuple(x if not isinstance(x, bytes) else x[:8].hex() for x in row)


def _short(rows) -> str:
    rows = sorted(rows, key=repr)
    return repr([tuple(str(x)[:40] for x in r[:4]) for r in rows[:3]])


# -- health ------------------------------------------------------------------------


def health_problems(store) -> list[str]:
    """Everything that must hold for any store a crash may leave behind."""
    problems = []
    integrity = [r[0] for r in store.execute("PRAGMA integrity_check")]
    if integrity != ["ok"]:
        problems.append(f"integrity_check: {integrity[:5]}")
    fk = store.execute("PRAGMA foreign_key_check")
    if fk:
        problems.append(f"foreign_key_check: {fk[:5]}")
    for table in ("chunks_fts", "chunks_tri"):
        try:
            # Compares the full-text index with the chunks table it indexes.
            store.execute(f"INSERT INTO {table}({table}, rank) VALUES ('integrity-check', 1)")
        except Exception as exc:
            problems.append(f"{table} integrity-check: {exc}")
    n_chunks = store.scalar("SELECT count(*) FROM chunks")
    for table in ("chunks_fts", "chunks_tri"):
        if _fts_count(store, table) != n_chunks:
            problems.append(f"{table} has {_fts_count(store, table)} rows for {n_chunks} chunks")
    if store.scalar("SELECT 1 FROM sqlite_master WHERE name='vector_codes'"):
        # A vector marked current must have its code; a code must belong to a live chunk.
        missing = store.scalar(
            "SELECT count(*) FROM chunks c WHERE c.vector_fp IS NOT NULL AND NOT EXISTS"
            " (SELECT 1 FROM vector_codes v WHERE v.chunk_id = c.id)"
        )
        if missing:
            problems.append(f"{missing} chunks marked embedded have no vector")
        orphans = store.scalar(
            "SELECT count(*) FROM vector_codes v WHERE NOT EXISTS (SELECT 1 FROM chunks c WHERE c.id = v.chunk_id)"
        )
        if orphans:
            problems.append(f"{orphans} vector codes belong to no chunk")
    return problems


def assert_healthy(path: Path | str) -> None:
    store = open_store(path)
    try:
        problems = health_problems(store)
    finally:
        store.close()
    assert not problems, problems


def backup_sources(db: Path) -> list[dict]:
    try:
        return json.loads(Path(str(db) + ".sources.json").read_text(encoding="utf-8"))
    except OSError:
        return []


def write_files(root: Path, files: dict[str, str | bytes]) -> Path:
    """Own copy of tests/conftest.write_files: `from conftest import` is ambiguous once
    several test folders have a conftest.py."""
    for rel, content in files.items():
        path = Path(root) / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
    return Path(root)


def note(i: int, words: int = 40) -> str:
    """A markdown note with two sections and a code block: several chunks."""
    body = " ".join(f"w{(i * 7 + k) % 97}" for k in range(words))
    return (
        f"---\ntitle: Note {i}\ntags: [t{i % 3}]\n---\n# Note {i}\n\n{body}\n\n"
        f"## Details {i}\n\nsee src/mod{i % 5}.py for {body[:60]}\n\n"
        f"```python\ndef f{i}(x):\n    return x * {i}\n```\n"
    )


def code(i: int) -> str:
    return "".join(
        f'def func_{i}_{k}(value):\n    """Doc {k} of {i}."""\n    return value + {k}\n\n\n' for k in range(4)
    )


def cli(db: Path | str, *argv: str, model: str = "fake") -> tuple[int, str, str]:
    """Run `kenning --store DB --model fake ARGV` in-process: (exit code, stdout, stderr).

    An exception escaping main() is exactly the traceback a user would see, so it is
    left to fail the test.
    """
    import contextlib
    import io

    from kenning.cli.main import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main(["--store", str(db), "--model", model, *argv])
    return rc, out.getvalue(), err.getvalue()


def deny_folder(monkeypatch, name: str, error: int = 13) -> None:
    """Opening the folder called `name` (or anything below it) fails as for another
    user's folder (chmod 000 does not stop root, who runs these tests in CI): by path
    (os.scandir, os.open) and by name below an open folder (os.open(name, dir_fd=...),
    how Kenning opens everything under a source's root)."""
    import errno as errnos

    real_scandir, real_open = os.scandir, os.open
    message = os.strerror(error)

    def refused(path) -> bool:
        text = os.fspath(path) if not isinstance(path, int) else ""
        return text.rstrip("/").endswith("/" + name) or f"/{name}/" in text

    def scandir(path="."):
        if refused(path):
            raise OSError(error, message, os.fspath(path))
        return real_scandir(path)

    def fake_open(path, flags, mode=0o777, *, dir_fd=None):
        if (dir_fd is not None and os.fspath(path) == name) or refused(path):
            raise OSError(error, message, os.fspath(path))
        if dir_fd is None:
            return real_open(path, flags, mode)
        return real_open(path, flags, mode, dir_fd=dir_fd)

    assert error in errnos.errorcode
    monkeypatch.setattr(os, "scandir", scandir)
    monkeypatch.setattr(os, "open", fake_open)


# -- what a store holds, read through storage.api ------------------------------------


def stored_paths(db: Path | str) -> list[str]:
    """The rel_path of every indexed document, sorted."""
    from kenning_testing import documents_by_path

    store = open_store(db)
    try:
        return sorted(documents_by_path(store))
    finally:
        store.close()


def stored_text(db: Path | str, *, titles: bool = False) -> str:
    """Every chunk's text (with its title first when asked), joined by spaces."""
    from kenning_testing import all_chunks

    store = open_store(db)
    try:
        return " ".join(f"{c.title} {c.text}" if titles else c.text for c in all_chunks(store))
    finally:
        store.close()


def chunk_count(db: Path | str, rel_path: str) -> int:
    from kenning_testing import chunk_ids

    store = open_store(db)
    try:
        return len(chunk_ids(store, rel_path))
    finally:
        store.close()


class NoModel:
    """The background model of an MCP service under test: none (keyword answers only)."""

    embedder = None
    error = "no model in this test"
    state = "failed"


def mcp_service(db: Path | str, **options):
    """The MCP tools over the store at db, as `kenning mcp` serves them, without a model."""
    from kenning.cli.output import hit_dict
    from kenning.mcpserver.service import KenningService
    from kenning.workspace import Workspace

    return KenningService(Workspace(db, model="fake"), hit_dict, background_model=NoModel(), **options)


def mcp_said(answer) -> str:
    """An MCP answer as the text an assistant receives."""
    return answer if isinstance(answer, str) else json.dumps(answer, ensure_ascii=False)
