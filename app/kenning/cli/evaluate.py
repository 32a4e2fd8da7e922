"""`kenning eval`: index a BEIR-layout collection into a store and measure.

Each corpus entry becomes one markdown file (title as heading, text as body), so the
collection goes through exactly the pipeline a user's notes do.  The quality
benchmark (tests/benchmarks/bench_quality.py) measures Kenning's rows with these same
functions, so `kenning eval` and the benchmark print the same figures.
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from kenning import TYPE_CHECKING
from kenning.cli.context import Context
from kenning.cli.terminal import TerminalProgress
from kenning.core.errors import KenningError
from kenning.core.progress import ProgressCallback, no_progress
from kenning.embedding import Embedder
from kenning.ingest.indexer import Indexer
from kenning.ingest.sources import add_source, find_source
from kenning.search.engine import SearchEngine, SearchOptions
from kenning.search.fusion import DEFAULT_FUSION
from kenning.search.metrics import mrr_at, ndcg_at, percentile, recall_at
from kenning.workspace import open_store

if TYPE_CHECKING:
    from kenning.core.types import Fusion, SearchMode

DEPTH = 100
MAX_HITS = 2 * DEPTH
SOURCE_NAME = "eval"


def load_dataset(folder: Path) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    try:
        corpus = _jsonl(folder / "corpus.jsonl")
        queries = {q["_id"]: q["text"] for q in _jsonl(folder / "queries.jsonl")}
        qrels: dict[str, dict[str, int]] = {}
        with open(folder / "qrels.tsv", encoding="utf-8") as f:
            rows = csv.reader(f, delimiter="\t")
            next(rows, None)
            for row in rows:
                if len(row) >= 3 and int(row[2]) > 0:
                    qrels.setdefault(row[0], {})[row[1]] = int(row[2])
    except (OSError, ValueError, KeyError) as exc:
        raise KenningError(
            f"{folder} is not a BEIR-layout folder (corpus.jsonl, queries.jsonl, qrels.tsv): {exc}"
        ) from exc
    return {d["_id"]: d for d in corpus}, queries, qrels


def _jsonl(path: Path) -> list[dict[str, Any]]:
    """Every line an object with a text "_id", and "title"/"text" text when present
    (ValueError naming the line otherwise)."""
    rows = []
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            if not line.strip():
                continue
            row = json.loads(line)
            if not isinstance(row, dict) or not isinstance(row.get("_id"), (str, int)) or row["_id"] == "":
                raise ValueError(f'{path.name} line {number} is not a JSON object with an "_id"')
            for field in ("title", "text"):
                if row.get(field) is not None and not isinstance(row[field], str):
                    kind = type(row[field]).__name__
                    raise ValueError(f'{path.name} line {number}: "{field}" is a {kind}, not a text')
            row["_id"] = str(row["_id"])
            if len(doc_file_name(row["_id"]).encode("utf-8")) > 255:
                raise ValueError(f'{path.name} line {number}: the "_id" is too long to name a file')
            rows.append(row)
    return rows


def doc_file_name(doc_id: str) -> str:
    """The file a document id is written to, one per id: letters, digits and `-_.` as they
    are, every other character (`/`, `:`, `%`, a leading dot that would hide the file) as
    %XX of its UTF-8 bytes, so `x/1`, `x_1` and `x:1` are three files (doc_id_of reads
    the id back)."""
    out = []
    for i, ch in enumerate(doc_id):
        if (ch.isalnum() or ch in "-_.") and not (i == 0 and ch == "."):
            out.append(ch)
        else:
            out.append("".join(f"%{byte:02X}" for byte in ch.encode("utf-8", "surrogatepass")))
    return "".join(out) + ".md"


def doc_id_of(path: str) -> str:
    """The document id a hit's file holds (inverse of doc_file_name)."""
    from urllib.parse import unquote

    return unquote(Path(path).stem, errors="surrogatepass")


def write_corpus(corpus: dict[str, Any], folder: Path) -> None:
    """One markdown file per document; a file already holding the same text is left
    alone, so re-indexing a kept folder finds nothing changed."""
    folder.mkdir(parents=True, exist_ok=True)
    for doc_id, doc in corpus.items():
        title = (doc.get("title") or "").strip()
        body = (doc.get("text") or "").strip()
        text = f"# {title}\n\n{body}\n" if title else f"{body}\n"
        path = folder / doc_file_name(doc_id)
        try:
            if path.read_text(encoding="utf-8") == text:
                continue
        except OSError:
            pass
        path.write_text(text, encoding="utf-8")


def prepare_store(
    folder: Path, corpus: dict[str, Any], embedder: Embedder | None, on_progress: ProgressCallback = no_progress
) -> Any:  # the throwaway store (kenning.workspace.open_store)
    """Index the collection into folder/eval.db (re-using what a kept folder holds)."""
    docs = folder / "docs"
    write_corpus(corpus, docs)
    store = open_store(folder / "eval.db")
    if find_source(store, SOURCE_NAME) is None:
        add_source(store, docs, name=SOURCE_NAME)
    Indexer(store, (lambda: embedder) if embedder else None).run(embed=embedder is not None, on_progress=on_progress)
    return store


def ranked_documents(engine: SearchEngine, text: str, options: SearchOptions) -> list[str]:
    """The collection's document ids in the order the hits name them (a document is
    where its best chunk is).  Judgements are per document, so when several chunks of
    one document fill the hit list, more hits are asked for until DEPTH documents are
    named (or the matches run out): Recall@100 counts 100 documents, as the baselines do."""
    limit = options.limit
    while True:
        hits = engine.search(text, dataclasses.replace(options, limit=limit)).hits
        ranked = list(dict.fromkeys(doc_id_of(h.path) for h in hits))
        if len(ranked) >= options.limit or len(hits) < limit or limit >= MAX_HITS:
            return ranked[: options.limit]
        limit = min(MAX_HITS, limit * 2)


def measure(
    engine: SearchEngine, queries: dict[str, Any], qrels: dict[str, Any], options: SearchOptions, name: str = ""
) -> dict[str, Any]:
    """nDCG@10, Recall@100 and MRR@10 over the judged queries, with latency."""
    ndcg, recall, mrr, latency = [], [], [], []
    for qid, judged in qrels.items():
        if qid not in queries:
            continue
        started = time.perf_counter()
        ranked = ranked_documents(engine, queries[qid], options)
        latency.append((time.perf_counter() - started) * 1000)
        ndcg.append(ndcg_at(ranked, judged, 10))
        recall.append(recall_at(ranked, judged, 100))
        mrr.append(mrr_at(ranked, judged, 10))
    return {
        "mode": name or options.mode,
        "queries": len(ndcg),
        "ndcg@10": statistics.fmean(ndcg) if ndcg else 0.0,
        "recall@100": statistics.fmean(recall) if recall else 0.0,
        "mrr@10": statistics.fmean(mrr) if mrr else 0.0,
        "p50_ms": percentile(latency, 50),
        "p95_ms": percentile(latency, 95),
    }


def default_options(mode: SearchMode, fusion: Fusion = DEFAULT_FUSION) -> SearchOptions:
    """What `kenning eval` and the benchmark's Kenning rows search with: the shipped defaults."""
    return SearchOptions(limit=DEPTH, mode=mode, fusion=fusion)


def evaluate_mode(
    engine: SearchEngine,
    queries: dict[str, Any],
    qrels: dict[str, Any],
    mode: SearchMode,
    fusion: Fusion = DEFAULT_FUSION,
) -> dict[str, Any]:
    return measure(engine, queries, qrels, default_options(mode, fusion))


def kenning_rows(
    engine: SearchEngine,
    queries: dict[str, Any],
    qrels: dict[str, Any],
    modes: list[SearchMode],
    fusion: Fusion = DEFAULT_FUSION,
) -> list[dict[str, Any]]:
    """Kenning's figures for one collection, one row per mode: what `kenning eval` prints
    and the quality benchmark's Kenning rows (tests/benchmarks/bench_quality.py), so the
    two give the same figures for the same collection and model."""
    return [evaluate_mode(engine, queries, qrels, mode, fusion) for mode in modes]


def format_row(row: dict[str, Any]) -> str:
    return (
        f"{row['mode']:<8} nDCG@10 {row['ndcg@10']:.4f}  Recall@100 {row['recall@100']:.4f}  "
        f"MRR@10 {row['mrr@10']:.4f}  p50 {row['p50_ms']:.1f} ms  p95 {row['p95_ms']:.1f} ms  "
        f"({row['queries']} queries, {DEPTH} results each)"
    )


def run_eval(args: argparse.Namespace, ctx: Context) -> int:
    corpus, queries, qrels = load_dataset(Path(args.dataset))
    modes: list[SearchMode] = ["lexical", "vector", "hybrid"] if args.mode == "all" else [args.mode]
    if args.keep:
        # Re-running against a kept folder re-indexes only what changed (nothing).
        results = _index_and_measure(Path(args.keep), corpus, queries, qrels, modes, args.fusion, ctx)
    else:
        with tempfile.TemporaryDirectory(prefix="kenning-eval-") as tmp:
            results = _index_and_measure(Path(tmp), corpus, queries, qrels, modes, args.fusion, ctx)
    for row in results:
        print(json.dumps(row) if args.json else format_row(row))
    return 0


def _index_and_measure(
    folder: Path,
    corpus: dict[str, Any],
    queries: dict[str, Any],
    qrels: dict[str, Any],
    modes: list[SearchMode],
    fusion: Fusion,
    ctx: Context,
) -> list[dict[str, Any]]:
    needs_vectors = any(m != "lexical" for m in modes)
    embedder = ctx.embedder if needs_vectors else None
    progress = TerminalProgress()
    store = prepare_store(folder, corpus, embedder, on_progress=progress)
    try:
        progress.finish()
        print(f"indexed {len(corpus)} documents; {len(qrels)} judged queries", file=sys.stderr)
        engine = SearchEngine(store, embedder)
        return kenning_rows(engine, queries, qrels, modes, fusion)
    finally:
        store.close()
