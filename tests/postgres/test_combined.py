"""One search over the personal store and a team store (#23 item 6)."""

from __future__ import annotations

import pytest

from kenning.core.errors import StoreError
from kenning.search.engine import SearchEngine, SearchOptions
from kenning.storage import open_store
from kenning.storage.combined import CombinedStore, differing_models
from kenning.storage.postgres import open_pg_store
from kenning.workspace.messages import model_mismatch_message
from kenning_testing import CountingEmbedder, index_folder, write_files
from pgtesting import copy_store

PERSONAL = {
    "rollback.md": "# Rollback plan\n\nMy own notes on how to roll back a deploy of the billing service.\n",
    "garden.md": "# Garden\n\nTomatoes need sun and water every morning.\n",
}
TEAM = {
    "runbooks/failover.md": "# Database failover\n\nPromote the replica, then roll back the deploy if errors persist.\n",
    "runbooks/rollback.md": "# Rollback runbook\n\nThe team's rollback plan: freeze, roll back, verify the deploy.\n",
    "adr/0001.md": "# ADR 1\n\nWe chose PostgreSQL for the billing service.\n",
}


@pytest.fixture
def stores(tmp_path, pg_url):
    embedder = CountingEmbedder()
    personal = open_store(tmp_path / "personal" / "kenning.db")
    index_folder(personal, write_files(tmp_path / "mine", PERSONAL), embedder, name="notes")
    staging = open_store(tmp_path / "staging" / "kenning.db")
    index_folder(staging, write_files(tmp_path / "team", TEAM), embedder, name="team-docs")
    staging.close()
    team = open_pg_store(pg_url)
    copy_store(tmp_path / "staging" / "kenning.db", team)
    yield personal, team, embedder
    personal.close()
    team.close()


@pytest.mark.parametrize("mode", ["lexical", "hybrid", "vector"])
def test_one_labelled_list_from_both_stores(stores, mode):
    personal, team, embedder = stores
    combined = CombinedStore({"personal": personal, "team": team})
    result = SearchEngine(combined, embedder).search("rollback plan deploy", SearchOptions(mode=mode, limit=10))
    labels = {(h.store_label, h.source, h.path) for h in result.hits}
    assert ("personal", "notes", "rollback.md") in labels
    assert ("team", "team-docs", "runbooks/rollback.md") in labels
    assert len({h.chunk_id for h in result.hits}) == len(result.hits)
    for hit in result.hits:  # the explain record adds up on the combined list too
        b = hit.breakdown
        assert b.final == pytest.approx(min(1.0, (b.base + b.recency_bonus + b.git_bonus) * b.penalty))


def test_the_merged_keyword_list_keeps_each_stores_scores(stores):
    """The lists are merged by score, not re-scored: each hit's keyword score is its store's."""
    personal, team, embedder = stores
    combined = CombinedStore({"personal": personal, "team": team})
    alone = {
        (h.store_label or label, h.path): h.breakdown.lists["porter"].score
        for label, store in (("personal", personal), ("team", team))
        for h in SearchEngine(store, embedder).search("rollback", SearchOptions(mode="lexical")).hits
    }
    together = SearchEngine(combined, embedder).search("rollback", SearchOptions(mode="lexical")).hits
    assert {(h.store_label, h.path): h.breakdown.lists["porter"].score for h in together} == alone
    scores = [h.breakdown.lists["porter"].score for h in together]
    assert [h.breakdown.lists["porter"].rank for h in together] == sorted(
        h.breakdown.lists["porter"].rank for h in together
    )
    assert scores == sorted(scores, reverse=True)


def test_source_filters_apply_across_both(stores):
    personal, team, embedder = stores
    combined = CombinedStore({"personal": personal, "team": team})
    engine = SearchEngine(combined, embedder)
    team_only = engine.search("rollback source:team-docs", SearchOptions(mode="hybrid")).hits
    assert team_only and {h.store_label for h in team_only} == {"team"}
    mine = engine.search("rollback source:notes", SearchOptions(mode="hybrid")).hits
    assert mine and {h.store_label for h in mine} == {"personal"}
    assert not engine.search("rollback source:nowhere", SearchOptions(mode="lexical")).hits


def test_a_model_mismatch_is_named(stores):
    personal, team, _ = stores
    assert differing_models({"personal": personal, "team": team}) is None
    team.settings.set("vector_fingerprint", "sentence-transformers/all-mpnet-base-v2|768|1")
    models = differing_models({"personal": personal, "team": team})
    assert models and models["team"] == "sentence-transformers/all-mpnet-base-v2|768|1"
    message = model_mismatch_message(models)
    assert "all-mpnet-base-v2" in message and "personal" in message and "team" in message
    assert "another version" not in message
    name = personal.settings.get("vector_fingerprint").split("|")[0]
    team.settings.set("vector_fingerprint", f"{name}|1|another")
    assert "(same model, another version)" in model_mismatch_message(
        differing_models({"personal": personal, "team": team})
    )


def test_searching_together_changes_neither_store(stores):
    personal, team, embedder = stores
    combined = CombinedStore({"personal": personal, "team": team})
    before = team.version()
    SearchEngine(combined, embedder).search("failover replica", SearchOptions(mode="hybrid"))
    assert team.version() == before
    with pytest.raises(StoreError):
        combined.sources.add(kind="folder", root="/x", name="x")
