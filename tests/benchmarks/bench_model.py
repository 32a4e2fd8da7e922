"""Raw throughput of the default embedding model, and query latency.

Not a pytest test: run it and read the figures.

    PYTHONPATH=app .venv/bin/python tests/benchmarks/bench_model.py [--chunks 200] [--threads 2]

Chunks are ~1000-byte pieces of the standard library found next to the running
Python: docstrings (prose) and source (code), packed paragraph by paragraph, so the
figures reflect what indexing notes and repositories costs.
"""

from __future__ import annotations

import argparse
import ast
import statistics
import sys
import sysconfig
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from kenning.embedding import BATCH_SIZE, FastEmbedEmbedder

TARGET_BYTES = 1000


def stdlib_files() -> list[Path]:
    root = Path(sysconfig.get_paths()["stdlib"])
    return sorted(p for p in root.glob("*.py") if p.stat().st_size > 4000)


def docstring_paragraphs(path: Path) -> Iterator[str]:
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except (SyntaxError, UnicodeDecodeError):
        return
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef)):
            doc = ast.get_docstring(node)
            if doc:
                yield from (p.strip() for p in doc.split("\n\n") if p.strip())


def code_paragraphs(path: Path) -> Iterator[str]:
    text = path.read_text(encoding="utf-8", errors="replace")
    yield from (p for p in text.split("\n\n") if p.strip())


def pack(paragraphs: Iterator[str], count: int) -> list[str]:
    """Join paragraphs into chunks of about TARGET_BYTES, as a paragraph chunker would."""
    chunks: list[str] = []
    current = ""
    for paragraph in paragraphs:
        paragraph = paragraph[:TARGET_BYTES]
        if current and len(current) + len(paragraph) > TARGET_BYTES:
            chunks.append(current)
            if len(chunks) == count:
                break
            current = ""
        current = f"{current}\n\n{paragraph}" if current else paragraph
    return chunks


def corpus(kind: str, count: int) -> list[str]:
    source = docstring_paragraphs if kind == "prose" else code_paragraphs
    return pack((p for f in stdlib_files() for p in source(f)), count)


def measure_throughput(embedder: FastEmbedEmbedder, chunks: list[str]) -> dict[str, float]:
    tokens = embedder.count_tokens(chunks)
    # Length-sorted, as the indexer batches: less padding inside each batch.
    order = sorted(range(len(chunks)), key=tokens.__getitem__)
    ordered = [chunks[i] for i in order]
    started, cpu_started = time.perf_counter(), time.process_time()
    for start in range(0, len(ordered), BATCH_SIZE):
        embedder.embed_batch(ordered[start : start + BATCH_SIZE])
    seconds = time.perf_counter() - started
    # CPU seconds as well: wall time alone misleads when other processes share the cores.
    cpu_seconds = time.process_time() - cpu_started
    return {
        "chunks": len(chunks),
        "mean_bytes": statistics.mean(len(c.encode()) for c in chunks),
        "mean_tokens": statistics.mean(tokens),
        "truncated": sum(t >= embedder.max_tokens for t in tokens),
        "seconds": seconds,
        "cpu_seconds": cpu_seconds,
        "chunks_per_s": len(chunks) / seconds,
        "tokens_per_s": sum(tokens) / seconds,
    }


def measure_query_latency(embedder: FastEmbedEmbedder, rounds: int = 50) -> list[float]:
    queries = ["how do I parse command line arguments", "thread pool executor shutdown"]
    embedder.embed_query(queries[0])  # warm-up
    timings = []
    for i in range(rounds):
        started = time.perf_counter()
        embedder.embed_query(queries[i % len(queries)])
        timings.append((time.perf_counter() - started) * 1000)
    return sorted(timings)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", type=int, default=200)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args(argv)

    with tempfile.TemporaryDirectory() as cache:
        embedder = FastEmbedEmbedder(cache_dir=Path(cache), threads=args.threads)
        started = time.perf_counter()
        embedder.load()
        print(f"model {embedder.fingerprint}, threads {args.threads}, batch {BATCH_SIZE}")
        print(f"load: {time.perf_counter() - started:.2f} s")
        embedder.embed_batch(["warm-up"] * 2)
        for kind in ("prose", "code"):
            r = measure_throughput(embedder, corpus(kind, args.chunks))
            print(
                f"{kind}: {r['chunks']} chunks, {r['mean_bytes']:.0f} B / "
                f"{r['mean_tokens']:.0f} tokens mean, {r['truncated']} at the "
                f"{embedder.max_tokens}-token cap: {r['seconds']:.1f} s "
                f"({r['cpu_seconds']:.1f} CPU s), "
                f"{r['chunks_per_s']:.1f} chunks/s, {r['tokens_per_s']:.0f} tokens/s"
            )
        latency = measure_query_latency(embedder)
        p50 = latency[len(latency) // 2]
        p95 = latency[int(len(latency) * 0.95)]
        print(f"query embedding: p50 {p50:.1f} ms, p95 {p95:.1f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
