"""Which quantised scan keeps the semantic list exact: recall@10 against exact cosine,
and nDCG@10 of the semantic ranking, on the quality collections, with the real model.

    python tests/benchmarks/bench_quantised.py [--data /work/shared/data] [--cache DIR]
        [--store cranfield=PATH/eval.db ...]

The documents' vectors come from a store that `kenning eval --keep` (or
bench_quality.py) built with the default model, when one is named with --store:
those are Kenning's own chunk vectors, and a document ranks at its best chunk.
Otherwise every document is embedded whole once and cached in --cache (NPL takes
long on 2 cores).  Queries are embedded by the default model.  Each ranking:
exact float32 cosine; int8 codes, 100 rescored; binary (sign) codes by Hamming
distance, the best `candidates` rescored at full precision.  Prints recall@10 (the
share of the exact top 10 found) and nDCG@10 per scheme, and the memory per vector.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

import numpy as np

from kenning.embedding import resolve_embedder
from kenning.storage import quantised
from kenning.storage.paths import model_cache_dir

K = 10


def _load(folder: Path) -> tuple[list[str], list[str], list[str], list[str], dict[str, dict[str, int]]]:
    docs = [json.loads(line) for line in (folder / "corpus.jsonl").open()]
    queries = [json.loads(line) for line in (folder / "queries.jsonl").open()]
    qrels: dict[str, dict[str, int]] = {}
    for line in list((folder / "qrels.tsv").open())[1:]:
        qid, did, score = line.split()
        qrels.setdefault(qid, {})[did] = int(score)
    doc_texts = [f"{d.get('title', '')}\n{d['text']}".strip() for d in docs]
    return [d["_id"] for d in docs], doc_texts, [q["_id"] for q in queries], [q["text"] for q in queries], qrels


def _embed(embedder, texts: list[str], cache: Path) -> np.ndarray:
    if cache.exists():
        return np.load(cache)
    started = time.perf_counter()
    out = []
    for start in range(0, len(texts), 16):
        out.append(embedder.embed_batch(texts[start : start + 16]))
        if start % 1600 == 0:
            print(f"  embedded {start}/{len(texts)}", file=sys.stderr)
    matrix = np.vstack(out).astype(np.float32)
    print(f"  {len(texts)} texts in {time.perf_counter() - started:.0f}s", file=sys.stderr)
    np.save(cache, matrix)
    return matrix


def _store_vectors(path: str) -> tuple[list[str], np.ndarray]:
    """(document id of each chunk, chunk vectors) from an eval store."""
    import apsw

    conn = apsw.Connection(f"file:{path}?mode=ro", flags=apsw.SQLITE_OPEN_READONLY | apsw.SQLITE_OPEN_URI)
    rows = list(
        conn.execute(
            "SELECT d.rel_path, e.vector FROM chunks c JOIN documents d ON d.id = c.document_id"
            " JOIN embeddings e ON e.fingerprint = c.vector_fp AND e.input_sha = c.input_sha ORDER BY c.id"
        )
    )
    doc_of = [Path(r[0]).stem for r in rows]
    return doc_of, np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32).reshape(len(rows), -1)


def _documents(rows, doc_of: list[str]) -> list[str]:
    """Chunk rows, best first -> document ids, each at its best chunk."""
    seen: list[str] = []
    for r in rows:
        if doc_of[r] not in seen:
            seen.append(doc_of[r])
    return seen


def _ndcg(ranked: list[str], rels: dict[str, int]) -> float:
    dcg = sum(rels.get(d, 0) / math.log2(i + 2) for i, d in enumerate(ranked[:K]))
    ideal = sorted(rels.values(), reverse=True)[:K]
    idcg = sum(r / math.log2(i + 2) for i, r in enumerate(ideal))
    return dcg / idcg if idcg else 0.0


def _schemes(docs: np.ndarray) -> dict[str, tuple[int, object]]:
    """name -> (bytes per vector in memory, function(query) -> top-K row indices)."""
    codes8, scales = quantised.int8_codes(docs)
    bits = quantised.binary_codes(docs)

    def exact(q):
        return quantised.top_rows(docs @ q, K)

    def int8(q, candidates=100):
        rough = quantised.int8_scores(codes8, scales, q)
        rows = quantised.top_rows(rough, candidates)
        return rows[quantised.top_rows(docs[rows] @ q, K)]

    def binary(candidates):
        def run(q):
            rows = quantised.hamming_candidates(bits, quantised.binary_codes(q[None, :])[0], None, candidates)
            return rows[quantised.top_rows(docs[rows] @ q, K)]

        return run

    schemes: dict[str, tuple[int, object]] = {"exact float32": (docs.shape[1] * 4, exact)}
    schemes["int8, 100 rescored"] = (docs.shape[1] + 4, int8)
    for candidates in (50, 100, 200, 400, 800):
        schemes[f"binary, {candidates} rescored"] = (docs.shape[1] // 8, binary(candidates))
    return schemes


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", default="/work/shared/data")
    parser.add_argument("--cache", default="/tmp/kenning-bench-quantised")
    parser.add_argument("--collections", nargs="+", default=["cranfield", "npl"])
    parser.add_argument("--store", action="append", default=[], metavar="NAME=PATH", help="an eval store's vectors")
    args = parser.parse_args()
    stores = dict(item.split("=", 1) for item in args.store)
    cache = Path(args.cache)
    cache.mkdir(parents=True, exist_ok=True)
    embedder = resolve_embedder("default", model_cache_dir())
    for name in args.collections:
        doc_ids, doc_texts, query_ids, query_texts, qrels = _load(Path(args.data) / name)
        if name in stores:
            doc_of, docs = _store_vectors(stores[name])
        else:
            doc_of, docs = doc_ids, _embed(embedder, doc_texts, cache / f"{name}-docs-{len(doc_texts)}.npy")
        queries = np.vstack([embedder.embed_query(t) for t in query_texts]).astype(np.float32)
        schemes = _schemes(docs)
        exact_fn = schemes["exact float32"][1]
        exact_top = [exact_fn(q) for q in queries]
        print(f"{name}: {len(doc_ids)} documents, {len(docs)} vectors, {len(query_ids)} queries")
        for scheme, (nbytes, fn) in schemes.items():
            started = time.perf_counter()
            tops = [fn(q) for q in queries]
            ms = (time.perf_counter() - started) * 1000 / len(queries)
            recall = np.mean([len(set(t) & set(e)) / K for t, e in zip(tops, exact_top)])
            ndcg = np.mean([_ndcg(_documents(t, doc_of), qrels.get(qid, {})) for t, qid in zip(tops, query_ids)])
            print(
                f"  {scheme:<22} {nbytes:>5} B/vector  recall@10 {recall:.4f}  nDCG@10 {ndcg:.4f}"
                f"  ({ms:.2f} ms/query here; 1M vectors: {nbytes * 1e6 / 2**20:,.0f} MiB)"
            )


if __name__ == "__main__":
    main()
