"""Peak memory of indexing a large generated tree, and of phase 2 with the REAL default
model.  Not a pytest test: run it and read the figures.

    .venv/bin/python tests/benchmarks/bench_memory.py [--files 5000] [--embed-chunks 400]

Each stage runs in its own fresh process (ru_maxrss is a high-water mark), so:
  walk+phase1  peak RSS while walking and indexing --files notes (text + FTS), no model;
  phase2       peak RSS while the default model embeds --embed-chunks chunks of the
               longest kind (~1000 bytes, ~250 word pieces: the model's full window),
               in batches of embedphase.BATCH_SIZE.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

WORDS = [
    "index",
    "store",
    "vector",
    "chunk",
    "query",
    "rank",
    "fusion",
    "window",
    "model",
    "batch",
    "token",
    "memory",
    "source",
    "folder",
    "note",
    "heading",
    "python",
    "function",
    "class",
    "module",
    "search",
    "result",
]


def _text(i: int, size: int) -> str:
    words, k = [], i
    while sum(len(w) + 1 for w in words) < size:
        words.append(WORDS[k % len(WORDS)] + (str(k % 97) if k % 5 == 0 else ""))
        k = k * 31 + 7
    return " ".join(words)


def make_tree(root: Path, files: int) -> int:
    total = 0
    for i in range(files):
        folder = root / f"d{i % 100:02}"
        folder.mkdir(parents=True, exist_ok=True)
        body = "\n\n".join(f"## Part {p}\n\n{_text(i * 7 + p, 900)}" for p in range(4))
        data = f"# Note {i}\n\n{body}\n"
        (folder / f"n{i:05}.md").write_text(data)
        total += len(data)
    return total


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def stage(name: str, workdir: Path, count: int) -> dict:
    from kenning.ingest.embedphase import BATCH_SIZE
    from kenning.ingest.indexer import Indexer
    from kenning.ingest.sources import add_source
    from kenning.storage import open_store

    store = open_store(workdir / "k.db")
    base = peak_mb()
    started = time.monotonic()
    if name == "phase1":
        add_source(store, workdir / "tree")
        Indexer(store, None).run(embed=False)
        out = {
            "documents": store.scalar("SELECT count(*) FROM documents"),
            "chunks": store.scalar("SELECT count(*) FROM chunks"),
        }
    else:
        from kenning.core.progress import CancelToken
        from kenning.embedding import resolve_embedder
        from kenning.ingest.embedphase import embed_pending
        from kenning.storage import vectors

        embedder = resolve_embedder("default", workdir / "models")
        vectors.prepare(store, embedder.fingerprint, embedder.dim)
        # Only `count` chunks, the longest, stay pending (the rest are marked done) so the
        # figure is about batches of full-window texts, not about how long we wait.
        store.execute(
            "UPDATE chunks SET vector_fp = ? WHERE id NOT IN"
            " (SELECT id FROM chunks ORDER BY length(text) DESC LIMIT ?)",
            (embedder.fingerprint, count),
        )
        embedder.embed_batch(["load the model"])
        loaded = peak_mb()
        embed_pending(store, embedder, lambda p: None, CancelToken())
        out = {"embedded": count, "batch_size": BATCH_SIZE, "after_model_load_mb": round(loaded, 1)}
    out.update(
        stage=name, seconds=round(time.monotonic() - started, 1), start_mb=round(base, 1), peak_mb=round(peak_mb(), 1)
    )
    store.close()
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=5000)
    parser.add_argument("--embed-chunks", type=int, default=400)
    parser.add_argument("--stage", help=argparse.SUPPRESS)
    parser.add_argument("--workdir", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.stage:
        print(json.dumps(stage(args.stage, Path(args.workdir), args.embed_chunks)))
        return
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        total = make_tree(work / "tree", args.files)
        print(f"tree: {args.files} files, {total / 1e6:.1f} MB of text")
        for name in ("phase1", "phase2"):
            proc = subprocess.run(
                [
                    sys.executable,
                    __file__,
                    "--stage",
                    name,
                    "--workdir",
                    str(work),
                    "--embed-chunks",
                    str(args.embed_chunks),
                ],
                capture_output=True,
                text=True,
                check=True,
            )
            print(proc.stdout.strip().splitlines()[-1])


if __name__ == "__main__":
    main()
