"""Extraction speed and memory per document format.  Not a pytest test: run it and read the figures.

    .venv/bin/python tests/benchmarks/bench_extract.py [--files 300] [--pages 10]

For each format, a fresh process generates --files documents (PDFs of --pages pages,
~10 KB HTML pages, 20-cell notebooks, 60-paragraph .docx/.odt, e-mails, and mailboxes
of 20 messages) and indexes them with phase 1 of `kenning index` (extraction in the
worker process, chunking, FTS; no embedding).  It prints files/s (pages/s for PDF,
messages/s for mbox), the time spent waiting on the extraction worker, and the peak
RSS of the indexer and of the worker (ru_maxrss: high-water marks).
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # tests/: docfiles

FORMATS = ["pdf", "html", "ipynb", "docx", "odt", "eml", "mbox"]
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
    "latency",
    "throughput",
    "cache",
    "replica",
    "shard",
    "ledger",
    "schema",
]


def _sentence(rng: random.Random, n: int = 12) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n)).capitalize() + "."


def _generate(fmt: str, folder: Path, files: int, pages: int) -> int:
    """Write the documents; return the unit count (pages for PDF, messages for mbox, else files)."""
    from docfiles import docx_bytes, email_bytes, mbox_bytes, notebook_json, odt_bytes, pdf_bytes

    rng = random.Random(7)
    units = 0
    for i in range(files):
        if fmt == "pdf":
            doc = [[_sentence(rng, 10) for _ in range(40)] for _ in range(pages)]
            (folder / f"paper{i}.pdf").write_bytes(pdf_bytes(doc, title=f"Paper {i}"))
            units += pages
        elif fmt == "html":
            body = "".join(
                f"<h2>{_sentence(rng, 3)}</h2>" + "".join(f"<p>{_sentence(rng)}</p>" for _ in range(8))
                for _ in range(8)
            )
            page = f"<html><head><title>Page {i}</title><script>var x = 1;</script></head><body><nav>a b c</nav><main><h1>Page {i}</h1>{body}</main></body></html>"
            (folder / f"page{i}.html").write_text(page)
            units += 1
        elif fmt == "ipynb":
            cells = []
            for c in range(10):
                cells.append(("markdown", f"## {_sentence(rng, 3)}\n\n{_sentence(rng)}"))
                cells.append(("code", f"def step_{c}(x):\n    return x * {c}  # {_sentence(rng, 5)}\n"))
            (folder / f"nb{i}.ipynb").write_text(notebook_json(cells))
            units += 1
        elif fmt in ("docx", "odt"):
            paras = []
            for _ in range(6):
                paras.append(("Heading1" if fmt == "docx" else 1, _sentence(rng, 3)))
                paras += [("" if fmt == "docx" else 0, _sentence(rng, 25)) for _ in range(9)]
            data = docx_bytes(paras, title=f"Doc {i}") if fmt == "docx" else odt_bytes(paras, title=f"Doc {i}")
            (folder / f"doc{i}.{fmt}").write_bytes(data)
            units += 1
        elif fmt == "eml":
            (folder / f"mail{i}.eml").write_bytes(
                email_bytes(_sentence(rng, 4), "a@example.org", "\n\n".join(_sentence(rng) for _ in range(10)))
            )
            units += 1
        elif fmt == "mbox":
            messages = [
                email_bytes(_sentence(rng, 4), "a@example.org", "\n\n".join(_sentence(rng) for _ in range(6)))
                for _ in range(20)
            ]
            (folder / f"box{i}.mbox").write_bytes(mbox_bytes(messages))
            units += 20
    return units


def run_one(fmt: str, files: int, pages: int) -> dict:
    import kenning.ingest.extract as extract
    from kenning.ingest.indexer import Indexer
    from kenning.ingest.sources import add_source
    from kenning.storage import open_store

    waited = [0.0]
    original = extract.extract_file

    def timed(raw, kind, max_bytes):
        started = time.perf_counter()
        try:
            return original(raw, kind, max_bytes)
        finally:
            waited[0] += time.perf_counter() - started

    import kenning.ingest.extracted as extracted

    extracted.extract_file = timed
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "docs"
        folder.mkdir()
        units = _generate(fmt, folder, files, pages)
        size = sum(p.stat().st_size for p in folder.iterdir())
        store = open_store(Path(tmp) / "store" / "kenning.db")
        add_source(store, folder)
        started = time.perf_counter()
        run = Indexer(store, None).run(embed=False)
        seconds = time.perf_counter() - started
        report = run.reports[0]
        chunks = store.scalar("SELECT count(*) FROM chunks")
        store.close()
        if extract._worker is not None:
            extract._worker.close()
    return {
        "format": fmt,
        "files": files,
        "units": units,
        "mb": size / 1e6,
        "seconds": seconds,
        "extract_seconds": waited[0],
        "chunks": chunks,
        "skipped": len(report.skipped),
        "errors": len(report.errors),
        "indexer_peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "worker_peak_mb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=300)
    parser.add_argument("--pages", type=int, default=10)
    parser.add_argument("--one", choices=FORMATS, help=argparse.SUPPRESS)
    parser.add_argument("--formats", default=",".join(FORMATS))
    args = parser.parse_args()
    if args.one:
        print(json.dumps(run_one(args.one, args.files, args.pages)))
        return
    unit_name = {"pdf": "pages", "mbox": "messages"}
    print(
        f"{'format':<7} {'files':>5} {'MB':>6} {'chunks':>6} {'rate (index)':>20} {'extract only':>20} {'indexer MB':>10} {'worker MB':>9}"
    )
    for fmt in args.formats.split(","):
        out = subprocess.run(
            [sys.executable, __file__, "--one", fmt, "--files", str(args.files), "--pages", str(args.pages)],
            capture_output=True,
            text=True,
            check=True,
        )
        r = json.loads(out.stdout.strip().splitlines()[-1])
        unit = unit_name.get(fmt, "files")
        rate = f"{r['units'] / r['seconds']:.0f} {unit}/s"
        extract_rate = f"{r['units'] / max(r['extract_seconds'], 1e-9):.0f} {unit}/s"
        bad = f"  ({r['skipped']} skipped, {r['errors']} errors)" if r["skipped"] or r["errors"] else ""
        print(
            f"{fmt:<7} {r['files']:>5} {r['mb']:>6.1f} {r['chunks']:>6} {rate:>20} {extract_rate:>20}"
            f" {r['indexer_peak_mb']:>10.0f} {r['worker_peak_mb']:>9.0f}{bad}"
        )


if __name__ == "__main__":
    main()
