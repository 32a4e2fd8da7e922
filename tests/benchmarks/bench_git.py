"""Time kenning.gitinfo on a real or generated repository.

    python tests/benchmarks/bench_git.py [REPO] [--files N] [--commits N] [--keep]

With no REPO, builds a repository of --files files (default 10 000) and --commits
commits (default 5 000) spread over two years, through `git fast-import`, in a temp dir.
Prints wall time and result sizes for list_files, path_commit_times and recent_paths.
"""

from __future__ import annotations

import argparse
import random
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

try:
    import kenning.gitinfo as gitinfo
except ImportError:  # run from a checkout without `pip install -e .`
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "app"))
    import kenning.gitinfo as gitinfo

DAY = 86400


def main(argv: list[str] | None = None) -> int:
    args = _parse_args(argv)
    tmp = None
    repo = args.repo
    if repo is None:
        tmp = Path(tempfile.mkdtemp(prefix="kenning-bench-git-"))
        repo = str(tmp / "repo")
        started = time.perf_counter()
        generate_repo(Path(repo), args.files, args.commits, seed=args.seed)
        print(
            f"generated {args.files} files / {args.commits} commits in {time.perf_counter() - started:.2f}s at {repo}"
        )
    try:
        run_benchmarks(repo)
    finally:
        if tmp is not None and not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)
    return 0


def _parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("repo", nargs="?", help="an existing repository (default: generate one)")
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--commits", type=int, default=5_000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--keep", action="store_true", help="keep the generated repository")
    return parser.parse_args(argv)


def run_benchmarks(repo: str) -> None:
    info = _timed("inspect_repo", lambda: gitinfo.inspect_repo(repo))
    print(f"  root={info.root} branch={info.branch} head={info.head_sha}")
    files = _timed("list_files", lambda: gitinfo.list_files(repo))
    print(f"  {len(files)} files")
    times = _timed("path_commit_times", lambda: gitinfo.path_commit_times(repo))
    print(f"  {len(times)} paths in history")
    # Anchor "now" at HEAD's time so an old repository still has a recent window.
    now = info.last_commit_time or time.time()
    recent = _timed("recent_paths(30d)", lambda: gitinfo.recent_paths(repo, 30, now=now))
    print(f"  {len(recent)} paths changed in the 30 days before HEAD")


def _timed(label: str, fn: Callable[[], Any]) -> Any:
    started = time.perf_counter()
    result = fn()
    print(f"{label:<20} {time.perf_counter() - started:8.3f}s")
    return result


# ---------------------------------------------------------------- generation


def generate_repo(repo: Path, n_files: int, n_commits: int, seed: int = 7) -> None:
    """A repository with realistic churn, written in one fast-import stream."""
    repo.mkdir(parents=True)
    _git(repo, "init", "-q", "-b", "main")
    stream = _fast_import_stream(n_files, n_commits, random.Random(seed))
    subprocess.run(["git", "fast-import", "--quiet"], cwd=repo, input=stream, check=True)
    # fast-import writes objects and refs only; populate the index and work tree.
    _git(repo, "reset", "-q", "--hard", "main")


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, check=True)


def _fast_import_stream(n_files: int, n_commits: int, rng: random.Random) -> bytes:
    paths = [f"d{i % 100:02d}/sub{i % 7}/file{i:05d}.md" for i in range(n_files)]
    start = int(time.time()) - 730 * DAY
    step = (730 * DAY) // max(n_commits, 1)
    out: list[bytes] = []
    live = list(paths)
    for n in range(n_commits):
        changes = _initial(paths) if n == 0 else _churn(live, rng, n)
        out.append(_commit_block(n, start + n * step, changes))
    return b"".join(out)


def _initial(paths: list[str]) -> list[tuple[str, str | None]]:
    return [(p, f"# {p}\n\ninitial text\n") for p in paths]


def _churn(live: list[str], rng: random.Random, n: int) -> list[tuple[str, str | None]]:
    """Edit a few files; now and then add one or delete one, like real history."""
    changes: list[tuple[str, str | None]] = [
        (p, f"# {p}\n\nrevision {n}\n") for p in rng.sample(live, k=min(3, len(live)))
    ]
    if n % 10 == 0:
        new = f"added/c{n:05d}.md"
        live.append(new)
        changes.append((new, f"added in {n}\n"))
    if n % 25 == 0 and len(live) > 10:
        changes.append((live.pop(rng.randrange(len(live))), None))
    return changes


def _commit_block(n: int, when: int, changes: list[tuple[str, str | None]]) -> bytes:
    msg = f"commit {n}\n".encode()
    lines = [
        b"commit refs/heads/main\n",
        f"committer Bench <bench@kenning.invalid> {when} +0000\n".encode(),
        b"data %d\n" % len(msg),
        msg,
    ]
    # Later commits need no "from": fast-import continues the branch it is building.
    for path, text in changes:
        if text is None:
            lines.append(f"D {path}\n".encode())
            continue
        body = text.encode()
        lines += [f"M 100644 inline {path}\n".encode(), b"data %d\n" % len(body), body]
    lines.append(b"\n")
    return b"".join(lines)


if __name__ == "__main__":
    sys.exit(main())
