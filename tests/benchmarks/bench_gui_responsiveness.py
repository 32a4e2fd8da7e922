"""Does the window stay responsive while a 10k-file folder indexes?

A 5 ms QTimer runs on the UI thread for the whole run; every gap between its ticks
beyond the interval is time the event loop was blocked.  Meanwhile a query is typed
every 0.5 s, so search runs concurrently with indexing, and the sources panel's
counts are refreshed as in normal use.

    QT_QPA_PLATFORM=offscreen .venv/bin/python tests/benchmarks/bench_gui_responsiveness.py [--files 10000] [--real-model]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "gui"))

from tests_gui_helpers import write_many  # noqa: E402

TICK_MS = 5


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--real-model", action="store_true", help="embed with the bundled model (slow)")
    args = parser.parse_args()

    from PySide6.QtCore import QElapsedTimer, QTimer

    from kenning.embedding import FakeEmbedder
    from kenning.gui.app import make_app
    from kenning.gui.main_window import MainWindow

    tmp = Path(tempfile.mkdtemp(prefix="kenning-bench-"))
    os.environ["KENNING_HOME"] = str(tmp / "home")
    t0 = time.perf_counter()
    folder = write_many(tmp / "notes", args.files)
    print(f"wrote {args.files} files in {time.perf_counter() - t0:.1f}s")
    app = make_app()
    window = MainWindow(
        tmp / "store" / "kenning.db", embedder_factory=None if args.real_model else FakeEmbedder, auto_index=False
    )
    window.sources_panel.ask = lambda *_: True
    window.show()
    # As when a user adds a folder: the window is up (first paint, model, source list)
    # before indexing starts; measuring begins with the folder.
    ready: list[str] = []
    window.search_service.model_ready.connect(ready.append)
    wait_until(app, lambda: bool(ready) and window.has_sources is not None, 60)
    wait_until(app, lambda: False, 0.3)

    gaps: list[float] = []
    clock = QElapsedTimer()
    clock.start()
    last = [clock.elapsed()]
    # Live search sends half-typed words too ("snaps"): unknown to the index, they make
    # the engine look for a "did you mean" in the vocabulary.
    queries = ["quorum lease", "journal snaps", "thread render", "cache laten"]
    search_times: list[float] = []
    sent: dict[int, float] = {}

    def tick() -> None:
        now = clock.elapsed()
        gaps.append(now - last[0] - TICK_MS)
        last[0] = now

    def type_query() -> None:
        rid = window.run_search(queries[len(sent) % len(queries)], "hybrid")
        sent[rid] = time.perf_counter()

    window.search_service.results.connect(
        lambda rid, _: search_times.append((time.perf_counter() - sent[rid]) * 1000) if rid in sent else None
    )
    ticker = QTimer(interval=TICK_MS, timeout=tick)
    typer = QTimer(interval=500, timeout=type_query)
    phases: dict[str, float] = {}
    window.indexer.progress.connect(lambda p: phases.setdefault(p.phase, time.perf_counter()))
    started = time.perf_counter()

    def finished(run, error: str) -> None:
        # Measuring ends with the run: quitting closes the window, and its shutdown
        # (waiting for a search in flight) is not indexing.
        ticker.stop()
        typer.stop()
        print("run error:", error or "none", "| cancelled:", getattr(run, "cancelled", None))
        app.quit()

    window.indexer.finished.connect(finished)
    ticker.start()
    typer.start()
    window.sources_panel.add_folder(str(folder))
    app.exec()
    elapsed = time.perf_counter() - started
    window.shutdown()
    gaps = [max(0.0, g) for g in gaps[1:]]
    gaps.sort()
    print(
        f"indexed {args.files} files in {elapsed:.1f}s; phases began at "
        + ", ".join(f"{k} +{v - started:.1f}s" for k, v in phases.items())
    )
    print(
        f"event loop: {len(gaps)} ticks, max block {gaps[-1]:.0f} ms, p99 {gaps[int(len(gaps) * 0.99)]:.0f} ms, "
        f"median {statistics.median(gaps):.0f} ms; longest: {', '.join(f'{g:.0f}' for g in gaps[-5:])}"
    )
    if search_times:
        print(
            f"searches during indexing: {len(search_times)}, median {statistics.median(search_times):.0f} ms, "
            f"max {max(search_times):.0f} ms"
        )
    return 0 if gaps[-1] < 100 else 1


def wait_until(app, condition, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while not condition() and time.monotonic() < deadline:
        app.processEvents()
        time.sleep(0.01)


if __name__ == "__main__":
    sys.exit(main())
