"""Shared fixtures: real SQLite stores in tmp dirs and a deterministic fake embedder."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from kenning.embedding import FakeEmbedder  # noqa: E402
from kenning.ingest.indexer import Indexer  # noqa: E402
from kenning.ingest.sources import add_source  # noqa: E402
from kenning.storage import open_store  # noqa: E402


class CountingEmbedder(FakeEmbedder):
    """The fake embedder, remembering every text it was asked to embed."""

    def __init__(self, dim: int = 64) -> None:
        super().__init__(dim)
        self.embedded: list[str] = []

    def embed_batch(self, texts):
        self.embedded.extend(texts)
        return super().embed_batch(texts)


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path_factory, monkeypatch):
    """No test ever touches the user's real store."""
    home = tmp_path_factory.mktemp("kenning-home")
    monkeypatch.setenv("KENNING_HOME", str(home))
    return home


@pytest.fixture
def store(tmp_path):
    s = open_store(tmp_path / "store" / "kenning.db")
    yield s
    s.close()


@pytest.fixture
def embedder():
    return CountingEmbedder()


def write_files(root: Path, files: dict[str, str | bytes]) -> Path:
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
    return root


@pytest.fixture
def notes(tmp_path):
    """A small folder of notes; tests add what they need."""
    root = tmp_path / "notes"
    root.mkdir()
    return root


def index_folder(store, folder: Path, embedder=None, *, name: str | None = None, git: bool = False, **kw):
    source = add_source(store, folder, name=name, git=git)
    run = Indexer(store, (lambda: embedder) if embedder else None, **kw).run(embed=embedder is not None)
    return source, run


def reindex(store, embedder=None, **kw):
    return Indexer(store, (lambda: embedder) if embedder else None, **kw).run(embed=embedder is not None)
