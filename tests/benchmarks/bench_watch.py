"""Save-to-searchable time of the file watcher (#14: p95 ≤ 2 s over 50 saves).

A folder of --files notes is indexed; the watcher (kenning.ingest.watch, the same core
as the window's and `kenning index --watch`) runs in its own thread with its own
store, as in the app.  Each round saves one note with a new word (half of them new
files, half edits of existing ones) and times until a lexical search finds it.

    .venv/bin/python tests/benchmarks/bench_watch.py [--files 5000] [--saves 50] [--embed]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "gui"))

from tests_gui_helpers import write_many


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=5000)
    parser.add_argument("--saves", type=int, default=50)
    parser.add_argument("--embed", action="store_true", help="the fake embedder computes vectors after the text")
    args = parser.parse_args()

    from kenning.embedding import FakeEmbedder
    from kenning.ingest.indexer import Indexer
    from kenning.ingest.sources import add_source
    from kenning.ingest.watch import Watcher
    from kenning.search.engine import SearchEngine, SearchOptions
    from kenning.storage import open_store

    with tempfile.TemporaryDirectory() as tmp:
        root = write_many(Path(tmp) / "notes", args.files)
        db = Path(tmp) / "k.db"
        store = open_store(db)
        add_source(store, root, name="notes")
        started = time.monotonic()
        Indexer(store, None).run(embed=False)
        print(f"indexed {args.files} files in {time.monotonic() - started:.1f} s")
        watch_store = open_store(db)
        factory = FakeEmbedder if args.embed else None
        watcher = Watcher(watch_store, factory)
        stop = threading.Event()
        thread = threading.Thread(target=watcher.run, args=(stop,), daemon=True)
        thread.start()
        time.sleep(1.0)
        engine = SearchEngine(store, None)
        options = SearchOptions(limit=5, mode="lexical")
        times = []
        for i in range(args.saves):
            word = f"zyx{i:03d}marker"
            # Odd rounds create a file in a new folder, even rounds edit an existing note.
            path = root / "fresh" / f"saved-{i:03d}.md" if i % 2 else root / "d000" / f"note-{i:05d}.md"
            path.parent.mkdir(exist_ok=True)
            saved = time.monotonic()
            path.write_text(f"# Saved {i}\n\nThe word {word} was just written.\n", encoding="utf-8")
            while True:
                result = engine.search(word, options)
                if result.layer == "rrf" and any(word in h.text for h in result.hits):
                    break
                if time.monotonic() - saved > 10:
                    print(f"save {i}: not searchable after 10 s")
                    break
                time.sleep(0.01)
            times.append(time.monotonic() - saved)
            time.sleep(0.1)
        stop.set()
        thread.join(5)
        times.sort()
        p50 = statistics.median(times)
        p95 = times[min(len(times) - 1, int(round(0.95 * len(times))) - 1)]
        print(
            f"save-to-searchable over {len(times)} saves: p50 {p50 * 1000:.0f} ms, p95 {p95 * 1000:.0f} ms, max {times[-1] * 1000:.0f} ms"
        )
        watch_store.close()
        store.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
