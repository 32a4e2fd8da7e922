"""Shared fixtures: real SQLite stores in tmp dirs and a deterministic fake embedder."""

from __future__ import annotations

import os
import shutil
import tempfile

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


@pytest.fixture(scope="session")
def _runtime_root():
    folder = tempfile.mkdtemp(prefix="kr-", dir="/tmp" if os.path.isdir("/tmp") else None)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(autouse=True)
def _isolated_runtime_dir(monkeypatch, _runtime_root):
    """No test ever reaches a real `kenning serve`: each gets its own (short: a socket
    path holds about 100 bytes) runtime folder, removed when the session ends."""
    folder = tempfile.mkdtemp(dir=_runtime_root)
    os.chmod(folder, 0o700)
    monkeypatch.setenv("XDG_RUNTIME_DIR", folder)
    return folder


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
