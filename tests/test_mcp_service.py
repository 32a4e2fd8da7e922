"""The MCP tools' behaviour in-process: model readiness, related notes, path refusal, byte caps."""

from __future__ import annotations

import json
import threading
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kenning.cli.output import hit_dict
from kenning.core.errors import KenningError
from kenning.embedding import FakeEmbedder
from kenning.mcpserver import bounds
from kenning.mcpserver.clientconfig import client_config
from kenning.mcpserver.model import BackgroundModel
from kenning.mcpserver.service import KenningService
from kenning.workspace import Workspace
from kenning.workspace.documents import RefusedPath, resolve_document
from kenning.workspace.searching import LOADING_NOTE
from kenning_testing import index_folder, write_files


@pytest.fixture
def vault(tmp_path, store):
    notes = write_files(
        tmp_path / "notes",
        {
            "sailing.md": "# Sailing\n\nReefing the mainsail when the wind rises.\n",
            "boats.md": "# Boats\n\nThe mainsail and the jib; reefing in strong wind.\n",
            "bread.md": "# Bread\n\nSourdough starter, flour and water.\n",
        },
    )
    index_folder(store, notes, FakeEmbedder(), name="notes")
    return notes


def _service(store, model: BackgroundModel | None = None, **kw) -> KenningService:
    ws = Workspace(store.path, model="fake")
    ws.__dict__["store"] = store  # share the test's connection
    kw.setdefault("watch", False)
    return KenningService(ws, hit_dict, background_model=model or BackgroundModel(FakeEmbedder).start(), **kw)


def test_a_search_waits_a_bounded_time_for_the_model_then_says_it_answered_on_keywords(store, vault):
    release = threading.Event()

    def slow_model():
        release.wait(10)
        return FakeEmbedder()

    model = BackgroundModel(slow_model).start()
    service = _service(store, model, model_wait=0.2)
    started = time.monotonic()
    first = service.search("reefing mainsail")
    assert 0.2 <= time.monotonic() - started < 5
    assert first["mode"] == "lexical" and LOADING_NOTE in first["notes"]
    assert first["hits"]
    assert service.search("reefing mainsail", mode="lexical")["notes"] == []  # keywords asked: no wait, no note
    release.set()
    assert model.wait(10)
    second = service.search("reefing mainsail", explain=True)
    assert second["mode"] == "hybrid" and not second["notes"]
    assert "vector" in second["hits"][0]["breakdown"]["lists"]


def test_a_model_ready_within_the_wait_answers_the_first_search_with_meaning(store, vault):
    def model_in_half_a_second():
        time.sleep(0.5)
        return FakeEmbedder()

    service = _service(store, BackgroundModel(model_in_half_a_second).start())
    first = service.search("reefing mainsail")
    assert first["mode"] == "hybrid" and first["notes"] == []
    assert "breakdown" not in first["hits"][0]


def test_a_model_that_fails_to_load_leaves_lexical_search_working(store, vault):
    def broken():
        raise OSError("model files missing")

    model = BackgroundModel(broken).start()
    model.wait(10)
    answer = _service(store, model).search("sourdough")
    assert answer["mode"] == "lexical" and "model files missing" in answer["notes"][0]
    assert answer["hits"][0]["path"] == "bread.md"


def test_related_finds_the_note_nearest_in_meaning_and_not_itself(store, vault):
    service = _service(store)
    service.model.wait(10)
    answer = service.related("sailing.md")
    paths = [r["path"] for r in answer["related"]]
    assert paths[0] == "boats.md" and "sailing.md" not in paths


def test_read_refuses_a_folder_symlink_that_leaves_the_source(store, tmp_path):
    outside = write_files(tmp_path / "outside", {"private.md": "# Private\n\nnot for assistants\n"})
    notes = write_files(tmp_path / "notes", {"a.md": "# A\n\nalpha\n"})
    (notes / "linked").symlink_to(outside, target_is_directory=True)
    index_folder(store, notes, FakeEmbedder(), name="notes")
    service = _service(store)
    for path in (str(notes / "linked" / "private.md"), "linked/private.md", str(outside / "private.md")):
        with pytest.raises(RefusedPath):
            service.read(path)
    assert service.read("a.md", line_numbers=False)["text"] == "# A\n\nalpha\n"


def test_read_refuses_an_indexed_file_swapped_for_a_symlink_out_of_the_source(store, tmp_path):
    notes = write_files(tmp_path / "notes", {"a.md": "# A\n\nalpha\n"})
    (tmp_path / "secret.md").write_text("secret\n", encoding="utf-8")
    index_folder(store, notes, FakeEmbedder(), name="notes")
    (notes / "a.md").unlink()
    (notes / "a.md").symlink_to(tmp_path / "secret.md")
    with pytest.raises(RefusedPath, match="outside the folder"):
        _service(store).read(str(notes / "a.md"))


def test_a_long_file_is_read_in_pieces_that_each_say_where_to_go_on(store, tmp_path):
    body = "".join(f"line {i} " + "x" * 80 + "\n" for i in range(1, 201))
    notes = write_files(tmp_path / "notes", {"long.md": body})
    index_folder(store, notes, FakeEmbedder(), name="notes")
    service = _service(store, max_bytes=bounds.MIN_MAX_BYTES)
    text, start = "", 1
    while True:
        answer = service.read("long.md", start_line=start, line_numbers=False)
        assert len(bounds.dumps(answer).encode("utf-8")) <= bounds.MIN_MAX_BYTES
        text += answer["text"]
        if "truncated" not in answer:
            break
        start = answer["truncated"]["next_start_line"]
    assert text == body


def test_writes_are_refused_by_a_read_only_service(store, vault):
    with pytest.raises(KenningError, match="read-only"):
        _service(store).add_source(str(vault))


@settings(max_examples=60, deadline=None)
@given(
    items=st.lists(st.text(max_size=300), max_size=40),
    cap=st.integers(min_value=bounds.MIN_MAX_BYTES, max_value=6000),
)
def test_a_capped_list_never_exceeds_the_cap_and_keeps_a_prefix(items, cap):
    answer = bounds.fit_lists({"query": "q", "hits": items}, ("hits",), cap)
    assert len(bounds.dumps(answer).encode("utf-8")) <= cap
    assert answer["hits"] == items[: len(answer["hits"])]
    if len(answer["hits"]) < len(items):
        assert answer["truncated"]["omitted"] == len(items) - len(answer["hits"])


@pytest.mark.parametrize("client", ["claude", "cursor", "vscode", "zed"])
def test_printed_config_is_json_that_starts_kenning_mcp(client, tmp_path, capsys):
    from kenning.cli.main import main

    assert main(["--store", str(tmp_path / "k.db"), "mcp", "--print-config", client]) == 0
    config = json.loads(capsys.readouterr().out)
    key = {"vscode": "servers", "zed": "context_servers"}.get(client, "mcpServers")
    assert list(config) == [key]
    servers = config[key]
    entry = servers["kenning"]
    assert entry["args"][-1] == "mcp" and entry["args"][-3:-1] == ["--store", str(tmp_path / "k.db")]
    assert entry["command"].startswith("/")
    if client == "vscode":
        assert entry["type"] == "stdio"
    if client == "zed":
        assert entry["source"] == "custom"  # some Zed versions refuse a server without it


def test_config_names_the_installed_script_when_run_through_it(tmp_path):
    script = tmp_path / "bin" / "kenning"
    script.parent.mkdir()
    script.write_text("#!/bin/sh\n", encoding="utf-8")
    entry = client_config("claude", argv0=str(script))["mcpServers"]["kenning"]
    assert entry["command"] == str(script) and entry["args"] == ["mcp"]


# The layout is only read by each example, so sharing it between examples is sound.
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    parts=st.lists(st.sampled_from(["..", ".", "a.md", "linked", "notes", "private.md", "", "sub", "~"]), max_size=6)
)
def test_no_path_resolves_outside_the_sources_or_to_an_unindexed_file(hostile_layout, parts):
    store, notes, indexed = hostile_layout
    for path in ("/".join(parts), str(notes) + "/" + "/".join(parts)):
        try:
            found = resolve_document(store, path)
        except KenningError:
            continue
        assert found.real_path.is_relative_to(notes.resolve())
        assert found.document.rel_path in indexed


@pytest.fixture
def hostile_layout(tmp_path_factory):
    from kenning.storage import open_store

    tmp = tmp_path_factory.mktemp("hostile")
    outside = write_files(tmp / "outside", {"private.md": "# Private\n\nsecret\n", "a.md": "# Not indexed\n"})
    notes = write_files(tmp / "notes", {"a.md": "# A\n\nalpha\n", "sub/a.md": "# Sub\n\nbeta\n"})
    (notes / "linked").symlink_to(outside, target_is_directory=True)
    (notes / "sub" / "private.md").symlink_to(outside / "private.md")
    store = open_store(tmp / "store.db")
    index_folder(store, notes, FakeEmbedder(), name="notes")
    yield store, notes, {"a.md", "sub/a.md"}
    store.close()


@settings(max_examples=60, deadline=None)
@given(
    first=st.lists(st.text(max_size=200), max_size=20),
    second=st.lists(st.text(max_size=200), max_size=20),
    cap=st.integers(min_value=bounds.MIN_MAX_BYTES, max_value=5000),
)
def test_several_capped_lists_shorten_the_last_first_and_say_how_many_each_lost(first, second, cap):
    answer = bounds.fit_lists({"a": first, "b": second}, ("a", "b"), cap)
    assert len(bounds.dumps(answer).encode("utf-8")) <= cap
    assert answer["a"] == first[: len(answer["a"])] and answer["b"] == second[: len(answer["b"])]
    if len(answer["a"]) < len(first):
        assert answer["b"] == []  # the earlier list is cut only once the later one is gone
    if "truncated" in answer:
        lost = answer["truncated"]["lists"]
        assert (
            sum(lost.values())
            == answer["truncated"]["omitted"]
            == len(first) + len(second) - len(answer["a"]) - len(answer["b"])
        )


def test_search_honours_the_users_result_count_within_its_own_maximum(store, tmp_path, monkeypatch):
    from kenning.mcpserver import service as service_module

    notes = write_files(tmp_path / "many", {f"n{i:02}.md": f"# N{i}\n\nkestrel note {i}\n" for i in range(30)})
    index_folder(store, notes, FakeEmbedder(), name="many")
    service = _service(store)
    service.ws.update_settings(limit=7)
    assert len(service.search("kestrel", mode="lexical")["hits"]) == 7  # no limit given: the user's setting
    assert len(service.search("kestrel", limit=3, mode="lexical")["hits"]) == 3
    monkeypatch.setattr(service_module, "MAX_LIMIT", 5)
    assert len(service.search("kestrel", mode="lexical")["hits"]) == 5  # the setting, bounded by the server's maximum
    service.close()


def test_a_file_saved_while_the_start_up_check_runs_is_not_missed(store, tmp_path):
    """The watch is on before the catch-up walk: a save the walk has passed is still heard."""
    from kenning.search.engine import SearchEngine
    from kenning.workspace.freshness import IndexKeeper

    notes = write_files(tmp_path / "notes", {"a.md": "# A\n\nalpha\n"})
    index_folder(store, notes, name="notes")
    walked, release = threading.Event(), threading.Event()

    def workspace_for():
        ws = Workspace(store.path, model="fake")
        real_index = ws.index

        def index_then_linger(*args, **kwargs):
            run = real_index(*args, **kwargs)  # the walk is over: b.md is not there yet
            walked.set()
            release.wait(10)
            return run

        ws.index = index_then_linger
        return ws

    keeper = IndexKeeper(workspace_for, FakeEmbedder).start()
    try:
        assert walked.wait(20)
        assert keeper.state(None)["checking"] is True and keeper.state(None)["watching"] is True
        (notes / "b.md").write_text("# B\n\nA zeppelin timetable.\n", encoding="utf-8")
        release.set()
        engine = SearchEngine(store, None)
        deadline = time.monotonic() + 10
        while not engine.search("zeppelin").hits and time.monotonic() < deadline:
            time.sleep(0.05)
        assert [h.path for h in engine.search("zeppelin").hits] == ["b.md"]
        assert "checking" not in keeper.state(None)
    finally:
        keeper.close()
