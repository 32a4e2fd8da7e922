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

from tests_gui_helpers import write_many

TICK_MS = 5


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--real-model", action="store_true", help="embed with the bundled model (slow)")
    parser.add_argument(
        "--profile", metavar="DIR", help="write cProfile stats of the searches and UI-thread stacks here"
    )
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
    window.sources_panel.ask = lambda *_a, **_k: True
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
    search_times: list[tuple[str, float]] = []  # (indexing phase when sent, ms)
    sent: dict[int, tuple[str, float]] = {}
    phase_now = ["start"]

    def tick() -> None:
        now = clock.elapsed()
        gaps.append(now - last[0] - TICK_MS)
        last[0] = now

    def type_query() -> None:
        rid = window.run_search(queries[len(sent) % len(queries)], "hybrid")
        sent[rid] = (phase_now[0], time.perf_counter())

    steps: list[tuple[str, dict[str, float]]] = []  # (phase, the engine's own timings)

    def answered(rid: int, result) -> None:
        if rid in sent:
            phase, at = sent[rid]
            search_times.append((phase, (time.perf_counter() - at) * 1000))
            steps.append((phase, dict(result.timings_ms)))

    window.search_service.results.connect(answered)
    # From a result arriving to the detail pane showing its selected hit (#25 item 3).
    detail_lags: list[float] = []
    arrived: list[float] = []
    window.search_service.results.connect(lambda *_: arrived.append(time.perf_counter()))
    set_hit = window.preview.set_hit

    def timed_set_hit(hit, *rest):
        if hit is not None and arrived:
            detail_lags.append((time.perf_counter() - arrived.pop()) * 1000)
            arrived.clear()
        return set_hit(hit, *rest)

    window.preview.set_hit = timed_set_hit
    total_times: list[float] = []  # ms from typing to the true total on screen (counted after the hits)
    window.search_service.totals.connect(
        lambda rid, _t: rid in sent and total_times.append((time.perf_counter() - sent[rid][1]) * 1000)
    )
    ticker = QTimer(interval=TICK_MS, timeout=tick)
    typer = QTimer(interval=500, timeout=type_query)
    phases: dict[str, float] = {}
    window.indexer.progress.connect(
        lambda p: (phases.setdefault(p.phase, time.perf_counter()), phase_now.__setitem__(0, p.phase))
    )
    started = time.perf_counter()

    def finished(run, error: str) -> None:
        # Measuring ends with the run: quitting closes the window, and its shutdown
        # (waiting for a search in flight) is not indexing.
        ticker.stop()
        typer.stop()
        print("run error:", error or "none", "| cancelled:", getattr(run, "cancelled", None))
        app.quit()

    window.indexer.finished.connect(finished)
    profiler = Profiling(window, Path(args.profile)) if args.profile else None
    ticker.start()
    typer.start()
    window.sources_panel.add_folder(str(folder))
    app.exec()
    if profiler:
        profiler.stop()
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
    report_searches("searches during indexing", [ms for _, ms in search_times])
    report_searches("  their totals (counted after the hits)", total_times)
    report_searches("  result to detail pane", detail_lags)
    for phase in dict.fromkeys(p for p, _ in search_times):
        report_searches(f"  while {phase}", [ms for p, ms in search_times if p == phase])
        report_steps(phase, [t for p, t in steps if p == phase])
    return 0 if gaps[-1] < 100 else 1


def report_searches(label: str, times: list[float]) -> None:
    if not times:
        return
    ordered = sorted(times)
    p95 = ordered[min(len(ordered) - 1, int(round(0.95 * len(ordered))) - 1)]
    print(
        f"{label}: {len(ordered)}, p50 {statistics.median(ordered):.0f} ms, p95 {p95:.0f} ms, max {ordered[-1]:.0f} ms"
    )


def report_steps(phase: str, timings: list[dict[str, float]]) -> None:
    """Median milliseconds of each engine step: where a search's time goes."""
    names = dict.fromkeys(name for t in timings for name in t)
    medians = {name: statistics.median(t.get(name, 0.0) for t in timings) for name in names}
    print("    engine steps (median ms): " + ", ".join(f"{k} {v:.0f}" for k, v in medians.items()))


class Profiling:
    """--profile: cProfile around every search, and the UI thread's stack sampled every
    2 ms; a stack seen in 10+ consecutive samples (a block of 20 ms or more) is written."""

    def __init__(self, window, folder: Path) -> None:
        import cProfile
        import threading

        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)
        self.profile = cProfile.Profile()
        self.main = threading.main_thread().ident
        self.blocks: list[tuple[int, str]] = []
        self.stalls: list[tuple[float, str]] = []  # (ms the sampler woke late, what the other threads were doing)
        self.running = True
        service = window.search_service
        run = service._run

        def profiled(request):
            self.profile.enable()
            try:
                run(request)
            finally:
                self.profile.disable()

        service._run = profiled
        self.sampler = threading.Thread(target=self._sample, daemon=True)
        self.sampler.start()

    def _sample(self) -> None:
        import traceback

        last, count = "", 0
        while self.running:
            before = time.perf_counter()
            time.sleep(0.002)
            late = (time.perf_counter() - before) * 1000 - 2
            frames = sys._current_frames()
            if late >= 15:  # this thread could not run either: the GIL was held, or no CPU was free
                self.stalls.append((late, self._others(frames)))
            frame = frames.get(self.main)
            lines = traceback.format_stack(frame, limit=25) if frame else []
            # Waiting in app.exec() (no Python frame above it) is the loop idling.
            stack = "" if not lines or "app.exec()" in lines[-1] else "".join(lines)
            if stack == last:
                count += 1
            else:
                if count >= 10 and last:
                    self.blocks.append((count * 2, last))
                last, count = stack, 1

    def _others(self, frames) -> str:
        import threading
        import traceback

        names = {t.ident: t.name for t in threading.enumerate()}
        out = []
        for ident, frame in frames.items():
            if ident == threading.get_ident():
                continue
            top = traceback.format_stack(frame, limit=6)
            out.append(f"  [{names.get(ident, ident)}]\n" + "".join(top[-4:]))
        return "".join(out)

    def stop(self) -> None:
        self.running = False
        self.sampler.join()
        self.profile.dump_stats(str(self.folder / "search.prof"))
        self.blocks.sort(key=lambda b: -b[0])
        with open(self.folder / "ui_blocks.txt", "w", encoding="utf-8") as out:
            for ms, stack in self.blocks[:40]:
                out.write(f"==== ~{ms} ms\n{stack}\n")
        self.stalls.sort(key=lambda b: -b[0])
        with open(self.folder / "stalls.txt", "w", encoding="utf-8") as out:
            for ms, stacks in self.stalls[:40]:
                out.write(f"==== sampler woke {ms:.0f} ms late; other threads:\n{stacks}\n")
        print(
            f"profile: {self.folder / 'search.prof'}, {len(self.blocks)} UI stacks held 20 ms+ (ui_blocks.txt),"
            f" {len(self.stalls)} stalls of 15 ms+ (stalls.txt)"
        )


def wait_until(app, condition, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while not condition() and time.monotonic() < deadline:
        app.processEvents()
        time.sleep(0.01)


if __name__ == "__main__":
    sys.exit(main())
