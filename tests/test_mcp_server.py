"""`kenning mcp` started as a subprocess and driven by the MCP SDK's own stdio client."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client

from kenning.embedding import FakeEmbedder
from kenning.storage import open_store
from kenning_testing import index_folder, write_files

APP = str(Path(__file__).resolve().parent.parent / "app")


@pytest.fixture
def indexed_store(tmp_path):
    notes = write_files(
        tmp_path / "notes",
        {
            "retries.md": "# Retry policy\n\nThe client retries with exponential backoff.\nJitter avoids herds.\n",
            "deploy.md": "# Deploying\n\nDeploy with the blue green switch after the retries settle.\n",
            **{f"bulk/note{i:02d}.md": f"# Bulk {i}\n\nbackoff " + "filler words " * 60 + "\n" for i in range(30)},
        },
    )
    (tmp_path / "secret.txt").write_text("outside every source\n", encoding="utf-8")
    (notes / "escape.md").symlink_to(tmp_path / "secret.txt")
    store_path = tmp_path / "store" / "kenning.db"
    store = open_store(store_path)
    index_folder(store, notes, FakeEmbedder(), name="notes")
    store.close()
    return store_path, notes


def _params(store_path: Path, *extra: str) -> StdioServerParameters:
    env = {
        "PYTHONPATH": APP,
        "KENNING_HOME": str(store_path.parent),
        "KENNING_MODEL": "fake",
        "HOME": os.environ.get("HOME", "/tmp"),
    }
    args = ["-m", "kenning.launcher", "--store", str(store_path), "mcp", *extra]
    return StdioServerParameters(command=sys.executable, args=args, env=env)


async def _session_calls(params: StdioServerParameters, calls: list[tuple[str, dict]]):
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        tools = await session.list_tools()
        results = [await session.call_tool(name, arguments) for name, arguments in calls]
    return [t.name for t in tools.tools], results


def _text(result) -> str:
    return "".join(block.text for block in result.content)


def test_an_assistant_lists_searches_reads_and_is_refused(indexed_store, tmp_path):
    store_path, notes = indexed_store
    calls = [
        ("search", {"query": "exponential backoff", "limit": 3, "mode": "lexical"}),
        ("read", {"path": str(notes / "retries.md"), "start_line": 3, "end_line": 4}),
        ("read", {"path": "retries.md", "source": "notes"}),
        ("read", {"path": str(tmp_path / "secret.txt")}),
        ("read", {"path": "../secret.txt", "source": "notes"}),
        ("read", {"path": str(notes / "escape.md")}),
        ("read", {"path": "/etc/passwd"}),
        ("sources", {}),
        ("status", {}),
    ]
    names, results = anyio.run(_session_calls, _params(store_path), calls)

    assert {"search", "read", "related", "sources", "status"} <= set(names)
    assert "index" not in names and "add_source" not in names  # read-only without --allow-writes
    search = json.loads(_text(results[0]))
    assert search["hits"][0]["path"] == "retries.md"
    assert search["hits"][0]["abs_path"] == str(notes / "retries.md")
    assert "breakdown" in search["hits"][0]
    lines = json.loads(_text(results[1]))
    assert lines["text"] == "The client retries with exponential backoff.\nJitter avoids herds.\n"
    assert (lines["start_line"], lines["end_line"]) == (3, 4)
    assert json.loads(_text(results[2]))["text"].startswith("# Retry policy\n")
    for refused in results[3:7]:
        assert refused.is_error, _text(refused)
        assert "Refused" in _text(refused)
        assert "outside every source" not in _text(refused)
    assert json.loads(_text(results[7]))["sources"][0]["name"] == "notes"
    status = json.loads(_text(results[8]))
    assert status["documents"] == 32 and status["vectors_pending"] == 0


def test_an_answer_past_the_byte_cap_is_cut_and_says_so(indexed_store):
    store_path, _ = indexed_store
    calls = [
        ("search", {"query": "backoff", "limit": 30, "mode": "lexical"}),
        ("read", {"path": "bulk/note01.md", "source": "notes"}),
    ]
    _, results = anyio.run(_session_calls, _params(store_path, "--max-bytes", "3000"), calls)
    text = _text(results[0])
    assert len(text.encode("utf-8")) <= 3000
    answer = json.loads(text)
    assert 0 < len(answer["hits"]) < 30
    assert answer["truncated"]["omitted"] == 30 - len(answer["hits"])
    assert "3000 bytes" in answer["truncated"]["reason"]


def test_writes_are_offered_only_when_allowed(indexed_store, tmp_path):
    store_path, _ = indexed_store
    more = write_files(tmp_path / "more", {"idea.md": "# Idea\n\nA zeppelin timetable.\n"})
    calls = [
        ("add_source", {"path": str(more), "name": "more"}),
        ("index", {"source": "more"}),
        ("search", {"query": "zeppelin", "mode": "lexical"}),
    ]
    names, results = anyio.run(_session_calls, _params(store_path, "--allow-writes"), calls)
    assert {"add_source", "index"} <= set(names)
    assert not any(r.is_error for r in results), [_text(r) for r in results]
    assert json.loads(_text(results[2]))["hits"][0]["source"] == "more"


def test_the_printed_config_starts_a_server_an_assistant_can_use(indexed_store, capsys):
    """As a new user would: paste what --print-config printed, and the assistant connects."""
    from kenning.cli.main import main

    store_path, _ = indexed_store
    assert main(["--store", str(store_path), "mcp", "--print-config", "cursor"]) == 0
    entry = json.loads(capsys.readouterr().out)["mcpServers"]["kenning"]
    env = {**entry.get("env", {}), "PYTHONPATH": APP, "KENNING_MODEL": "fake"}
    params = StdioServerParameters(command=entry["command"], args=entry["args"], env=env)
    names, results = anyio.run(_session_calls, params, [("sources", {})])
    assert "search" in names
    assert json.loads(_text(results[0]))["sources"][0]["name"] == "notes"
