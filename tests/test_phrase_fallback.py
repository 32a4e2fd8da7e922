"""Item 0 of issue #28 in every front end: a quoted phrase that nothing contains never
empties a search; its words are searched and the result says so (the app's side is in
tests/gui/test_window.py)."""

from __future__ import annotations

import json

import pytest

from kenning.cli.main import main
from kenning.cli.output import hit_dict
from kenning.embedding import FakeEmbedder
from kenning.mcpserver.model import BackgroundModel
from kenning.mcpserver.service import KenningService
from kenning.workspace import Workspace
from kenning_testing import cli_indexed, write_files

MISSING = 'No note contains "fast transforms for sparse matrices"; showing results for its words'
QUERY = 'I know of one article, Smith and Jones, "Fast transforms for sparse matrices", 1971'


@pytest.fixture
def db(tmp_path, capsys):
    notes = write_files(
        tmp_path / "notes",
        {
            "fft.md": "# Transforms\n\nFast Fourier transforms of sparse data, and matrices for them.\n",
            "sparse.md": "# Sparse matrices\n\nStoring sparse matrices by rows; transforms are fast.\n",
            "bread.md": "# Bread\n\nSourdough starter, flour and water.\n",
        },
    )
    return cli_indexed(capsys, notes, tmp_path / "k.db")


def _cli(capsys, db, *args):
    code = main(["--store", db, "--model", "fake", "search", *args])
    out, err = capsys.readouterr()
    assert code == 0, err
    return out, err


def test_cli_says_the_phrase_is_missing_and_shows_results_for_its_words(capsys, db):
    out, _ = _cli(capsys, db, QUERY)
    lines = out.splitlines()
    assert lines[0] == MISSING
    assert "fft.md" in out and "sparse.md" in out and "No results." not in out


def _json(out: str) -> tuple[dict, list[dict]]:
    summary, *hits = (json.loads(line) for line in out.splitlines())
    assert summary["type"] == "search" and all(h["type"] == "hit" for h in hits)
    return summary, hits


def test_json_lines_carry_the_notice_and_stderr_says_it(capsys, db):
    out, err = _cli(capsys, db, "--json", "--explain", QUERY)
    summary, hits = _json(out)
    assert summary["notice"] == MISSING
    assert {h["path"] for h in hits} >= {"fft.md", "sparse.md"}
    assert all(h["lacks_phrases"] is False and h["breakdown"]["lacks_phrases"] is False for h in hits)
    assert f"kenning: note: {MISSING}" in err
    plain, _ = _json(_cli(capsys, db, "--json", "sparse matrices")[0])
    assert plain["notice"] is None


def test_cli_marks_where_the_results_without_the_phrase_begin(capsys, db):
    out, _ = _cli(capsys, db, "--explain", '"sparse matrices" transforms')
    assert out.splitlines()[0] == 'Only 1 result contains "sparse matrices"; results for its words follow'
    before, divider, after = out.partition("— results for the words, each lacks the phrase —")
    assert divider and "sparse.md" in before and "fft.md" in after and "sparse.md" not in after
    assert "after every hit holding the quoted phrases" in after and "after every hit" not in before
    _, hits = _json(_cli(capsys, db, "--json", '"sparse matrices" transforms')[0])
    assert [h["lacks_phrases"] for h in hits] == [False] + [True] * (len(hits) - 1)


def test_mcp_search_says_the_phrase_is_missing(tmp_path, db):
    ws = Workspace(db, model="fake")
    service = KenningService(ws, hit_dict, background_model=BackgroundModel(FakeEmbedder).start(), watch=False)
    service.model.wait(10)
    answer = service.search(QUERY)
    assert answer["notice"] == MISSING
    assert {h["path"] for h in answer["hits"]} >= {"fft.md", "sparse.md"}
    plain = service.search("sparse matrices")
    assert plain["notice"] is None
    ws.close()
