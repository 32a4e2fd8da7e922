"""Ranking signals, exactly as docs/architecture.md §6 states them, on real git history."""

from datetime import datetime, timedelta, timezone

import pytest

from gitutil import commit, make_repo
from kenning.search.engine import SearchEngine
from kenning.search.signals import final_score, git_activity, is_proposal, penalty, recency
from kenning_testing import index_folder, write_files

NOW = datetime(2025, 6, 1, tzinfo=timezone.utc)
DAY = 86400.0


def _engine(store, embedder=None):
    return SearchEngine(store, embedder, clock=lambda: NOW.timestamp())


@pytest.mark.parametrize("days,expected", [(0, 1.0), (60, 0.5), (120, 0.25)])
def test_recency_halves_every_60_days(days, expected):
    now = NOW.timestamp()
    assert recency(now - days * DAY, None, now) == pytest.approx(expected)
    assert recency(None, now - days * DAY, now) == pytest.approx(expected)  # created_at fallback


def test_recency_without_any_date_is_neutral():
    assert recency(None, None, NOW.timestamp()) == 0.0


def test_git_activity_is_the_changed_fraction():
    now = NOW.timestamp()
    act = git_activity({"a.py": now - 3 * DAY, "b.py": now - 200 * DAY}, now)
    assert act.score == 0.5 and act.changed_paths == ("a.py",)
    assert git_activity({}, now).score == 0.0


@pytest.mark.parametrize(
    "title,text,flagged",
    [
        ("Plan", "TODO: write the migration", True),
        ("Plan", "  \n## FIXME: broken", True),
        ("WISH: dark mode", "body", True),
        ("Plan", "HACK: patch it", True),
        ("Plan", "XXX: odd", True),
        ("Plan", "IDEA: cache it", True),
        ("Plan", "see the TODO: list", False),
        ("Plan", "todo: lower case is prose", False),
        ("Plan", "# Plan\n\nTODO: under its heading", True),
        ("Plan", "# Plan\n\nWe keep a TODO: list", False),
        ("Plan", "TODO without colon", False),
    ],
)
def test_proposal_penalty(title, text, flagged):
    assert is_proposal(title, text) is flagged
    assert penalty(title, text) == (0.7 if flagged else 1.0)


def test_final_formula_is_capped_at_one():
    s = final_score(0.9, 1.0, 1.0, 1.0)
    assert s.final == 1.0 and s.recency_bonus == pytest.approx(0.135) and s.git_bonus == pytest.approx(0.18)
    assert final_score(0.5, 0.0, 0.0, 0.7).final == pytest.approx(0.35)


@pytest.fixture
def linked(store, tmp_path):
    """A repo with one path changed 3 days ago and one last changed 200 days ago."""
    repo = make_repo(tmp_path)
    commit(repo, {"src/old.py": "old = 1\n", "src/fresh.py": "fresh = 1\n"}, NOW - timedelta(days=400))
    commit(repo, {"src/old.py": "old = 2\n"}, NOW - timedelta(days=200))
    commit(repo, {"src/fresh.py": "fresh = 2\n"}, NOW - timedelta(days=3))
    index_folder(store, repo, name="repo", git=True)
    return repo


def test_note_mentioning_a_recently_changed_path_outranks_its_twin(store, tmp_path, linked):
    notes = write_files(
        tmp_path / "notes",
        {
            "a.md": "# Cache design\n\nThe cache layer lives in src/old.py for now.\n",
            "b.md": "# Cache design\n\nThe cache layer lives in src/fresh.py for now.\n",
        },
    )
    index_folder(store, notes, name="notes")
    hits = _engine(store).search("cache layer source:notes").hits
    assert [h.path for h in hits] == ["b.md", "a.md"]
    assert hits[0].breakdown.git == 1.0 and hits[0].breakdown.git_paths == ("src/fresh.py",)
    assert hits[1].breakdown.git == 0.0 and hits[1].breakdown.git_paths == ()
    # Equal text is equal evidence (under RRF, b.md starts a rank behind): the git signal decides.
    assert hits[0].breakdown.base <= hits[1].breakdown.base


def test_half_the_references_recent_gives_half(store, tmp_path, linked):
    notes = write_files(tmp_path / "notes", {"n.md": "# Both\n\ncompare src/old.py with ./src/fresh.py here\n"})
    index_folder(store, notes, name="notes")
    (hit,) = _engine(store).search("compare source:notes").hits
    assert hit.breakdown.git == 0.5
    assert hit.breakdown.git_paths == ("src/fresh.py",)


def test_files_in_a_git_source_reference_themselves(store, linked):
    hits = {h.path: h for h in _engine(store).search("fresh old source:repo").hits}
    assert hits["src/fresh.py"].breakdown.git == 1.0
    assert hits["src/old.py"].breakdown.git == 0.0


def test_mentions_of_paths_in_no_linked_repo_are_neutral(store, notes):
    write_files(notes, {"n.md": "# X\n\nsee lib/nowhere.py and docs/readme.md\n"})
    index_folder(store, notes)
    (hit,) = _engine(store).search("nowhere").hits
    assert hit.breakdown.git == 0.0


def test_recency_uses_commit_dates_in_git_sources(store, linked):
    hits = {h.path: h for h in _engine(store).search("fresh old source:repo").hits}
    assert hits["src/fresh.py"].breakdown.recency == pytest.approx(0.5 ** (3 / 60))
    assert hits["src/old.py"].breakdown.recency == pytest.approx(0.5 ** (200 / 60))


def test_todo_note_is_penalised_in_the_ranking(store, notes):
    write_files(
        notes,
        {
            "plan.md": "# Migration\n\nTODO: migrate the billing tables\n",
            "done.md": "# Migration\n\nWe migrate the billing tables\n",
        },
    )
    index_folder(store, notes)
    hits = _engine(store).search("migrate billing").hits
    by_path = {h.path: h for h in hits}
    assert by_path["plan.md"].breakdown.penalty == 0.7
    assert by_path["done.md"].breakdown.penalty == 1.0
    assert hits[0].path == "done.md"


def test_tests_are_excluded_unless_asked_for(store, notes):
    write_files(
        notes,
        {
            "tests/test_parser.py": "def test_parser_handles_quotes():\n    assert parse('x')\n",
            "src/parser.py": "def parse(text):\n    return text  # parser handles quotes\n",
            "notes/fixture.md": "---\ntags: [test]\n---\n# Parser fixture\n\nparser quotes\n",
        },
    )
    index_folder(store, notes)
    engine = _engine(store)
    assert {h.path for h in engine.search("parser quotes").hits} == {"src/parser.py"}
    assert {h.path for h in engine.search("parser quotes tag:test").hits} == {
        "tests/test_parser.py",
        "notes/fixture.md",
    }
