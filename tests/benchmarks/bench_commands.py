"""Whole `kenning` processes on a store, as a shell runs them (issue #15, instant commands).

Prints the median, fastest and slowest wall time of each command over --runs runs,
with the load average around them:

- `search --mode lexical QUERY` and `status`: read the store only (an up-to-date store
  is opened without writing; a store this script cannot show to be up to date is
  refused, since opening it could convert it);
- with --hybrid, `search QUERY` twice more: the first run may load the model (and
  writes the query's vector to the store), the runs after it read the vector and load
  no model.

Kenning's modules are compiled once into a bytecode cache in a temporary folder, as an
installed Kenning has them (pip compiles wheels on install); --no-bytecode runs a copy
of the sources with PYTHONDONTWRITEBYTECODE instead, so every run compiles every
Kenning module it imports (~70 ms of a search here).

    python tests/benchmarks/bench_commands.py STORE [--runs 7] [--query WORDS] [--hybrid] [--no-bytecode]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from kenning.storage.migrations import MIGRATIONS, applied_in_file


def _up_to_date(store: str) -> bool:
    """True only when the store's migrations could be read and are all applied."""
    applied = applied_in_file(Path(store))
    return applied is not None and all(migration.__name__ in applied for migration in MIGRATIONS)


def _environment(bytecode: bool, scratch: Path) -> dict[str, str]:
    env = dict(os.environ)
    app = Path(__file__).resolve().parents[2] / "app"
    if bytecode:
        env["PYTHONPYCACHEPREFIX"] = str(scratch / "pyc")  # starts empty; __pycache__ beside the sources is ignored
        env.pop("PYTHONDONTWRITEBYTECODE", None)
    else:
        # Kenning's sources without any bytecode (the standard library and the other
        # packages keep theirs, as in a development checkout run with PYTHONDONTWRITEBYTECODE).
        app = Path(shutil.copytree(app, scratch / "app", ignore=shutil.ignore_patterns("__pycache__")))
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        env.pop("PYTHONPYCACHEPREFIX", None)
    env["PYTHONPATH"] = os.pathsep.join([str(app), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    return env


def _kenning() -> list[str]:
    script = shutil.which("kenning", path=str(Path(sys.executable).parent))
    return [script] if script else [sys.executable, "-m", "kenning.launcher"]


def _times(argv: list[str], env: dict[str, str], runs: int) -> list[float]:
    seconds = []
    for _ in range(runs):
        started = time.perf_counter()
        done = subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        seconds.append(time.perf_counter() - started)
        if done.returncode != 0:
            raise SystemExit(f"{' '.join(argv[-3:])} failed: {done.stderr.strip()}")
    return seconds


def _row(name: str, seconds: list[float]) -> str:
    ms = sorted(s * 1000 for s in seconds)
    return f"{name:<34} median {statistics.median(ms):6.0f} ms   fastest {ms[0]:6.0f}   slowest {ms[-1]:6.0f}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("store")
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--query", default="socket server timeout")
    parser.add_argument("--hybrid", action="store_true", help="also time hybrid search (writes the query's vector)")
    parser.add_argument("--no-bytecode", action="store_true", help="compile every module on every run")
    args = parser.parse_args()
    if not _up_to_date(args.store):
        raise SystemExit(f"{args.store} is not known to be up to date: opening it could convert it (use a copy)")
    with tempfile.TemporaryDirectory(prefix="kenning-bench-") as scratch:
        env = _environment(not args.no_bytecode, Path(scratch))
        base = [*_kenning(), "--store", args.store]
        _times([*base, "--version"], env, 1)  # fills the bytecode cache
        _times([*base, "status"], env, 1)  # and the page cache: every row below is a warm start
        print(f"load average before: {os.getloadavg()[0]:.2f}; bytecode: {'no' if args.no_bytecode else 'yes'}")
        print(_row("search --mode lexical", _times([*base, "search", "--mode", "lexical", args.query], env, args.runs)))
        print(_row("status", _times([*base, "status"], env, args.runs)))
        if args.hybrid:
            first = _times([*base, "search", args.query], env, 1)
            print(_row("search (hybrid), first run", first))
            print(_row("search (hybrid), vector remembered", _times([*base, "search", args.query], env, args.runs)))
        print(f"load average after: {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
