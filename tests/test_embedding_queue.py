"""The embedding queue is ordered by value (issue #15): notes before code, small sources
before large ones, recent files before old, and `kenning status` says when semantic
search will be complete."""

from __future__ import annotations

import os
from datetime import datetime, timedelta, timezone

from gitutil import commit, make_repo
from kenning.ingest.indexer import Indexer
from kenning.ingest.sources import add_source
from kenning.workspace import Workspace
from kenning.workspace.eta import describe_duration, seconds_until_semantic
from kenning_testing import CountingEmbedder, all_chunks, write_files

NOW = datetime(2026, 11, 1, tzinfo=timezone.utc)


def _big_repository(tmp_path, modules: int = 40):
    """A repository with code and its own docs, committed at several dates."""
    repo = make_repo(tmp_path, "bigrepo")
    for i in range(modules):
        body = "\n\n".join(f"def handler_{i}_{j}(request):\n    return route_{i}_{j}(request)\n" for j in range(4))
        commit(repo, {f"src/module_{i}.py": body}, NOW - timedelta(days=400 - i))
    commit(repo, {"docs/guide.md": "# Guide\n\nHow the service routes requests.\n"}, NOW - timedelta(days=300))
    return repo


def _notes(tmp_path):
    # Longer than any chunk of the repository: the phase's length sort inside a page
    # would put them last, so only the queue's order can put them first.
    filler = " ".join(["More details follow in the next meeting about this topic."] * 12)
    return write_files(
        tmp_path / "notes",
        {
            "meeting.md": f"# Meeting\n\nWe chose the blue deployment. {filler}\n",
            "ideas.md": f"# Ideas\n\nCache the query vectors. {filler}\n",
            "reading.txt": f"Papers to read about quantised vectors. {filler}\n",
        },
    )


def _source_of_each_embedded_text(store, embedder):
    """Which source each embedded text came from, in embedding order."""
    where = {}
    for row in all_chunks(store):
        where[row.text] = row.source
    return [next(name for text, name in where.items() if text in embedded) for embedded in embedder.embedded]


def test_a_notes_folder_added_with_a_large_repository_is_embedded_first(tmp_path, store):
    repo = _big_repository(tmp_path)
    add_source(store, repo, git=True, name="bigrepo")  # added first: file order would put it first
    add_source(store, _notes(tmp_path), name="notes")
    embedder = CountingEmbedder()
    Indexer(store, lambda: embedder).run()
    order = _source_of_each_embedded_text(store, embedder)
    notes = order.count("notes")
    assert notes == 3 and len(order) > 40
    assert order[:notes] == ["notes"] * notes
    assert store.vectors.count_pending() == 0  # and everything else still got its vector


def test_prose_before_code_and_recent_files_before_old(tmp_path, store):
    folder = write_files(
        tmp_path / "mixed",
        {
            "old.py": "def old_function():\n    return 1\n",
            "new.py": "def new_function():\n    return 2\n",
            "old.md": "# Old\n\nAn old note.\n",
            "new.md": "# New\n\nA new note.\n",
        },
    )
    day = 86400.0
    for name, age in (("old.py", 300), ("new.py", 1), ("old.md", 200), ("new.md", 2)):
        stamp = NOW.timestamp() - age * day
        os.utime(folder / name, (stamp, stamp))
    add_source(store, folder, name="mixed")
    Indexer(store, None).run(embed=False)
    texts = []
    queue = list(store.queue.order())
    rows = store.chunks.rows(queue)
    texts = [rows[cid].text for cid in queue]
    firsts = [next(n for n in ("new note", "old note", "new_function", "old_function") if n in t) for t in texts]
    assert firsts == ["new note", "old note", "new_function", "old_function"]


def test_status_gives_the_time_until_semantic_search_is_complete(tmp_path, store):
    add_source(store, _notes(tmp_path), name="notes")
    Indexer(store, None).run(embed=False)
    path = store.path
    with Workspace(path) as ws:
        status = ws.status()
        assert status.pending_vectors == 3
        assert status.semantic_eta_seconds is None  # never measured: no made-up estimate
        assert "speed not measured" in status.semantic_text
    store.queue.record_rate(0.01)  # a very slow machine: 300 s for three chunks
    with Workspace(path) as ws:
        status = ws.status()
        assert status.semantic_eta_seconds == 300.0
        assert "about 5 min" in status.semantic_text
    Indexer(store, lambda: CountingEmbedder()).run()
    assert store.queue.rate() > 0.01  # the fake embedder measured faster
    with Workspace(path) as ws:
        assert ws.status().semantic_eta_seconds == 0.0
        assert "complete" in ws.status().semantic_text


def test_the_rate_is_smoothed_and_the_wording_reads_naturally(store):
    store.queue.record_rate(10.0)
    store.queue.record_rate(20.0)
    assert 10.0 < store.queue.rate() < 20.0
    assert seconds_until_semantic(100, None) is None
    assert describe_duration(30) == "under a minute"
    assert describe_duration(8220) == "about 2 h 17 min"


def test_the_apps_embedding_progress_says_when_semantic_search_will_be_complete():
    from kenning.core.progress import Progress
    from kenning.gui.status import describe

    line = describe(Progress(phase="embeddings", done=100, total=3700, rate=12.0, unit="chunks"))
    assert "semantic search complete in about 5 min" in line
    assert "complete in" not in describe(Progress(phase="text", done=100, total=3700, rate=12.0))
