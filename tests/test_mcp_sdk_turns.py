"""The service imports the MCP SDK on several threads; those imports take turns.

`kenning serve --http` once ended at start with importlib's _DeadlockError: the main
thread built the HTTP endpoint (importing mcp.server.transport_security and more, lazily)
while the sessions' warm-up thread imported mcp.server.stdio.  Each place that imports
the SDK and builds a server holds transport._SDK_TURN while it does; and a whole service,
its warm-up and two first sessions at once, loads the SDK in that turn only."""

from __future__ import annotations

import json
import sys
import threading

import anyio
import httpx2
import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

from kenning.embedding import FakeEmbedder
from kenning.mcpserver import transport
from kenning.storage import open_store
from kenning_testing import index_folder, write_files
from serve_testing import kenning_env, ping, running_service, wait_until


class _Built(Exception):
    pass


@pytest.fixture
def build_records_the_turn(monkeypatch):
    held: list[bool] = []

    def build_server(service):
        held.append(transport._SDK_TURN.locked())
        raise _Built

    monkeypatch.setattr("kenning.mcpserver.server.build_server", build_server)
    monkeypatch.setattr(transport, "service_for", lambda *args: None)
    return held


def test_the_sessions_warm_up_builds_in_its_turn(build_records_the_turn):
    class Warm:
        mcp_ready = threading.Event()

    transport.prepare_sessions(Warm, lambda *a, **k: {})  # type: ignore[arg-type]
    assert build_records_the_turn == [True]
    assert Warm.mcp_ready.is_set() and not transport._SDK_TURN.locked()


def test_a_session_builds_in_its_turn(build_records_the_turn):
    with pytest.raises(_Built):
        transport.run_session(None, None)  # type: ignore[arg-type]
    assert build_records_the_turn == [True] and not transport._SDK_TURN.locked()


def test_the_http_endpoint_builds_in_its_turn(build_records_the_turn, monkeypatch, tmp_path):
    monkeypatch.setenv("KENNING_HOME", str(tmp_path))
    with pytest.raises(_Built):
        transport.start_http(None, transport.parse_endpoint("127.0.0.1:0"), lambda *a, **k: {})  # type: ignore[arg-type]
    assert build_records_the_turn == [True] and not transport._SDK_TURN.locked()


# A `kenning serve` whose _SDK_TURN knows which thread holds it, and whose audit hook
# notes, for every module of the SDK's packages loaded, whether that thread held it.
TURN_RECORDING_SERVICE = """
import json, sys, threading
from kenning.mcpserver import transport

class Turn:
    def __init__(self):
        self.lock, self.holder = threading.Lock(), None
    def __enter__(self):
        self.lock.acquire()
        self.holder = threading.get_ident()
    def __exit__(self, *exc):
        self.holder = None
        self.lock.release()
    def locked(self):
        return self.lock.locked()

transport._SDK_TURN = Turn()
loaded = {"in_turn": [], "outside": []}
out, packages = sys.argv.pop(1), set(sys.argv.pop(1).split(","))

def note(event, args):
    if event == "import" and args[0].split(".")[0] in packages and args[0] not in sys.modules:
        where = "in_turn" if transport._SDK_TURN.holder == threading.get_ident() else "outside"
        loaded[where].append(f"{args[0]} ({threading.current_thread().name})")

sys.addaudithook(note)
from kenning.launcher import main
try:
    code = main(sys.argv[1:])
finally:
    open(out, "w").write(json.dumps(loaded))
sys.exit(code)
"""
# The packages whose modules import one another from several entry points (the
# _DeadlockError of --http was in mcp.server.stdio; pydantic's modules are lazily
# imported by name).  uvicorn, h11 and anyio's streams load on a session's first
# request, each from one entry point, and stay out of this list.
SDK_PACKAGES = ("mcp", "mcp_types", "pydantic", "pydantic_core", "pydantic_settings")


def test_every_sdk_import_of_the_service_is_in_its_turn(tmp_path):
    """End to end: a service with --http, a bridge session and an HTTP session at once;
    every SDK module the service loads (at its start, in the sessions' warm-up, in the
    first sessions' requests) is loaded by a thread holding the turn."""
    notes = write_files(tmp_path / "notes", {"retries.md": "# Retry policy\n\nExponential backoff with jitter.\n"})
    store = tmp_path / "store" / "kenning.db"
    opened = open_store(store)
    index_folder(opened, notes, FakeEmbedder(), name="notes")
    opened.close()
    loaded_file = tmp_path / "loaded.json"
    runner = ("-c", TURN_RECORDING_SERVICE, str(loaded_file), ",".join(SDK_PACKAGES))
    bridge = StdioServerParameters(
        command=sys.executable, args=["-m", "kenning.launcher", "--store", str(store), "mcp"], env=kenning_env(store)
    )

    async def search(read, write) -> str:
        async with ClientSession(read, write) as session:
            await session.initialize()
            result = await session.call_tool("search", {"query": "exponential backoff"})
            return json.loads("".join(block.text for block in result.content))["mode"]

    async def through_the_bridge(modes: list[str]) -> None:
        async with stdio_client(bridge) as (read, write):
            modes.append(await search(read, write))

    async def over_http(url: str, token: str, modes: list[str]) -> None:
        async with (
            httpx2.AsyncClient(headers={"authorization": f"Bearer {token}"}, timeout=60) as http,
            streamable_http_client(url, http_client=http) as (read, write),
        ):
            modes.append(await search(read, write))

    async def both(url: str, token: str) -> list[str]:
        modes: list[str] = []
        async with anyio.create_task_group() as group:
            group.start_soon(through_the_bridge, modes)
            group.start_soon(over_http, url, token, modes)
        return modes

    with running_service(store, "--no-watch", "--http", "127.0.0.1:0", runner=runner) as (_, described):
        wait_until(lambda: (ping(store) or {}).get("mcp_ready") is True, what="MCP sessions prepared")
        token = (store.parent / transport.TOKEN_FILE).read_text().strip()
        assert anyio.run(both, described["http"], token) == ["hybrid", "hybrid"]
    loaded = json.loads(loaded_file.read_text())
    assert any(name.startswith("pydantic_core ") for name in loaded["in_turn"])  # the record saw the SDK load
    assert loaded["outside"] == []
