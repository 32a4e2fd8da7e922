"""Signals break ties between comparable hits and never override clear relevance (issue #12).

A realistic workspace built in the test: a folder of notes last touched more than a
year ago and an actively developed repository whose files changed yesterday, so every
code chunk has git activity 1.0 and recency ~1.0 and no note has either.
"""

from datetime import datetime, timedelta, timezone

import pytest

from gitutil import commit, make_repo
from kenning.search.engine import SearchEngine, SearchOptions
from kenning_testing import index_folder, write_files

NOW = datetime(2025, 6, 1, tzinfo=timezone.utc)
OLD = "2024-02-01"  # front matter date: recency 0.5 ** (486 / 60) ~ 0.004

NOTES = {
    "deploy.md": (
        f"---\ndate: {OLD}\n---\n# How to deploy\n\n## Build\n\nBuild the image and push it to the registry.\n\n"
        "## Rollback\n\nTo undo a bad release, roll back: redeploy the previous release tag, then undo the "
        "bad migration.\n"
    ),
    "postgres.md": f"---\ndate: {OLD}\n---\n# Postgres tuning notes\n\nshared buffers, work mem and vacuum.\n",
    "retro.md": f"---\ndate: {OLD}\n---\n# Retro\n\nThe release went out late; planning was bad.\n",
    "habits.md": f"---\ndate: {OLD}\n---\n# Habits\n\nA bad habit is hard to undo.\n",
    "changelog.md": f"---\ndate: {OLD}\n---\n# Changelog\n\nRelease 2.3 adds exports.\n",
    "editor.md": f"---\ndate: {OLD}\n---\n# Editor\n\nUndo and redo keys in the editor.\n",
}
CODE = {
    "src/publish.py": (
        "def publish(tag):\n    # upload the wheel to the package index for this release\n"
        "    upload(build_wheel(tag), index_url(), retries=3)\n"
    ),
    "src/history.py": "def undo_stack():\n    return [entry for entry in journal() if entry.can_revert]\n",
    "src/quality.py": "def bad_rows(table):\n    return [row for row in table if not row.valid]\n",
}


@pytest.fixture
def workspace(store, tmp_path, embedder):
    repo = make_repo(tmp_path)
    commit(repo, CODE, NOW - timedelta(days=400))
    commit(repo, {p: t + "\n# touched\n" for p, t in CODE.items()}, NOW - timedelta(days=1))
    index_folder(store, repo, embedder, name="repo", git=True)
    index_folder(store, write_files(tmp_path / "notes", NOTES), embedder, name="notes")
    return SearchEngine(store, embedder, clock=lambda: NOW.timestamp())


def _vector_rank(hit) -> int | None:
    score = hit.breakdown.lists.get("vector")
    return score.rank if score else None


@pytest.mark.parametrize("fusion", ["linear", "rrf"])
def test_clear_meaning_winner_stays_above_fresh_active_code(workspace, fusion):
    hits = workspace.search("how do I undo a bad release", SearchOptions(limit=20, fusion=fusion)).hits
    top = hits[0]
    assert top.title == "How to deploy > Rollback"
    assert _vector_rank(top) == 1 and top.breakdown.git == 0.0 and top.breakdown.recency < 0.01
    fresh_code = [h for h in hits if h.source == "repo"]
    assert fresh_code and all(h.breakdown.git == 1.0 and h.breakdown.recency > 0.95 for h in fresh_code)
    # Every active, fresh code chunk the meaning list ranked far below stays below the note.
    far = [h for h in fresh_code if (_vector_rank(h) or 99) >= 4]
    assert far
    for hit in far:
        assert hit.score < top.score
        assert hit.breakdown.base * 1.35 < top.breakdown.base  # no bonus could lift it


def test_flat_linear_base_would_let_signals_decide(workspace):
    """Rank fusion with base linear in relevance (the old flat base): the bonuses are
    then worth more than the evidence's spread and lift fresh code chunks that rank far
    below in meaning above older notes that match better.  The calibrated base stops it."""
    calibrated = workspace.search("how do I undo a bad release", SearchOptions(limit=20, fusion="rrf")).hits
    flat = workspace.search("how do I undo a bad release", SearchOptions(limit=20, fusion="rrf", base_spread=None)).hits

    def code_above_notes(hits):
        first_note = next(
            i for i, h in enumerate(hits) if h.source == "notes" and h.title != "How to deploy > Rollback"
        )
        return sum(1 for h in hits[:first_note] if h.source == "repo")

    assert code_above_notes(flat) > code_above_notes(calibrated)


@pytest.fixture
def twins(store, tmp_path, embedder):
    notes = write_files(
        tmp_path / "notes",
        {
            "a-old.md": "---\ndate: 2024-01-01\n---\n# Cache design\n\nThe cache layer keeps parsed pages.\n",
            "b-new.md": "---\ndate: 2025-05-25\n---\n# Cache design\n\nThe cache layer keeps parsed pages.\n",
        },
    )
    index_folder(store, notes, embedder, name="notes")
    return SearchEngine(store, embedder, clock=lambda: NOW.timestamp())


def test_of_two_equal_notes_the_recent_one_wins(twins):
    hits = twins.search("cache layer parsed pages").hits
    assert [h.path for h in hits[:2]] == ["b-new.md", "a-old.md"]
    # The old one is first in each list (lower chunk id): only recency lifts the new one.
    assert hits[0].breakdown.base <= hits[1].breakdown.base
    assert hits[0].breakdown.recency > hits[1].breakdown.recency


def test_signals_off_keeps_the_evidence_order(twins):
    hits = twins.search("cache layer parsed pages", SearchOptions(signals=False)).hits
    assert [h.path for h in hits[:2]] == ["a-old.md", "b-new.md"]
    assert all(h.breakdown.recency_bonus == 0 and h.breakdown.git_bonus == 0 for h in hits)
