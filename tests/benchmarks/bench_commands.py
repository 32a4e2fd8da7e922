"""Whole `kenning` processes on a store, as a shell runs them (issues #15 and #27).

Every command is timed in rounds: each round runs a bare interpreter
(`python -c 'import sqlite3, json, argparse'`) and then each command once, so every
command gets a ratio to the interpreter of its own round (the machine's load changes
between rounds, far less within one).  Printed per command: the median wall time and
the median of its ratios, with and without a running service:

- without a service (`--no-service`): `search --mode lexical QUERY`, `status`, and with
  --hybrid a search of a query never seen before (each round a new one: the store
  remembers query vectors), one whose vector is remembered, and the floor under a new
  query: a bare interpreter loading the default model and embedding one query;
- with --service, a `kenning serve` started on the store (no watcher): the same
  commands through it, and with --mcp the first answer of an MCP session through
  `kenning mcp` (the bridge): its time from the process start, and whether it is hybrid;
  then the resident memory of the service and of one bridge;
- with --recoll CONFDIR (and recollq installed), `recollq` on the same query; make
  CONFDIR over the same files as the store with `recoll_config.py STORE CONFDIR`;
- with --before DIR (a checkout of older code, e.g. `git worktree add DIR main`), the
  same commands of that code in the same rounds, for a before/after of paired runs.

Commands that read the store only are compared on a store this script can show to be
up to date (opening an older one could convert it).  Kenning's modules are compiled
once into a bytecode cache in a temporary folder, as an installed Kenning has them;
--no-bytecode runs a copy of the sources with PYTHONDONTWRITEBYTECODE instead.

    python tests/benchmarks/bench_commands.py STORE [--runs 7] [--query WORDS] [--hybrid]
        [--service] [--mcp] [--recoll CONFDIR] [--before DIR] [--no-bytecode]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from kenning.storage.migrations import MIGRATIONS, applied_in_file

BARE = [sys.executable, "-c", "import sqlite3, json, argparse"]
# What any process embedding a new query with the default model pays, with no Kenning
# around it: numpy, onnxruntime and tokenizers imported, the ONNX session created, the
# query embedded (embedding.bundled_runner imports nothing else) -- the floor under
# "a new hybrid query" without a service.
MODEL_FLOOR = (
    "import sys, tempfile; from pathlib import Path\n"
    "from kenning.embedding.models import bundled_files, prepare_bundled_model_dir\n"
    "from kenning.embedding.bundled_runner import BundledRunner\n"
    "folder = prepare_bundled_model_dir(bundled_files(), Path(tempfile.gettempdir()) / 'kenning-bench-floor')\n"
    "next(BundledRunner(folder, threads=1, few_runs=True).query_embed([sys.argv[1]]))  # as the CLI: Workspace.query_embedder\n"
)


def _up_to_date(store: str) -> bool:
    """True only when the store's migrations could be read and are all applied."""
    applied = applied_in_file(Path(store))
    return applied is not None and all(migration.__name__ in applied for migration in MIGRATIONS)


def _environment(bytecode: bool, scratch: Path, app: Path | None = None) -> dict[str, str]:
    env = dict(os.environ)
    app = app or Path(__file__).resolve().parents[2] / "app"
    if bytecode:
        env["PYTHONPYCACHEPREFIX"] = str(scratch / "pyc")  # starts empty; __pycache__ beside the sources is ignored
        env.pop("PYTHONDONTWRITEBYTECODE", None)
    else:
        # Kenning's sources without any bytecode (the standard library and the other
        # packages keep theirs, as in a development checkout run with PYTHONDONTWRITEBYTECODE).
        app = Path(
            shutil.copytree(app, scratch / f"app-{abs(hash(str(app)))}", ignore=shutil.ignore_patterns("__pycache__"))
        )
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        env.pop("PYTHONPYCACHEPREFIX", None)
    env["PYTHONPATH"] = os.pathsep.join([str(app), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    # A runtime folder of this run's own: a service is found only when this script starts one.
    runtime = scratch / "run"
    runtime.mkdir(mode=0o700, parents=True, exist_ok=True)
    env["XDG_RUNTIME_DIR"] = str(runtime)
    return env


def _kenning() -> list[str]:
    script = shutil.which("kenning", path=str(Path(sys.executable).parent))
    return [script] if script else [sys.executable, "-m", "kenning.launcher"]


def _run_once(argv: list[str], env: dict[str, str]) -> float:
    started = time.perf_counter()
    done = subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv[-4:])} failed: {done.stderr.strip()}")
    return seconds


class Rounds:
    """Times named commands in rounds, each round beside a bare interpreter."""

    def __init__(self, env: dict[str, str], envs: dict[str, dict[str, str]] | None = None) -> None:
        self.env = env
        self.envs = envs or {}  # a command's own environment (another checkout's code)
        self.times: dict[str, list[float]] = {}
        self.ratios: dict[str, list[float]] = {}

    def run(self, commands: dict[str, object], runs: int) -> None:
        for _ in range(runs):
            bare = _run_once(BARE, self.env)
            self.times.setdefault("bare interpreter", []).append(bare)
            for name, argv in commands.items():
                env = self.envs.get(name, self.env)
                seconds = _run_once(argv() if callable(argv) else argv, env)  # type: ignore[arg-type]
                self.times.setdefault(name, []).append(seconds)
                self.ratios.setdefault(name, []).append(seconds / bare)

    def print(self, names: list[str]) -> None:
        for name in ["bare interpreter", *names]:
            ms = sorted(s * 1000 for s in self.times[name])
            ratio = f"   {statistics.median(self.ratios[name]):5.2f}x bare" if name in self.ratios else ""
            print(f"  {name:<44} median {statistics.median(ms):6.0f} ms  ({ms[0]:.0f}-{ms[-1]:.0f}){ratio}")


def _new_queries(store: str, count: int) -> list[str]:
    """Queries this store has not seen: word pairs of its own text, seeded by the clock."""
    from bench_search import make_queries

    from kenning.storage.connection import Store

    conn = Store(store)
    try:
        pool = make_queries(conn, 400, seed=time.time_ns() % 1_000_003)
    finally:
        conn.close()
    rng = random.Random(time.time_ns())
    words = [w for q in pool for w in q.split() if w.isalpha()]
    return [f"{rng.choice(words)} {rng.choice(words)} {rng.choice(words)}" for _ in range(count)]


def _start_service(base: list[str], env: dict[str, str], store: str) -> subprocess.Popen:
    from kenning.serve import client

    proc = subprocess.Popen([*base, "serve", "--no-watch", "--idle", "0"], env=env, stderr=subprocess.PIPE)
    saved = os.environ.get("XDG_RUNTIME_DIR")
    os.environ["XDG_RUNTIME_DIR"] = env["XDG_RUNTIME_DIR"]
    try:
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                raise SystemExit(f"the service exited: {proc.stderr.read().decode() if proc.stderr else ''}")
            answer = client.ask(store, {"op": "ping"})
            if answer and answer.get("ok") and answer.get("model_state") != "loading" and answer.get("mcp_ready", True):
                return proc  # its model loaded and its MCP sessions prepared: nothing of its start-up left
            time.sleep(0.1)
    finally:
        if saved is None:
            os.environ.pop("XDG_RUNTIME_DIR", None)
        else:
            os.environ["XDG_RUNTIME_DIR"] = saved
    raise SystemExit("the service did not become ready")


def _rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _first_mcp_answer(base: list[str], env: dict[str, str], query: str) -> tuple[float, dict, float]:
    """(seconds from starting `kenning mcp` to its first search answer, the answer, the bridge's RSS)."""
    import anyio
    from mcp import ClientSession, StdioServerParameters, stdio_client

    command, *args = base
    params = StdioServerParameters(command=command, args=[*args, "mcp"], env=env)

    async def session() -> tuple[float, dict, float]:
        started = time.perf_counter()
        async with stdio_client(params) as (read, write), ClientSession(read, write) as client_session:
            await client_session.initialize()
            result = await client_session.call_tool("search", {"query": query, "limit": 10, "explain": True})
            seconds = time.perf_counter() - started
            answer = json.loads("".join(block.text for block in result.content))
            bridge = _bridge_pid(command)
            return seconds, answer, _rss_mib(bridge) if bridge else float("nan")

    return anyio.run(session)


def _bridge_pid(command: str) -> int | None:
    """The newest process of ours running `... mcp` (the bridge)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                cmdline = (entry / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if b"mcp" in cmdline and any(command.encode() in part for part in cmdline):
                found.append(int(entry.name))
    return max(found) if found else None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("store")
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--query", default="socket server timeout")
    parser.add_argument("--hybrid", action="store_true", help="also time hybrid search (writes query vectors)")
    parser.add_argument("--service", action="store_true", help="also time the commands through `kenning serve`")
    parser.add_argument("--mcp", action="store_true", help="with --service: the first MCP answer through the bridge")
    parser.add_argument("--recoll", metavar="CONFDIR", help="also time recollq with this configuration folder")
    parser.add_argument("--before", metavar="DIR", help="also time the code of this checkout, in the same rounds")
    parser.add_argument("--no-bytecode", action="store_true", help="compile every module on every run")
    args = parser.parse_args()
    store = os.path.abspath(args.store)
    if not _up_to_date(store):
        raise SystemExit(f"{store} is not known to be up to date: opening it could convert it (use a copy)")
    queries = iter(_new_queries(store, 4 * args.runs + 8)) if args.hybrid else iter(())
    with tempfile.TemporaryDirectory(prefix="kenning-bench-") as scratch:
        env = _environment(not args.no_bytecode, Path(scratch))
        # Beside older code (run as `python -m kenning.launcher`), this code runs the same way.
        launcher = [sys.executable, "-m", "kenning.launcher"] if args.before else _kenning()
        base = [*launcher, "--store", store]
        _run_once([*base, "--version"], env)  # fills the bytecode cache
        _run_once([*base, "status"], env)  # and the page cache: every row below is a warm start
        print(f"load average before: {os.getloadavg()[0]:.2f}; bytecode: {'no' if args.no_bytecode else 'yes'}")

        envs: dict[str, dict[str, str]] = {}
        commands: dict[str, object] = {}
        if args.before:
            old_env = _environment(not args.no_bytecode, Path(scratch) / "before", Path(args.before) / "app")
            old = [sys.executable, "-m", "kenning.launcher", "--store", store]
            _run_once([*old, "status"], old_env)
            before_rows = {
                "before: search --mode lexical": [*old, "search", "--mode", "lexical", args.query],
                "before: status": [*old, "status"],
            }
            if args.hybrid:
                before_rows["before: search (hybrid), a new query"] = lambda: [*old, "search", next(queries)]
            commands.update(before_rows)
            envs.update(dict.fromkeys(before_rows, old_env))
        local = Rounds(env, envs)
        commands |= {
            "search --mode lexical": [*base, "search", "--no-service", "--mode", "lexical", args.query],
            "status": [*base, "status", "--no-service"],
        }
        if args.hybrid:
            commands["search (hybrid), a new query"] = lambda: [*base, "search", "--no-service", next(queries)]
            commands["search (hybrid), vector remembered"] = [*base, "search", "--no-service", args.query]
            commands["floor: load the model, embed one query"] = [sys.executable, "-c", MODEL_FLOOR, args.query]
            _run_once([*base, "search", "--no-service", args.query], env)  # remembers it
        if args.recoll and shutil.which("recollq"):
            commands["recollq"] = ["recollq", "-c", args.recoll, "-n", "0-10", "-b", args.query]
        local.run(commands, args.runs)
        print("without a service:")
        local.print(list(commands))

        if args.service:
            service = _start_service(base, env, store)
            try:
                served = Rounds(env)
                through: dict[str, object] = {
                    "search --mode lexical": [*base, "search", "--mode", "lexical", args.query],
                    "status": [*base, "status"],
                }
                if args.hybrid:
                    through["search (hybrid), a new query"] = lambda: [*base, "search", next(queries)]
                served.run(through, args.runs)
                print("with `kenning serve` running:")
                served.print(list(through))
                if args.mcp:
                    seconds, answer, bridge_rss = _first_mcp_answer(base, env, next(queries, args.query))
                    lists = {
                        name for hit in answer.get("hits", []) for name in hit.get("breakdown", {}).get("lists", {})
                    }
                    print(
                        f"  first MCP answer of a session: {seconds * 1000:.0f} ms from `kenning mcp` starting, "
                        f"mode {answer.get('mode')}, lists {sorted(lists)}, notes {answer.get('notes')}"
                    )
                    print(f"  memory: service {_rss_mib(service.pid):.0f} MiB, one bridge {bridge_rss:.0f} MiB")
                else:
                    print(f"  memory: service {_rss_mib(service.pid):.0f} MiB")
            finally:
                service.terminate()
                service.wait(30)
        print(f"load average after: {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
