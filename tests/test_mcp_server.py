"""`kenning mcp` started as a subprocess and driven by the MCP SDK's own stdio client."""

from __future__ import annotations

import json
import os
import sys
import time
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
    assert "breakdown" not in search["hits"][0]  # explain is asked for, not sent by default
    lines = json.loads(_text(results[1]))
    assert lines["text"] == "3\tThe client retries with exponential backoff.\n4\tJitter avoids herds.\n"
    assert (lines["start_line"], lines["end_line"], lines["numbered"]) == (3, 4, True)
    assert json.loads(_text(results[2]))["text"].startswith("1\t# Retry policy\n")
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


def test_every_tool_publishes_its_answer_schema_and_answers_compact_structured_json(indexed_store):
    store_path, notes = indexed_store
    calls = [
        ("search", {"query": "exponential backoff", "mode": "lexical"}),
        ("search", {"query": "exponential backoff", "mode": "lexical", "explain": True, "limit": 1}),
        ("read", {"path": "retries.md", "source": "notes", "line_numbers": False}),
        ("status", {}),
    ]

    async def session():
        async with stdio_client(_params(store_path)) as (read, write), ClientSession(read, write) as s:
            await s.initialize()
            tools = (await s.list_tools()).tools
            return tools, [await s.call_tool(name, arguments) for name, arguments in calls]

    tools, results = anyio.run(session)
    for tool in tools:
        assert tool.output_schema and tool.output_schema["type"] == "object", tool.name
        assert "version" in tool.output_schema["required"] and "index" in tool.output_schema["required"]
    limit = next(t for t in tools if t.name == "search").input_schema["properties"]["limit"]
    number = next(branch for branch in limit["anyOf"] if branch.get("type") == "integer")
    assert (number["minimum"], number["maximum"]) == (1, 50)  # or left out: the user's setting
    for result in results:
        text = _text(result)
        assert not result.is_error, text
        assert result.structured_content == json.loads(text)  # the same answer, twice
        assert ", " not in text[:200] and "\n " not in text  # compact: no indentation, no padding
        assert result.structured_content["version"] == 1
        assert result.structured_content["index"]["updated"]
    compact, explained = (r.structured_content["hits"][0] for r in results[:2])
    assert explained["path"] == compact["path"] and "breakdown" in explained
    size = {
        name: len(json.dumps(hit, separators=(",", ":")))
        for name, hit in (("compact", compact), ("explained", explained))
    }
    assert size["explained"] > 2 * size["compact"], size  # a hit costs far less without its breakdown
    assert results[2].structured_content["text"].startswith("# Retry policy\n")


def test_bad_ranges_and_limits_are_errors_never_silently_changed(indexed_store):
    store_path, _ = indexed_store
    calls = [
        ("search", {"query": "backoff", "limit": 0}),
        ("search", {"query": "backoff", "limit": -1}),
        ("search", {"query": "backoff", "limit": 51}),
        ("read", {"path": "retries.md", "source": "notes", "start_line": 4, "end_line": 2}),
        ("read", {"path": "retries.md", "source": "notes", "start_line": 40}),
        ("read", {"path": "retries.md", "source": "notes", "start_line": 0}),
        ("related", {"path": "retries.md", "source": "notes", "limit": 0}),
    ]
    _, results = anyio.run(_session_calls, _params(store_path), calls)
    for (name, arguments), result in zip(calls, results):
        assert result.is_error, (name, arguments, _text(result))
    assert "before start_line" in _text(results[3])
    assert "past the end" in _text(results[4]) and "has 4 lines" in _text(results[4])


def test_max_bytes_below_what_an_answer_needs_is_refused(tmp_path, capsys):
    from kenning.cli.main import main

    with pytest.raises(SystemExit) as stopped:
        main(["--store", str(tmp_path / "k.db"), "mcp", "--max-bytes", "400"])
    assert stopped.value.code == 2
    assert "below the least an answer needs (1000 bytes)" in capsys.readouterr().err


def test_backlinks_and_unresolved_links_over_stdio(tmp_path):
    vault = write_files(
        tmp_path / "vault",
        {
            "Deploy.md": "---\naliases: [Ship it]\n---\n# Deploy\n\nBlue green.\n",
            "Journal.md": "# Journal\n\nRead [[Ship it]] and [[Nowhere]].\nThe deploy went well.\n",
        },
    )
    store_path = tmp_path / "store" / "kenning.db"
    store = open_store(store_path)
    index_folder(store, vault, name="vault")
    store.close()
    calls = [("backlinks", {"path": str(vault / "Deploy.md")}), ("unresolved_links", {})]
    names, results = anyio.run(_session_calls, _params(store_path), calls)
    assert {"backlinks", "unresolved_links"} <= set(names)
    links = results[0].structured_content
    assert [(b["path"], b["line"], b["target"]) for b in links["backlinks"]] == [("Journal.md", 3, "Ship it")]
    assert [(m["path"], m["line"]) for m in links["mentions"]] == [("Journal.md", 4)]
    assert [u["target"] for u in results[1].structured_content["unresolved"]] == ["Nowhere"]


def test_a_file_written_mid_session_is_found_within_two_seconds(indexed_store):
    store_path, notes = indexed_store

    async def session():
        async with stdio_client(_params(store_path)) as (read, write), ClientSession(read, write) as s:
            await s.initialize()
            before = (await s.call_tool("search", {"query": "zeppelin", "mode": "lexical"})).structured_content
            deadline = time.monotonic() + 30
            while before["index"].get("checking") and time.monotonic() < deadline:  # the start-up check
                await anyio.sleep(0.05)
                before = (await s.call_tool("search", {"query": "zeppelin", "mode": "lexical"})).structured_content
            (notes / "airship.md").write_text("# Airships\n\nA zeppelin timetable.\n", encoding="utf-8")
            written = time.monotonic()
            while time.monotonic() - written < 2.0:
                after = (await s.call_tool("search", {"query": "zeppelin", "mode": "lexical"})).structured_content
                if after["hits"]:
                    return before, after, time.monotonic() - written
                await anyio.sleep(0.05)
            return before, after, None

    before, after, seconds = anyio.run(session)
    assert before["hits"] == [] and before["index"]["watching"] is True
    assert seconds is not None, after
    assert after["hits"][0]["path"] == "airship.md"
    assert after["index"]["updated"] >= before["index"]["updated"]


def test_changes_made_while_no_server_ran_are_caught_up_at_start(indexed_store):
    store_path, notes = indexed_store
    (notes / "retries.md").write_text("# Retry policy\n\nNow with a circuit breaker.\n", encoding="utf-8")

    async def session():
        async with stdio_client(_params(store_path)) as (read, write), ClientSession(read, write) as s:
            await s.initialize()
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline:
                answer = (
                    await s.call_tool("search", {"query": "circuit breaker", "mode": "lexical"})
                ).structured_content
                if answer["hits"] or not answer["index"].get("checking"):
                    return answer
                await anyio.sleep(0.05)
            return answer

    answer = anyio.run(session)
    assert answer["hits"] and answer["hits"][0]["path"] == "retries.md"


def test_without_watching_the_answers_say_the_index_is_not_followed(indexed_store):
    store_path, notes = indexed_store
    _, results = anyio.run(_session_calls, _params(store_path, "--no-watch"), [("sources", {})])
    state = results[0].structured_content["index"]
    assert state["watching"] is False and "--no-watch" in state["notes"][0]


@pytest.mark.slow
def test_a_one_shot_client_gets_hybrid_search_from_the_real_model(indexed_store):
    """The issue's case: a client that asks at once must not get keywords only while the model loads."""
    store_path, _ = indexed_store
    params = _params(store_path)
    params.env.pop("KENNING_MODEL")
    store = open_store(store_path)
    from kenning.embedding import resolve_embedder
    from kenning.storage.paths import model_cache_dir
    from kenning_testing import reindex

    reindex(store, resolve_embedder("default", model_cache_dir()))
    store.close()
    _, results = anyio.run(_session_calls, params, [("search", {"query": "retry with backoff"})])
    answer = results[0].structured_content
    assert answer["mode"] == "hybrid", answer["notes"]
