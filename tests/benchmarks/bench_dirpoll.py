"""The watch-limit fallback's cost per period: ingest.dirpoll against watchdog's PollingObserver
(which snapshots and diffs the whole tree every period).

    .venv/bin/python tests/benchmarks/bench_dirpoll.py [--dirs 400] [--files-per-dir 100]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--dirs", type=int, default=400)
    parser.add_argument("--files-per-dir", type=int, default=100)
    parser.add_argument("--periods", type=int, default=12)
    args = parser.parse_args()

    from watchdog.events import FileSystemEventHandler
    from watchdog.utils.dirsnapshot import DirectorySnapshot, DirectorySnapshotDiff

    from kenning.ingest.changes import worth_a_look
    from kenning.ingest.dirpoll import DirectoryPoller

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "tree"
        for i in range(args.dirs):
            folder = root / f"d{i:04d}" / "sub"
            folder.mkdir(parents=True)
            for j in range(args.files_per_dir):
                (folder / f"n{j}.md").write_text(f"note {i} {j}\n")
        files = args.dirs * args.files_per_dir
        time.sleep(2.1)  # past the poller's settle time: directories count as unchanged
        poller = DirectoryPoller(60, dir_filter=worth_a_look)
        started = time.perf_counter()
        poller.schedule(FileSystemEventHandler(), str(root))
        print(f"{files:,} files in {poller.directories:,} directories; first walk {_ms(started):.0f} ms")
        polls, stats = [], []
        for period in range(args.periods):
            (root / f"d{period:04d}" / "sub" / "n0.md").write_text(f"edited in place {period}\n")
            before, started = poller.stats, time.perf_counter()
            poller.poll()
            polls.append(_ms(started))
            stats.append(poller.stats - before)
        print(
            f"dirpoll: median {statistics.median(polls):.0f} ms, max {max(polls):.0f} ms a period,"
            f" {statistics.median(stats):,.0f} stat calls (directories every period, files a share at a time)"
        )
        snapshots = []
        previous = DirectorySnapshot(str(root))
        for _ in range(3):
            started = time.perf_counter()
            current = DirectorySnapshot(str(root))
            DirectorySnapshotDiff(previous, current)
            snapshots.append(_ms(started))
            previous = current
        print(f"watchdog PollingObserver (snapshot + diff): median {statistics.median(snapshots):.0f} ms a period")
    return 0


def _ms(started: float) -> float:
    return (time.perf_counter() - started) * 1000


if __name__ == "__main__":
    raise SystemExit(main())
