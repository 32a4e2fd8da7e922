"""Memory of the app alone, and of the app + its service + one MCP bridge (issue #27).

Runs the real window offscreen on STORE, types a query into it and waits for the
answer (its model loaded, its vector scan made), then:

- alone: the resident memory (VmRSS) of the app's process and of its child processes
  (the watcher; an indexer if one runs);
- with --service: the app also serves (gui.service_host, as `kenning` starts it), a
  `kenning search` of a new query goes through it, and an MCP client asks one search
  through `kenning mcp` (the bridge); the figure adds the bridge's memory, and takes the
  app's as it was while that session was open or after it, whichever is larger.

Resident sizes are summed, so pages the processes share are counted more than once
(the total is an upper bound).  Each configuration runs in its own process:

    QT_QPA_PLATFORM=offscreen python tests/benchmarks/bench_service_memory.py STORE [--service]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

MCP_CLIENT = """
import anyio, json, sys, time
from pathlib import Path
from mcp import ClientSession, StdioServerParameters, stdio_client

def bridge_rss(me):
    total = 0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            if int(fields[1]) != me:
                continue
            for line in (entry / "status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1]) / 1024
        except OSError:
            pass
    return total

async def main():
    params = StdioServerParameters(command=sys.executable, args=["-m", "kenning.launcher", "--store", sys.argv[1], "mcp"], env=dict(__import__("os").environ))
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        result = await session.call_tool("search", {"query": sys.argv[2], "explain": True})
        answer = json.loads("".join(b.text for b in result.content))
        app = [l for l in Path(f"/proc/{sys.argv[3]}/status").read_text().splitlines() if l.startswith("VmRSS:")]
        print(json.dumps({"mode": answer.get("mode"), "bridge_mib": bridge_rss(__import__("os").getpid()),
                          "app_during_mcp_session_mib": int(app[0].split()[1]) / 1024}))

anyio.run(main)
"""


def rss_mib(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                found.append(int(entry.name))
    return found


def _seeded_queries(store: str, count: int, seed: int) -> list[str]:
    """Three-word queries of the store's own words, the same for the same seed and store."""
    import random

    from bench_search import make_queries

    from kenning.storage.connection import Store

    conn = Store(store)
    try:
        pool = make_queries(conn, 400, seed=seed)
    finally:
        conn.close()
    rng = random.Random(seed)
    words = [w for q in pool for w in q.split() if w.isalpha()]
    return [f"{rng.choice(words)} {rng.choice(words)} {rng.choice(words)}" for _ in range(count)]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("store")
    parser.add_argument("--service", action="store_true")
    parser.add_argument("--query", help="the window's query (default: one this store has not seen)")
    parser.add_argument(
        "--seed",
        type=int,
        help="draw the three queries from this seed (paired runs: the same queries, each side on its own copy)",
    )
    args = parser.parse_args()
    store = Path(args.store).resolve()
    # Queries the store has never seen: a remembered query vector would spare the model's
    # load, and the app's memory would be measured without the model in it.
    if args.seed is None:
        from bench_commands import _new_queries

        window_query, cli_query, mcp_query = _new_queries(str(store), 3)
    else:
        window_query, cli_query, mcp_query = _seeded_queries(str(store), 3, args.seed)
    window_query = args.query or window_query
    runtime = tempfile.mkdtemp(prefix="kr-")
    os.environ["XDG_RUNTIME_DIR"] = runtime

    from PySide6.QtTest import QTest
    from PySide6.QtWidgets import QApplication

    from kenning.gui.app import make_app
    from kenning.gui.main_window import MainWindow

    app = make_app([sys.argv[0]])
    window = MainWindow(store, auto_index=False)
    host = None
    if args.service:
        from kenning.gui.service_host import ServiceHost
        from kenning.launcher import service_handlers

        if hasattr(ServiceHost, "for_window"):  # the window lends its Searcher (#27)
            host = ServiceHost.for_window(window, service_handlers).start()
        else:  # an older tree, for paired runs against it
            host = ServiceHost(store, window.holder.get, service_handlers).start()
    window.show()
    answers: list[object] = []
    window.search_service.results.connect(lambda _rid, result: answers.append(result))
    deadline = time.monotonic() + 120
    while window.holder._embedder is None and time.monotonic() < deadline:  # the model, loaded by the window
        QApplication.processEvents()
        time.sleep(0.02)
    window.search_bar.focus()
    QTest.keyClicks(window.search_bar.field, window_query)
    while not any(getattr(r, "hits", None) for r in answers) and time.monotonic() < deadline:
        QApplication.processEvents()
        time.sleep(0.02)
    extra: dict[str, object] = {
        "app_after_window_search_mib": rss_mib(os.getpid()),
        "model_loaded_by_window": getattr(window.holder._embedder, "_model", None) is not None,
    }
    if host is not None:
        env = dict(os.environ)
        started = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "kenning.launcher", "--store", str(store), "search", cli_query],
            env=env,
            capture_output=True,
            check=True,
            timeout=120,
        )
        extra["cli_ms"] = (time.perf_counter() - started) * 1000
        extra["app_after_cli_search_mib"] = rss_mib(os.getpid())
        done = subprocess.run(
            [sys.executable, "-c", MCP_CLIENT, str(store), mcp_query, str(os.getpid())],
            env=env,
            capture_output=True,
            text=True,
            timeout=180,
        )
        extra.update(
            json.loads(done.stdout.strip().splitlines()[-1]) if done.returncode == 0 else {"error": done.stderr[-400:]}
        )
        QApplication.processEvents()
    me = os.getpid()
    app_mib = rss_mib(me)
    kids = {pid: rss_mib(pid) for pid in children(me)}
    # the app as it was with the session open, or after it (whichever was larger)
    app_mib = max(app_mib, float(extra.get("app_during_mcp_session_mib", 0.0)))
    total = app_mib + sum(kids.values()) + float(extra.get("bridge_mib", 0.0))
    print(
        json.dumps(
            {
                "configuration": "app + service + one MCP bridge" if args.service else "app alone",
                "app_process_mib": round(app_mib),
                "child_processes_mib": {str(k): round(v) for k, v in kids.items()},
                "total_mib": round(total),
                "window_answered": any(getattr(r, "hits", None) for r in answers),
                **{k: (round(v) if isinstance(v, float) else v) for k, v in extra.items()},
            }
        )
    )
    if host is not None:
        host.stop()
    window.shutdown()
    app.quit()
    return 0


if __name__ == "__main__":
    sys.exit(main())
