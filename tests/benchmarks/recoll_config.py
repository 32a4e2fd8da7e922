"""A recoll configuration over exactly the files a Kenning store indexes (issue #27).

`bench_commands.py STORE --recoll CONFDIR` times `recollq -c CONFDIR` beside Kenning's
commands; for that comparison to mean anything recoll must search the same text.  This
script makes CONFDIR so that it does:

    python tests/benchmarks/recoll_config.py STORE CONFDIR    # e.g. /work/stores/scale/100k/bench.db

- recoll.conf: the store's folder and git sources as `topdirs` (recoll accepts a file to
  index only under them), English stemming as recoll's default, the index in CONFDIR;
- mimemap: every extension among the store's documents as text/plain, so recoll reads
  each file as text, as Kenning does (its defaults would send .py through a highlighter
  that writes HTML, and skip .pyi and .toml);
- the index: `recollindex -c CONFDIR -i -f` fed the store's files on stdin (only those,
  whatever else lies under the roots and whatever recoll's skippedNames would drop),
  then `recollindex -c CONFDIR -s english` for the stem expansion that `recollq` applies.

It reads the store as an immutable file (SQLite writes nothing beside it, not even a
-shm file, so a shared read-only store stays as it is; let nothing index into it meanwhile) and prints how many files recoll holds against the store's document count.
Do not run a plain `recollindex -c CONFDIR` afterwards: that would index everything
under the roots, not just the store's files.  The 100k store's 9,430 files took 71 s
(34 s CPU) here, for a 228 MB index.
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

# recollindex -i's own name for a configuration's index folder, read by recollq too.
INDEX_FOLDER = "xapiandb"


def store_files(store: Path) -> list[Path]:
    """The absolute paths of the store's documents that are files on disk, sorted."""
    conn = sqlite3.connect(f"file:{store}?mode=ro&immutable=1", uri=True)
    try:
        rows = conn.execute(
            "SELECT s.root, d.rel_path FROM documents d JOIN sources s ON s.id = d.source_id"
        ).fetchall()
    finally:
        conn.close()
    return sorted(path for path in (Path(root) / rel for root, rel in rows) if path.is_file())


def source_roots(store: Path) -> list[str]:
    conn = sqlite3.connect(f"file:{store}?mode=ro&immutable=1", uri=True)
    try:
        return sorted(root for (root,) in conn.execute("SELECT root FROM sources"))
    finally:
        conn.close()


def write_config(confdir: Path, roots: list[str], files: list[Path]) -> None:
    confdir.mkdir(parents=True, exist_ok=True)
    topdirs = " ".join(_quoted(root) for root in roots)
    (confdir / "recoll.conf").write_text(
        "# Made by Kenning's tests/benchmarks/recoll_config.py: the files of one store, as text.\n"
        f"topdirs = {topdirs}\n"
        f"dbdir = {INDEX_FOLDER}\n"
        "indexstemminglanguages = english\n"
        "loglevel = 2\n",
        encoding="utf-8",
    )
    suffixes = sorted({path.suffix.lower() for path in files if path.suffix})
    (confdir / "mimemap").write_text(
        "".join(f"{suffix} = text/plain\n" for suffix in suffixes),
        encoding="utf-8",
    )


def _quoted(path: str) -> str:
    return f'"{path}"' if " " in path else path


def index(confdir: Path, files: list[Path]) -> None:
    paths = "".join(f"{path}\n" for path in files)
    subprocess.run(["recollindex", "-c", str(confdir), "-i", "-f"], input=paths, text=True, check=True)
    subprocess.run(["recollindex", "-c", str(confdir), "-s", "english"], check=True)


def indexed_count(confdir: Path, files: list[Path]) -> int:
    """How many of files recoll holds (recollindex --notindexed prints "ABSENT path" for the others)."""
    done = subprocess.run(
        ["recollindex", "-c", str(confdir), "--notindexed"],
        input="".join(f"{path}\n" for path in files),
        text=True,
        capture_output=True,
        check=True,
    )
    return len(files) - sum(line.startswith("ABSENT") for line in done.stdout.splitlines())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("store", type=Path, help="the store's database file (bench.db)")
    parser.add_argument("confdir", type=Path, help="the recoll configuration folder to make")
    args = parser.parse_args()
    store = args.store.resolve()
    confdir = args.confdir.resolve()
    if (confdir / INDEX_FOLDER).exists():
        raise SystemExit(f"{confdir} already holds an index: make a new folder")
    files = store_files(store)
    write_config(confdir, source_roots(store), files)
    index(confdir, files)
    print(f"recoll holds {indexed_count(confdir, files):,} of the store's {len(files):,} files in {confdir}")
    return 0


if __name__ == "__main__":
    os.environ.pop("RECOLL_CONFDIR", None)  # -c names the configuration; nothing else may
    sys.exit(main())
