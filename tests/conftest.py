"""Shared fixtures: real SQLite stores in tmp dirs and a deterministic fake embedder."""

from __future__ import annotations

import os

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from kenning.storage import open_store
from kenning_testing import CountingEmbedder


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


@pytest.fixture
def notes(tmp_path):
    """A small folder of notes; tests add what they need."""
    root = tmp_path / "notes"
    root.mkdir()
    return root


# A private PostgreSQL server for the team-store tests (tests/pgtesting.py), started on first use.
from pgtesting import pg_database, pg_server, pg_url, stop_shared_server  # noqa: E402,F401


def pytest_sessionfinish(session, exitstatus):
    stop_shared_server()
