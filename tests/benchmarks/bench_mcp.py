"""How long an assistant waits on `kenning mcp`: start-up, and search/read round trips over stdio.

Run: PYTHONPATH=app python tests/benchmarks/bench_mcp.py
Prints figures; asserts nothing. Uses the fake embedder (KENNING_MODEL=fake), so the
times are the server's and the protocol's, not the model's.
"""

from __future__ import annotations

import os
import statistics
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

import anyio
from mcp import ClientSession, StdioServerParameters, stdio_client

QUERIES = ["header parser", "encode base64 payload", "multipart boundary", "address list", "charset error"]
# Real text that every Python has: the standard library's email and json packages.
CORPUS = ("email", "json", "http")


async def _measure(params: StdioServerParameters, notes: Path) -> dict[str, float]:
    started = time.perf_counter()
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        ready = time.perf_counter() - started
        searches = []
        for _ in range(4):
            for query in QUERIES:
                t = time.perf_counter()
                await session.call_tool("search", {"query": query, "limit": 10, "mode": "lexical"})
                searches.append(time.perf_counter() - t)
        some_file = notes / "email" / "message.py"
        reads = []
        for _ in range(10):
            t = time.perf_counter()
            await session.call_tool("read", {"path": str(some_file)})
            reads.append(time.perf_counter() - t)
    return {
        "start to initialized (s)": ready,
        "first search (ms)": searches[0] * 1000,
        "search median (ms)": statistics.median(searches[1:]) * 1000,
        "read median (ms)": statistics.median(reads) * 1000,
    }


def main() -> None:
    app = str(Path(__file__).resolve().parents[2] / "app")
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"
        env = {**os.environ, "KENNING_HOME": str(home), "KENNING_MODEL": "fake", "PYTHONPATH": app}
        os.environ.update(env)
        from kenning.cli.main import main as cli

        notes = Path(sysconfig.get_paths()["stdlib"])
        for package in CORPUS:
            cli(["sources", "add", str(notes / package)])
        cli(["index"])
        params = StdioServerParameters(command=sys.executable, args=["-m", "kenning.launcher", "mcp"], env=env)
        figures = anyio.run(_measure, params, notes)
    print(f"kenning mcp over stdio, standard library packages {', '.join(CORPUS)}:")
    for name, value in figures.items():
        print(f"  {name:<26} {value:8.2f}")


if __name__ == "__main__":
    main()
