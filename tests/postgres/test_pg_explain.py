"""`kenning search --explain` adds up exactly on both backends (#23 item 3).

The same notes are indexed into a personal store and a team store with the command line;
on each, every hit's printed record adds up (the lists' contributions make the fused
score, the final score is (base + bonuses) × penalty), and the Breakdown it is printed
from adds up exactly, in floating point."""

from __future__ import annotations

import re

import pytest

from kenning.search.signals import final_score, shown_score
from kenning_testing import write_files

from .test_pg_cli import _kenning

NOTES = {
    "failover.md": "# Database failover\n\nPromote the replica when the primary is down; the replica takes the writes.\n",
    "deploy.md": "# Deploys\n\nRoll back a bad deploy with the previous image, then tell the on-call engineer.\n",
    "replica.md": "# Read replicas\n\nA replica serves the reads; the primary writes. Watch the replication lag.\n",
    "oncall.md": "# On call\n\nThe on-call engineer promotes a replica when the primary database fails.\n",
}
LIST_LINE = re.compile(r"^\s+(\w+)\s+rank\s+\d+\s+score\s+\S+\s+weight\s+\S+\s+\+([\d.]+)$")
NUMBER = r"(-?[\d.]+)"


def _records(out: str) -> list[dict]:
    """Each hit's printed explanation, as numbers."""
    records: list[dict] = []
    for line in out.splitlines():
        if match := LIST_LINE.match(line):
            if not records or "final" in records[-1]:
                records.append({"lists": {}})
            records[-1]["lists"][match.group(1)] = float(match.group(2))
        elif records and "final" not in records[-1]:
            for key, pattern in (
                ("fused", rf"^\s+fused\s+{NUMBER}:"),
                ("base", rf"^\s+base\s+.*= {NUMBER}$"),
                ("recency", rf"^\s+recency\s+\S+ → \+{NUMBER}"),
                ("git", rf"^\s+git\s+\S+ → \+{NUMBER}"),
                ("penalty", rf"^\s+penalty\s+×{NUMBER}"),
                ("final", rf"^\s+final\s+{NUMBER}"),
            ):
                if found := re.match(pattern, line):
                    records[-1][key] = float(found.group(1))
    return records


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
@pytest.mark.parametrize("mode", ["lexical", "hybrid"])
def test_explain_adds_up_on_both_backends(tmp_path, pg_url, backend, mode):
    home = tmp_path / "home"
    store = ["--store", pg_url] if backend == "postgresql" else []
    notes = write_files(tmp_path / "runbooks", NOTES)
    assert _kenning(home, *store, "sources", "add", str(notes), "--name", "runbooks").returncode == 0
    assert _kenning(home, *store, "index").returncode == 0
    found = _kenning(home, *store, "search", "replica primary failover", "--explain", "--mode", mode, "-n", "4")
    assert found.returncode == 0, found.stderr
    records = _records(found.stdout)
    assert len(records) >= 3, found.stdout
    for record in records:
        assert abs(sum(record["lists"].values()) - record["fused"]) <= 0.5e-5 * (len(record["lists"]) + 1), record
        expected = min(1.0, (record["base"] + record["recency"] + record["git"]) * record["penalty"])
        assert abs(expected - record["final"]) <= 2e-4, record
    if mode == "hybrid":
        assert any("vector" in r["lists"] for r in records)


def test_the_breakdown_adds_up_exactly_on_the_team_store(tmp_path, pg_url):
    """The numbers the record is printed from, in floating point (the team store's engine)."""
    from kenning.embedding import FakeEmbedder
    from kenning.search.engine import SearchEngine, SearchOptions
    from kenning.storage.postgres import open_pg_store

    home = tmp_path / "home"
    notes = write_files(tmp_path / "runbooks", NOTES)
    assert _kenning(home, "--store", pg_url, "sources", "add", str(notes), "--name", "runbooks").returncode == 0
    assert _kenning(home, "--store", pg_url, "index").returncode == 0
    store = open_pg_store(pg_url)
    try:
        hits = SearchEngine(store, FakeEmbedder()).search("replica primary failover", SearchOptions(mode="hybrid")).hits
        assert len(hits) >= 3
        for hit in hits:
            b = hit.breakdown
            assert b.fused == sum(s.contribution for s in b.lists.values())
            again = final_score(b.base, b.recency, b.git, b.penalty)
            assert min(1.0, (b.base + again.recency_bonus + again.git_bonus) * b.penalty) == b.final
            assert shown_score(b.final, b.spread) == b.shown == hit.score  # the score shown (#28 item 7)
    finally:
        store.close()
