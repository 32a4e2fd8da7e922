"""`kenning --store postgresql://…` as a new user runs it (#23 item 1 and the issue's "done when")."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from kenning_testing import write_files

SECRET = "s3cret-Team-pw-91"


def _kenning(home: Path, *argv: str, env: dict | None = None) -> subprocess.CompletedProcess[str]:
    environ = {**os.environ, "KENNING_HOME": str(home), "KENNING_MODEL": "fake", **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "kenning.launcher", *argv], capture_output=True, text=True, env=environ, timeout=300
    )


@pytest.fixture
def writer_url(pg_server, pg_database):
    """The database's owner is a role that must give its password (scram-sha-256)."""
    if not pg_server.admin("SELECT 1 FROM pg_roles WHERE rolname = 'teamowner'"):
        pg_server.admin(f"CREATE ROLE teamowner LOGIN PASSWORD '{SECRET}'")
    pg_server.admin(f'ALTER DATABASE "{pg_database}" OWNER TO teamowner')
    pg_server.admin("ALTER SCHEMA public OWNER TO teamowner", database=pg_database)
    return pg_server.url(pg_database, user="teamowner", password=SECRET)


def test_sources_add_index_search_status_against_a_team_store(tmp_path, writer_url, pg_server, pg_database):
    home = tmp_path / "home"
    notes = write_files(
        tmp_path / "runbooks",
        {
            "failover.md": "# Database failover\n\nPromote the replica when the primary is down.\n",
            "deploy.md": "# Deploys\n\nRoll back a bad deploy with the previous image.\n",
        },
    )
    added = _kenning(home, "--store", writer_url, "sources", "add", str(notes), "--name", "runbooks")
    assert added.returncode == 0, added.stderr
    indexed = _kenning(home, "--store", writer_url, "index")
    assert indexed.returncode == 0, indexed.stderr
    assert "2 added" in indexed.stdout
    found = _kenning(home, "--store", writer_url, "search", "replica primary", "--explain", "-n", "3")
    assert found.returncode == 0, found.stderr
    assert "runbooks:failover.md" in found.stdout and "porter" in found.stdout and "final" in found.stdout
    status = _kenning(home, "status", env={"KENNING_STORE": writer_url})  # the environment names the store
    assert status.returncode == 0, status.stderr
    assert "pgvector" in status.stdout and "runbooks" in status.stdout and "2 documents" in status.stdout
    assert f"teamowner@local socket/{pg_database}" in status.stdout
    # The password was needed (scram) and used, and written nowhere: not in what was
    # printed, not in the log or any file of the user's Kenning folder, not in the store.
    printed = added.stdout + added.stderr + indexed.stdout + indexed.stderr + found.stdout + status.stdout
    assert SECRET not in printed
    for path in home.rglob("*"):
        if path.is_file():
            assert SECRET.encode() not in path.read_bytes(), path
    stored = pg_server.admin(
        "SELECT string_agg(t::text, ' ') FROM (SELECT * FROM kenning.settings) t"
        " UNION ALL SELECT string_agg(s::text, ' ') FROM kenning.sources s",
        database=pg_database,
    )
    assert all(SECRET not in (row[0] or "") for row in stored)


def test_a_wrong_password_is_said_plainly(tmp_path, writer_url):
    wrong = writer_url.replace(SECRET, "not-it")
    failed = _kenning(tmp_path / "home", "--store", wrong, "status")
    assert failed.returncode != 0
    assert "refused the login" in failed.stderr and "not-it" not in failed.stderr


def test_searching_the_personal_store_and_a_team_store_together(tmp_path, writer_url):
    home = tmp_path / "home"
    mine = write_files(tmp_path / "mine", {"rollback.md": "# My rollback notes\n\nroll back the deploy carefully\n"})
    team = write_files(tmp_path / "team", {"rollback.md": "# Team rollback runbook\n\nroll back the deploy\n"})
    assert _kenning(home, "sources", "add", str(mine), "--name", "mine").returncode == 0
    assert _kenning(home, "index").returncode == 0
    assert _kenning(home, "--store", writer_url, "sources", "add", str(team), "--name", "team").returncode == 0
    assert _kenning(home, "--store", writer_url, "index").returncode == 0
    both = _kenning(home, "search", "rollback deploy", "--also-store", writer_url)
    assert both.returncode == 0, both.stderr
    assert "[personal] mine:rollback.md" in both.stdout
    assert "] team:rollback.md" in both.stdout
    only_team = _kenning(home, "search", "rollback source:team", "--also-store", writer_url)
    assert "team:rollback.md" in only_team.stdout and "mine:rollback.md" not in only_team.stdout
