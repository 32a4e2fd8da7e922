"""Helpers shared by the tests (importable by name from any test folder)."""

from __future__ import annotations

import ast
import json
from pathlib import Path

from kenning.embedding import FakeEmbedder
from kenning.ingest.indexer import Indexer
from kenning.ingest.sources import add_source
from kenning.storage.sqlite_store import SqliteAnalyzer

# The SQLite backend's tokenizer and stemmer (a store's `analyzer`), for tests of matching
# that need no store.
ANALYZER = SqliteAnalyzer()


class CountingEmbedder(FakeEmbedder):
    """The fake embedder, remembering every text it was asked to embed."""

    def __init__(self, dim: int = 64) -> None:
        super().__init__(dim)
        self.embedded: list[str] = []

    def embed_batch(self, texts):
        self.embedded.extend(texts)
        return super().embed_batch(texts)


def load_sqlite_vec(conn) -> None:
    """Load sqlite-vec into an apsw connection: only to build stores in the layout made
    before issue #15 (a vec0 table), which Kenning converts without it."""
    import importlib.util
    import os

    spec = importlib.util.find_spec("sqlite_vec")
    assert spec and spec.origin, "the test extra installs sqlite-vec to build old stores"
    conn.enable_load_extension(True)
    conn.load_extension(os.path.join(os.path.dirname(spec.origin), "vec0"))


def write_files(root: Path, files: dict[str, str | bytes]) -> Path:
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
    return root


def write_beir(folder: Path, docs: list[dict], queries: list[dict], qrels: list[tuple[str, str]]) -> Path:
    """A collection in the BEIR layout `kenning eval` and the quality benchmark read:
    corpus.jsonl, queries.jsonl and qrels.tsv (every judged pair relevant, score 1)."""
    return write_files(
        folder,
        {
            "corpus.jsonl": "".join(json.dumps(d) + "\n" for d in docs),
            "queries.jsonl": "".join(json.dumps(q) + "\n" for q in queries),
            "qrels.tsv": "query-id\tcorpus-id\tscore\n" + "".join(f"{q}\t{d}\t1\n" for q, d in qrels),
        },
    )


def index_folder(store, folder: Path, embedder=None, *, name: str | None = None, git: bool = False, **kw):
    source = add_source(store, folder, name=name, git=git)
    run = Indexer(store, (lambda: embedder) if embedder else None, **kw).run(embed=embedder is not None)
    return source, run


def cli_indexed(capsys, notes: Path, path: Path) -> str:
    """A store at path holding the folder notes, added and indexed through the CLI (fake
    model), the CLI's output read away; the store's path as the CLI takes it."""
    from kenning.cli.main import main

    store = str(path)
    assert main(["--store", store, "--model", "fake", "sources", "add", str(notes)]) == 0
    assert main(["--store", store, "--model", "fake", "index"]) == 0
    capsys.readouterr()
    return store


def reindex(store, embedder=None, **kw):
    return Indexer(store, (lambda: embedder) if embedder else None, **kw).run(embed=embedder is not None)


# What tests above storage read of a store, through the storage interface (kenning.storage.api):
# no SQL, so they hold for any backend.


def documents_by_path(store) -> dict[str, int]:
    """rel_path -> document id, over every source."""
    return {rel: known.id for s in store.sources.list() for rel, known in store.documents.known(s.id).items()}


def the_document(store, rel_path: str):
    """The one indexed document at rel_path (an api.IndexedDocument)."""
    (found,) = store.documents.at(rel_path)
    return found


def chunk_ids(store, rel_path: str) -> list[int]:
    """The chunks of the documents at rel_path, in order."""
    return [c.id for d in store.documents.at(rel_path) for c in store.documents.chunks(d.id)]


def document_count(store) -> int:
    """How many documents the store holds, over every source."""
    return sum(s.documents for s in store.stats.per_source().values())


def all_chunks(store) -> list:
    """Every chunk of every document (api.ChunkRow: text, path, source, dates), by chunk id."""
    ids = [c.id for doc_id in documents_by_path(store).values() for c in store.documents.chunks(doc_id)]
    return sorted(store.chunks.rows(ids).values(), key=lambda row: row.chunk_id)


def json_hits(out: str) -> list[dict]:
    """The hit records of `kenning search --json` output (its first line says what the search meant)."""
    import json

    records = [json.loads(line) for line in out.splitlines() if line.strip()]
    return [r for r in records if r.get("type") == "hit"]


def docstring_ids(tree: ast.AST) -> set[int]:
    """The ids of a parsed module's string constants that are docstrings, for the source
    checks that read string literals (SQL outside storage, commands named by storage)."""
    ids = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                ids.add(id(first.value))
    return ids
