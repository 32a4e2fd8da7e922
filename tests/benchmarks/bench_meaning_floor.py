"""Calibrating the meaning-only similarity floor (search.engine.MEANING_FLOOR).

For every collection (../shared/data and any BEIR folder named), with the default
model: the cosine between each judged query and its judged-relevant documents, and
between it and random documents; and the best cosine over the whole collection of
queries that mean nothing (random letter strings like `qwxzv`).  A good floor keeps
almost every relevant document (a chunk is dropped by the floor only when no word of
the query matched it literally) and cuts what a nonsense query finds.

    python tests/benchmarks/bench_meaning_floor.py [--keep DIR] [FOLDER ...]
"""

from __future__ import annotations

import argparse
import random
import string
from pathlib import Path

import numpy as np
from collections_store import collection_folders, default_embedder, indexed_store

from kenning.search.engine import MEANING_FLOOR
from kenning.storage import vectors as vectors_repo

PERCENTILES = (1, 5, 10, 25, 50, 75, 90, 95, 99)


def document_matrix(store, fingerprint):
    """(document names, matrix): one row per document, its best chunk taken per query."""
    ids, matrix = vectors_repo.load_all(store, fingerprint)
    rows = store.execute("SELECT c.id, d.rel_path FROM chunks c JOIN documents d ON d.id = c.document_id")
    name_of = {cid: Path(rel).stem for cid, rel in rows}
    return [name_of[int(i)] for i in ids], matrix


def doc_cosines(names, matrix, qvec) -> dict[str, float]:
    sims = matrix @ qvec
    best: dict[str, float] = {}
    for name, s in zip(names, sims):
        if s > best.get(name, -2.0):
            best[name] = float(s)
    return best


def nonsense_queries(rng: random.Random, count: int) -> list[str]:
    out = []
    for _ in range(count):
        words = rng.randint(1, 2)
        out.append(" ".join("".join(rng.choices(string.ascii_lowercase, k=rng.randint(4, 8))) for _ in range(words)))
    return out


def measure(folder: Path, keep: Path, embedder, rng: random.Random) -> dict:
    store, _, queries, qrels = indexed_store(folder, keep, embedder)
    names, matrix = document_matrix(store, embedder.fingerprint)
    relevant, randoms, best_random, top10 = [], [], [], []
    everyone = sorted(set(names))
    for qid, judged in qrels.items():
        if qid not in queries:
            continue
        sims = doc_cosines(names, matrix, embedder.embed_query(queries[qid]))
        relevant += [sims[d] for d in judged if d in sims]
        sample = rng.sample(everyone, min(100, len(everyone)))
        randoms += [sims[d] for d in sample]
        ranked = sorted(sims.values(), reverse=True)
        top10.append(ranked[9])
    for text in nonsense_queries(rng, 100):
        sims = doc_cosines(names, matrix, embedder.embed_query(text))
        best_random.append(max(sims.values()))
    store.close()
    return {"relevant": relevant, "random": randoms, "nonsense best": best_random, "10th best (real query)": top10}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folders", nargs="*")
    parser.add_argument("--keep", default="/tmp/kenning-bench-collections", help="where indexed stores are kept")
    args = parser.parse_args()
    embedder = default_embedder()
    rng = random.Random(12)
    print(f"floor in use: {MEANING_FLOOR}")
    for folder in collection_folders(args.folders):
        found = measure(folder, Path(args.keep), embedder, rng)
        print(f"\n{folder.name}: cosine percentiles")
        print(f"{'':<24}" + "".join(f"{'p' + str(p):>7}" for p in PERCENTILES) + f"{'<floor':>9}")
        for label, values in found.items():
            arr = np.array(values)
            below = float((arr < MEANING_FLOOR).mean()) * 100
            row = "".join(f"{np.percentile(arr, p):7.3f}" for p in PERCENTILES)
            print(f"{label:<24}{row}{below:8.1f}%")


if __name__ == "__main__":
    main()
