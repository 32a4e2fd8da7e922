"""Issue #28 (done when): `kenning eval` prints the quality benchmark's Kenning figures:
both take them from kenning.cli.evaluate.kenning_rows, over a store prepared the same way."""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

from kenning.cli.evaluate import kenning_rows, load_dataset
from kenning.embedding import FakeEmbedder
from kenning.search.engine import SearchEngine
from kenning.storage import open_store
from kenning_testing import write_beir
from reliability.helpers import cli

TOPICS = ["boundary layer", "heat transfer", "shock wave", "wing flutter", "jet noise", "panel buckling"]
FIGURES = ("queries", "ndcg@10", "recall@100", "mrr@10")


def _collection(folder: Path) -> Path:
    """A small BEIR-layout collection: documents on a few topics, a query per topic."""
    rng = random.Random(28)
    filler = ["flow", "pressure", "model", "test", "data", "surface", "speed", "angle", "result", "method"]
    docs, qrels = [], []
    for n in range(60):
        topic = TOPICS[n % len(TOPICS)]
        words = " ".join(rng.choices(filler, k=12))
        docs.append({"_id": f"d{n}", "title": f"On {topic} {n}", "text": f"The {topic} study: {words}."})
        if rng.random() < 0.6:
            qrels.append((f"q{n % len(TOPICS)}", f"d{n}"))
    queries = [{"_id": f"q{i}", "text": f"what is known about {t}"} for i, t in enumerate(TOPICS)]
    return write_beir(folder, docs, queries, qrels)


def test_kenning_eval_prints_the_figures_the_benchmark_computes(tmp_path):
    folder = _collection(tmp_path / "beir")
    keep = tmp_path / "kept"
    rc, out, err = cli(tmp_path / "k.db", "eval", str(folder), "--mode", "all", "--json", "--keep", str(keep))
    assert rc == 0, err
    printed = [json.loads(line) for line in out.splitlines()]
    _, queries, qrels = load_dataset(folder)
    store = open_store(keep / "eval.db")
    try:
        computed = kenning_rows(SearchEngine(store, FakeEmbedder()), queries, qrels, ["lexical", "vector", "hybrid"])
    finally:
        store.close()
    assert [row["mode"] for row in printed] == ["lexical", "vector", "hybrid"]
    assert [{k: r[k] for k in FIGURES} for r in printed] == [{k: r[k] for k in FIGURES} for r in computed]
    assert all(r["queries"] == len(TOPICS) and r["ndcg@10"] > 0 for r in printed)


def test_the_benchmark_takes_its_kenning_rows_from_the_same_function():
    sys.path.insert(0, str(Path(__file__).parent / "benchmarks"))
    try:
        import bench_quality
    finally:
        sys.path.pop(0)
    assert bench_quality.kenning_rows is kenning_rows


def _bench(name: str):
    sys.path.insert(0, str(Path(__file__).parent / "benchmarks"))
    try:
        return __import__(name)
    finally:
        sys.path.pop(0)


def test_the_typo_benchmark_measures_every_mode_beside_the_clean_figures(tmp_path):
    bench_typos = _bench("bench_typos")
    folder = _collection(tmp_path / "beir")
    measured = bench_typos.measure(folder, tmp_path / "kept", FakeEmbedder(), seed=12)
    assert measured["queries"] == len(TOPICS) and measured["skipped"] == 0
    assert list(measured["modes"]) == ["lexical", "vector", "hybrid"]
    _, queries, qrels = load_dataset(folder)
    store = open_store(tmp_path / "kept" / folder.name / "eval.db")
    try:
        computed = kenning_rows(SearchEngine(store, FakeEmbedder()), queries, qrels, ["lexical", "vector", "hybrid"])
    finally:
        store.close()
    for row in computed:
        figures = measured["modes"][row["mode"]]
        # Every query got a typo, so the clean rows searched with the defaults are kenning eval's.
        assert figures["ndcg@10"]["clean+corr"] == row["ndcg@10"]
        assert figures["recall@100"]["clean+corr"] == row["recall@100"]
    lexical = measured["modes"]["lexical"]
    assert lexical["ndcg@10"]["typo"] == lexical["ndcg@10"]["typo+corr"]  # keyword search searches what was typed
    assert measured["modes"]["hybrid"]["restored"] > 0


def test_a_typo_counts_as_restored_where_did_you_mean_gives_the_word_back():
    from types import SimpleNamespace

    restored = _bench("bench_typos").restored
    offered = SimpleNamespace(
        query="Coding and matching methods, matchnig",
        suggestion="Coding and matching methods, matching",
        corrections={},
    )
    assert restored(offered, "matching", "matchnig")  # the word meant is written elsewhere in the question too
    other = SimpleNamespace(query="prper managment", suggestion="proper management", corrections={})
    assert restored(other, "management", "managment")  # another word corrected first
    assert not restored(other, "proper", "managment")
    searched = SimpleNamespace(query="matchnig", suggestion=None, corrections={"matchnig": "matching"})
    assert restored(searched, "matching", "matchnig")
