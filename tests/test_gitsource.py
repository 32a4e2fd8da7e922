"""Git sources: files come from git, dates from commits, activity from history."""

import subprocess
from datetime import datetime, timedelta, timezone

from gitutil import commit, make_repo, write
from kenning_testing import all_chunks, documents_by_path, index_folder

T0 = datetime(2024, 1, 10, tzinfo=timezone.utc)


def _paths(store):
    return set(documents_by_path(store))


def test_git_source_indexes_exactly_gits_files(store, tmp_path):
    repo = make_repo(tmp_path)
    commit(
        repo, {".gitignore": "ignored.md\nbuild-out/\n", "tracked.md": "# T\n\ntracked\n", "src/app.py": "x = 1\n"}, T0
    )
    write(repo, "untracked.md", "# U\n\nnew\n")
    write(repo, "ignored.md", "# I\n\nignored\n")
    write(repo, "build-out/gen.md", "generated")
    index_folder(store, repo, git=True)
    assert _paths(store) == {"tracked.md", "src/app.py", "untracked.md", ".gitignore"}


def test_cloned_repository_documents_carry_commit_dates(store, tmp_path):
    origin = make_repo(tmp_path, "origin")
    commit(origin, {"notes.md": "# N\n\nfirst\n"}, T0)
    commit(origin, {"notes.md": "# N\n\nsecond\n"}, T0 + timedelta(days=20))
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(origin), str(clone)], check=True)
    index_folder(store, clone, git=True)
    (row,) = {(row.created_at, row.updated_at): row for row in all_chunks(store)}.values()
    created, updated = row.created_at, row.updated_at
    (known,) = store.documents.known(row.source_id).values()
    mtime = known.mtime
    assert created == T0.timestamp()
    assert updated == (T0 + timedelta(days=20)).timestamp()
    assert mtime > updated  # the clone's mtime is "now" and is not used


def test_git_paths_table_lists_current_files_with_last_commit(store, tmp_path):
    repo = make_repo(tmp_path)
    commit(repo, {"a.md": "a", "gone.md": "g"}, T0)
    commit(repo, {"gone.md": None, "a.md": "a2"}, T0 + timedelta(days=1))
    write(repo, "fresh.md", "not committed")
    index_folder(store, repo, git=True)
    rows = store.git.path_times(["a.md", "gone.md", "fresh.md"])
    assert rows == {"a.md": (T0 + timedelta(days=1)).timestamp(), "fresh.md": None}


def test_git_walk_does_not_depend_on_the_working_directory(store, tmp_path, monkeypatch):
    repo = make_repo(tmp_path)
    commit(repo, {"docs/guide.md": "# Guide\n\nwords\n", "top.md": "# Top\n"}, T0)
    elsewhere = tmp_path / "some-venv"
    elsewhere.mkdir()
    (elsewhere / "pyvenv.cfg").write_text("home = /usr/bin\n")
    monkeypatch.chdir(elsewhere)
    index_folder(store, repo, git=True)
    assert _paths(store) == {"docs/guide.md", "top.md"}
