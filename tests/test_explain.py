"""The readable ranking is written from the ranking's own constants, and is true under
both fusions: tuning a constant changes every explanation with it."""

from __future__ import annotations

import pytest

from kenning.cli.output import explain_lines
from kenning.core.types import Breakdown, ListScore
from kenning.search import fusion, signals
from kenning.search.engine import SearchEngine, SearchOptions
from kenning_testing import index_folder, write_files


def _breakdown(fusion_name: str = "rrf", **kw) -> Breakdown:
    lists = {"porter": ListScore(rank=2, score=3.5, weight=1.0, contribution=1 / 62)}
    return Breakdown(lists=lists, fused=1 / 62, normaliser=0.05, base=0.3, fusion=fusion_name, final=0.3, **kw)


def _gui_texts(b: Breakdown) -> str:
    pytest.importorskip("PySide6")
    from kenning.gui.breakdown import breakdown_rows

    return "\n".join(f"{row.label} {row.tip}" for row in breakdown_rows(b))


def _all_texts(b: Breakdown) -> str:
    return "\n".join(explain_lines(b)) + "\n" + _gui_texts(b)


def test_rrf_text_follows_rrf_k(monkeypatch):
    assert "weight/(60+rank)" in _all_texts(_breakdown())
    monkeypatch.setattr(fusion, "RRF_K", 42)
    text = _all_texts(_breakdown())
    assert "weight/(42+rank)" in text and "60+rank" not in text


def test_linear_fusion_is_not_explained_as_rrf():
    text = _all_texts(_breakdown("linear"))
    assert "+rank" not in text and "RRF" not in text
    assert "score / the list's best score" in text


def test_signal_texts_follow_the_signal_constants(monkeypatch):
    before = _all_texts(_breakdown(penalty=0.7))
    assert "age/60 days" in before and "15%" in before and "30 days" in before and "20%" in before
    assert "×0.7" in before and "IDEA:" in before
    monkeypatch.setattr(signals, "RECENCY_HALF_LIFE_DAYS", 90.0)
    monkeypatch.setattr(signals, "RECENCY_MAX_BONUS", 0.25)
    monkeypatch.setattr(signals, "GIT_WINDOW_DAYS", 14.0)
    monkeypatch.setattr(signals, "GIT_MAX_BONUS", 0.1)
    monkeypatch.setattr(signals, "PROPOSAL_PENALTY", 0.5)
    monkeypatch.setattr(signals, "PROPOSAL_MARKERS", ("DRAFT:", "MAYBE:"))
    after = _all_texts(_breakdown(penalty=0.5))
    assert "age/90 days" in after and "up to 25% of base" in after
    assert "last 14 days" in after and "up to 10% of base" in after
    assert "×0.5 when the chunk starts with DRAFT: or MAYBE:" in after
    assert "age/60" not in after and "15%" not in after and "IDEA:" not in after


@pytest.mark.parametrize("fusion_name", ["rrf", "linear"])
def test_the_layer_names_the_fusion_that_ranked(store, tmp_path, fusion_name):
    index_folder(store, write_files(tmp_path / "n", {"a.md": "# Turbines\n\nwind turbine blades\n"}))
    engine = SearchEngine(store)
    exact = engine.search("turbine", SearchOptions(mode="lexical", fusion=fusion_name))
    assert exact.layer == fusion_name and {h.breakdown.layer for h in exact.hits} == {fusion_name}
    corrected = engine.search("turbinse", SearchOptions(mode="lexical", fusion=fusion_name))
    assert corrected.corrections and corrected.layer == f"{fusion_name}-fuzzy"
    assert {h.breakdown.layer for h in corrected.hits} == {f"{fusion_name}-fuzzy"}


def test_a_list_read_by_rank_says_so():
    from kenning.core.types import ListScore

    b = _breakdown("linear")
    b.lists["porter"] = ListScore(2, 2.5e-6, 1.0, 61 / 62, by_rank_of=2)
    text = _all_texts(b)
    assert "read by rank" in text and "61/(60+2)" in text
