"""Issue #27 item 3: assistants through the service (stdio bridge, and HTTP with a token)."""

from __future__ import annotations

import json
import os
import sys

import anyio
import httpx2
import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

from kenning.core.errors import KenningError
from kenning.embedding import FakeEmbedder
from kenning.mcpserver.transport import TOKEN_FILE, parse_endpoint
from kenning.storage import open_store
from kenning_testing import index_folder, write_files
from serve_testing import kenning, kenning_env, ping, running_service, wait_until

NOTES = {
    "retries.md": "# Retry policy\n\nThe client retries with exponential backoff.\nJitter avoids herds.\n",
    "deploy.md": "# Deploying\n\nDeploy with the blue green switch after the retries settle.\n",
}
BRIDGE_RUNNER = """
import atexit, json, sys
atexit.register(lambda: open(sys.argv.pop(1), "w").write(json.dumps(sorted(sys.modules))))
from kenning.launcher import main
sys.exit(main(sys.argv[2:]))
"""


@pytest.fixture
def mcp_store(tmp_path):
    notes = write_files(tmp_path / "notes", NOTES)
    path = tmp_path / "store" / "kenning.db"
    store = open_store(path)
    index_folder(store, notes, FakeEmbedder(), name="notes")
    store.close()
    return path, notes


def _bridge(store, modules_file) -> StdioServerParameters:
    env = kenning_env(store)
    args = ["-c", BRIDGE_RUNNER, str(modules_file), "--store", str(store), "mcp"]
    return StdioServerParameters(command=sys.executable, args=args, env=env)


async def _calls(read, write, calls):
    async with ClientSession(read, write) as session:
        await session.initialize()
        tools = [t.name for t in (await session.list_tools()).tools]
        return tools, [await session.call_tool(name, arguments) for name, arguments in calls]


def _text(result) -> str:
    return "".join(block.text for block in result.content)


def test_kenning_mcp_bridges_to_the_service_hybrid_from_the_first_request(mcp_store, tmp_path):
    store, _ = mcp_store
    modules = tmp_path / "bridge-modules.json"

    async def session():
        async with stdio_client(_bridge(store, modules)) as (read, write):
            return await _calls(
                read, write, [("search", {"query": "retries backoff", "explain": True}), ("status", {})]
            )

    with running_service(store, "--no-watch") as (_, described):
        tools, (search, status) = anyio.run(session)
    answer = json.loads(_text(search))
    assert {"search", "read", "related", "sources", "status"} <= set(tools)
    assert answer["mode"] == "hybrid" and answer["notes"] == []
    assert "vector" in answer["hits"][0]["breakdown"]["lists"]
    assert json.loads(_text(status))["model_state"] == "ready"
    # The bridge relayed bytes: no SDK, no search, no model in its process.
    loaded = set(json.loads(modules.read_text()))
    assert not {m.split(".")[0] for m in loaded} & {"mcp", "numpy", "fastembed", "pydantic", "anyio", "apsw"}
    assert not any(m.startswith(("kenning.search", "kenning.mcpserver", "kenning.cli")) for m in loaded)
    assert described["pid"] != os.getpid()


@pytest.mark.skipif(not os.path.exists("/proc/self/maps"), reason="reads /proc")
def test_the_service_prepares_mcp_sessions_before_the_first_one(mcp_store):
    """The SDK is imported and the tools built while the service starts, not in the
    first session (that cost the first answer 2.5-3.2 s against 0.4 s for the next)."""
    store, _ = mcp_store
    with running_service(store, "--no-watch") as (proc, _):
        wait_until(lambda: (ping(store) or {}).get("mcp_ready") is True, what="MCP sessions prepared")
        with open(f"/proc/{proc.pid}/maps", encoding="utf-8") as maps:
            mapped = maps.read()
    assert "pydantic_core" in mapped  # the SDK's models, loaded with no session yet


def test_the_bridge_answers_fresh_results_through_the_services_watcher(mcp_store, tmp_path):
    store, notes = mcp_store

    async def ask_until_found():
        async with stdio_client(_bridge(store, tmp_path / "m.json")) as (read, write), ClientSession(read, write) as s:
            await s.initialize()
            (notes / "kites.md").write_text("# Kites\n\nFlying kites on windy beaches.\n", encoding="utf-8")
            with anyio.fail_after(60):
                while True:
                    found = json.loads(_text(await s.call_tool("search", {"query": "kites", "mode": "lexical"})))
                    if any(hit["path"] == "kites.md" for hit in found["hits"]):
                        return found
                    await anyio.sleep(0.1)

    with running_service(store):
        wait_until(lambda: (ping(store) or {}).get("watching") is True, what="the watch in place")
        found = anyio.run(ask_until_found)
    assert found["hits"][0]["path"] == "kites.md"


def test_reading_outside_the_sources_is_refused_through_the_bridge(mcp_store, tmp_path):
    store, notes = mcp_store
    (tmp_path / "secret.txt").write_text("outside every source\n", encoding="utf-8")

    async def session():
        async with stdio_client(_bridge(store, tmp_path / "m.json")) as (read, write):
            return await _calls(read, write, [("read", {"path": str(tmp_path / "secret.txt")})])

    with running_service(store, "--no-watch"):
        _, (result,) = anyio.run(session)
    assert result.is_error and "outside every source" not in _text(result)


# -- HTTP --------------------------------------------------------------------------


@pytest.fixture
def http_service(mcp_store):
    store, _ = mcp_store
    with running_service(store, "--no-watch", "--http", "127.0.0.1:0") as (_, described):
        token = (store.parent / TOKEN_FILE).read_text().strip()
        yield described["http"], token


def _post(url: str, headers: dict[str, str]) -> httpx2.Response:
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    headers = {"accept": "application/json, text/event-stream", "content-type": "application/json", **headers}
    return httpx2.post(url, json=body, headers=headers, timeout=30)


def test_http_refuses_a_request_without_the_token(http_service):
    url, _ = http_service
    response = _post(url, {})
    assert response.status_code == 401
    assert "bearer" in response.headers["www-authenticate"].lower()


def test_http_refuses_a_wrong_token(http_service):
    url, token = http_service
    for wrong in (f"Bearer {token[:-1]}x", token, f"Basic {token}", f"Bearer {token}{token}", "Bearer"):
        assert _post(url, {"authorization": wrong}).status_code == 401, wrong


def test_http_with_the_token_is_an_mcp_server_with_the_same_tools(http_service):
    url, token = http_service

    async def session():
        headers = {"authorization": f"Bearer {token}"}
        async with (
            httpx2.AsyncClient(headers=headers, timeout=30) as http,
            streamable_http_client(url, http_client=http) as (read, write),
        ):
            # Words only retries.md holds: with two notes that both say "retries", FTS5's idf
            # floor leaves bm25 an order only, and the fake model's hash decides the first.
            return await _calls(read, write, [("search", {"query": "exponential backoff"})])

    tools, (search,) = anyio.run(session)
    assert {"search", "read", "related", "sources", "status"} <= set(tools)
    assert json.loads(_text(search))["hits"][0]["path"] == "retries.md"


def test_http_refuses_a_foreign_host_header(http_service):
    url, token = http_service
    response = _post(url, {"authorization": f"Bearer {token}", "host": "evil.example:80"})
    assert response.status_code in (400, 403, 421)


@pytest.mark.parametrize("where", ["0.0.0.0:8765", "192.168.1.10:8765", "example.com:8765", "[::]:8765"])
def test_http_refuses_a_non_loopback_bind(where, mcp_store):
    with pytest.raises(KenningError, match="loopback"):
        parse_endpoint(where)
    store, _ = mcp_store
    done = kenning(store, "mcp", "--http", where)
    assert done.returncode == 2 and b"loopback" in done.stderr
    assert ping(store) is None  # nothing was started


def test_loopback_endpoints_are_accepted():
    assert parse_endpoint("8765").host == "127.0.0.1"
    assert parse_endpoint("localhost:0").port == 0
    assert parse_endpoint("[::1]:9000").host == "::1"
