"""Test collections (BEIR layout) indexed once into a kept store, for benchmarks that
need the real model: each corpus entry becomes one markdown file, as `kenning eval`
writes it, so the collection goes through the pipeline a user's notes do."""

from __future__ import annotations

import sys
from pathlib import Path

from kenning.cli.evaluate import load_dataset, write_corpus
from kenning.embedding import DEFAULT_MODEL, resolve_embedder
from kenning.ingest.indexer import Indexer
from kenning.ingest.sources import add_source
from kenning.storage import open_store
from kenning.storage.paths import model_cache_dir


def _shared() -> Path:
    """../shared beside the repository: the nearest folder above it holding shared/data
    (the main checkout's parent, or a worktree's parent's parent)."""
    here = Path(__file__).resolve().parents[2]
    for folder in here.parents:
        if (folder / "shared" / "data").is_dir():
            return folder / "shared"
    return here.parent / "shared"


SHARED = _shared()
DATA = SHARED / "data"
DEFAULT_FOLDERS = ("cranfield", "npl")


def collection_folders(named: list[str]) -> list[Path]:
    """The folders named, or else every collection folder under ../shared/data."""
    if named:
        return [Path(p) for p in named]
    return [DATA / name for name in DEFAULT_FOLDERS if (DATA / name).is_dir()]


def default_embedder():
    return resolve_embedder(DEFAULT_MODEL, model_cache_dir())


def indexed_store(folder: Path, keep: Path, embedder):
    """(store, corpus, queries, qrels): the collection indexed under keep/<name>."""
    corpus, queries, qrels = load_dataset(folder)
    home = keep / folder.name
    docs = home / "docs"
    if not docs.is_dir():
        write_corpus(corpus, docs)
    store = open_store(home / "eval.db")
    if not store.scalar("SELECT 1 FROM sources WHERE name = 'eval'"):
        add_source(store, docs, name="eval")
    Indexer(store, (lambda: embedder) if embedder else None).run(embed=embedder is not None)
    print(f"{folder.name}: {len(corpus)} documents, {len(qrels)} judged queries", file=sys.stderr)
    return store, corpus, queries, qrels
