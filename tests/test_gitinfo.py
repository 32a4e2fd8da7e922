"""kenning.gitinfo against real repositories built in tmp dirs."""

from __future__ import annotations

import os
import shutil
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gitutil import commit, git, make_repo, write
from kenning.core import SourceError
from kenning.gitinfo import (
    RepoInfo,
    inspect_repo,
    is_git_repo,
    list_files,
    path_commit_times,
    recent_paths,
)

NOW = datetime(2024, 6, 1, 12, 0, tzinfo=timezone.utc)


def ago(days: float) -> datetime:
    return NOW - timedelta(days=days)


def ts(when: datetime) -> float:
    return when.timestamp()


def git_view(repo: Path) -> set[str]:
    """What git itself calls the work tree's files, computed the long way round."""

    def z(*args: str) -> set[str]:
        return {p for p in git(repo, "ls-files", "-z", *args).split("\0") if p}

    return (z("--cached") | z("--others", "--exclude-standard")) - z("--deleted")


# ---------------------------------------------------------------- inspect_repo


def test_inspect_repo_reports_branch_and_last_commit(tmp_path):
    repo = make_repo(tmp_path, branch="trunk")
    commit(repo, {"a.md": "one"}, ago(10), "first")
    sha = commit(repo, {"a.md": "two"}, ago(2), "Second change\n\nbody text")
    info = inspect_repo(repo)
    assert info == RepoInfo(
        root=str(repo),
        branch="trunk",
        head_sha=sha,
        last_commit_summary="Second change",
        last_commit_author="Kenning Test",
        last_commit_time=ts(ago(2)),
        dirty=False,
    )


def test_inspect_repo_without_commits(tmp_path):
    repo = make_repo(tmp_path)
    write(repo, "new.md", "not committed yet")
    info = inspect_repo(repo)
    assert info.branch == "main"
    assert info.head_sha is None
    assert info.last_commit_time is None
    assert info.last_commit_summary == info.last_commit_author == ""
    assert info.dirty is False  # untracked files don't make a repo dirty


def test_inspect_repo_from_subfolder_returns_top_level_root(tmp_path):
    repo = make_repo(tmp_path)
    commit(repo, {"docs/deep/x.md": "x"}, ago(1))
    assert inspect_repo(repo / "docs" / "deep").root == str(repo)
    assert is_git_repo(repo / "docs")


def test_inspect_repo_dirty_and_detached(tmp_path):
    repo = make_repo(tmp_path)
    first = commit(repo, {"a.md": "1"}, ago(3))
    commit(repo, {"a.md": "2"}, ago(1))
    write(repo, "a.md", "edited")
    assert inspect_repo(repo).dirty is True
    git(repo, "checkout", "-q", "-f", first)
    info = inspect_repo(repo)
    assert info.branch == f"detached at {first[:7]}"
    assert info.head_sha == first
    assert info.dirty is False


@pytest.mark.parametrize("kind", ["plain-folder", "missing", "file", "bare", "dot-git"])
def test_not_a_repository_raises_source_error(tmp_path, kind):
    target = _non_repo_path(tmp_path, kind)
    with pytest.raises(SourceError, match="is not a git repository"):
        inspect_repo(target)
    assert is_git_repo(target) is False


def _non_repo_path(tmp_path: Path, kind: str) -> Path:
    if kind == "plain-folder":
        (tmp_path / "plain").mkdir()
        return tmp_path / "plain"
    if kind == "missing":
        return tmp_path / "nowhere"
    if kind == "file":
        repo = make_repo(tmp_path)
        commit(repo, {"f.md": "x"}, ago(1))
        return repo / "f.md"
    if kind == "bare":
        git(tmp_path, "init", "-q", "--bare", "bare.git")
        return tmp_path / "bare.git"
    repo = make_repo(tmp_path)
    return repo / ".git" / "objects"


def test_broken_repository_raises_source_error(tmp_path):
    repo = make_repo(tmp_path)
    commit(repo, {"a.md": "1"}, ago(1))
    shutil.rmtree(repo / ".git" / "objects")
    (repo / ".git" / "objects").mkdir()
    with pytest.raises(SourceError, match="git failed in|cannot read"):
        path_commit_times(repo)


# ------------------------------------------------------------------ list_files


def test_list_files_is_exactly_gits_view(tmp_path):
    repo = make_repo(tmp_path)
    commit(
        repo,
        {
            ".gitignore": "*.log\nbuild/\n",
            "README.md": "r",
            "src/pkg/mod.py": "m",
            "gone.md": "soon deleted from the work tree",
        },
        ago(5),
    )
    write(repo, "untracked.md", "u")
    write(repo, "notes/deep/er/n.md", "n")
    write(repo, "debug.log", "ignored")
    write(repo, "build/out.txt", "ignored dir")
    write(repo, "staged.md", "s")
    git(repo, "add", "staged.md")
    os.remove(repo / "gone.md")

    files = list_files(repo)
    assert files == sorted(git_view(repo))
    assert set(files) == {
        ".gitignore",
        "README.md",
        "src/pkg/mod.py",
        "untracked.md",
        "notes/deep/er/n.md",
        "staged.md",
    }


def test_list_files_keeps_tracked_files_that_match_gitignore(tmp_path):
    repo = make_repo(tmp_path)
    commit(repo, {"keep.log": "x"}, ago(2))
    commit(repo, {".gitignore": "*.log\n"}, ago(1))
    assert list_files(repo) == [".gitignore", "keep.log"]


def test_list_files_odd_names(tmp_path):
    repo = make_repo(tmp_path)
    names = [
        "with space.md",
        'quote".md',
        "it's.md",
        "new\nline.md",
        "tab\there.md",
        "ünïcødé/日本.md",
        "back\\slash.md",
        "-dash.md",
        "*star?.md",
    ]
    commit(repo, {n: n for n in names[:4]}, ago(3))
    for n in names[4:]:
        write(repo, n, n)
    assert list_files(repo) == sorted(names)
    assert set(list_files(repo)) == git_view(repo)


@pytest.mark.skipif(sys.platform != "linux", reason="non-UTF-8 names need a byte-path filesystem")
def test_list_files_non_utf8_names_round_trip(tmp_path):
    repo = make_repo(tmp_path)
    raw = b"caf\xe9.md"  # Latin-1, invalid UTF-8
    commit(repo, {os.fsdecode(raw): "tracked"}, ago(1))
    write(repo, b"na\xefve.txt", "untracked")
    files = list_files(repo)
    assert sorted(os.fsencode(f) for f in files) == [b"caf\xe9.md", b"na\xefve.txt"]
    for rel in files:  # surrogate-escaped names still open
        assert (repo / rel).read_text() in {"tracked", "untracked"}


def test_list_files_leaves_out_submodules_nested_repos_and_sparse_entries(tmp_path):
    repo = make_repo(tmp_path)
    other = make_repo(tmp_path, "other")
    sub_sha = commit(other, {"x.md": "x"}, ago(2))
    commit(repo, {"a.md": "a", "hidden.md": "h"}, ago(1))
    # A gitlink entry is what `git submodule add` records in the index.
    git(repo, "update-index", "--add", "--cacheinfo", f"160000,{sub_sha},libs/sub")
    nested = make_repo(repo, "nested")
    commit(nested, {"inner.md": "i"}, ago(1))
    git(repo, "update-index", "--skip-worktree", "hidden.md")
    os.remove(repo / "hidden.md")
    assert list_files(repo) == ["a.md"]


def test_list_files_from_subfolder_is_repo_relative(tmp_path):
    repo = make_repo(tmp_path)
    commit(repo, {"a/b.md": "b", "c.md": "c"}, ago(1))
    assert list_files(repo / "a") == ["a/b.md", "c.md"]


def test_list_files_on_empty_repo(tmp_path):
    repo = make_repo(tmp_path)
    assert list_files(repo) == []
    write(repo, "first.md", "x")
    assert list_files(repo) == ["first.md"]


_name_char = st.sampled_from(list("abcXYZ019 _-.'\"\\()[]!@#$%&+=,;é漢\n\t"))
_name = st.text(_name_char, min_size=1, max_size=12).filter(
    lambda s: s not in {".", ".."} and s.strip() == s and not s.startswith(".git")
)


_rel_path = st.lists(_name, min_size=1, max_size=3).map("/".join)


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(names=st.sets(_rel_path, min_size=1, max_size=8))
def test_list_files_matches_git_for_generated_names(tmp_path_factory, names):
    repo = make_repo(tmp_path_factory.mktemp("h"))
    paths = _without_dir_file_clashes(names)
    half = sorted(paths)[: len(paths) // 2]
    if half:
        commit(repo, {p: "t" for p in half}, ago(1))
    for p in paths - set(half):
        write(repo, p, "u")
    assert list_files(repo) == sorted(paths) == sorted(git_view(repo))


def _without_dir_file_clashes(names: set[str]) -> set[str]:
    # "a" and "a/b" cannot both be files; keep the deeper one.
    dirs = {"/".join(n.split("/")[:i]) for n in names for i in range(1, n.count("/") + 1)}
    return {n for n in names if n not in dirs}


# ----------------------------------------------------------- path_commit_times


def test_path_commit_times_first_and_last(tmp_path):
    repo = make_repo(tmp_path)
    commit(repo, {"a.md": "1", "b.md": "1"}, ago(100))
    commit(repo, {"a.md": "2"}, ago(50))
    commit(repo, {"a.md": "3", "c d.md": "new"}, ago(10))
    commit(repo, {"b.md": None}, ago(5), "delete b")
    times = path_commit_times(repo)
    assert times == {
        "a.md": (ts(ago(100)), ts(ago(10))),
        "b.md": (ts(ago(100)), ts(ago(5))),  # deleted: last time is the deletion
        "c d.md": (ts(ago(10)), ts(ago(10))),
    }


def test_path_commit_times_survive_non_monotonic_dates(tmp_path):
    repo = make_repo(tmp_path)
    commit(repo, {"a.md": "1"}, ago(10))
    commit(repo, {"a.md": "2"}, ago(40))  # committed later, dated earlier (skewed clock)
    commit(repo, {"a.md": "3"}, ago(20))
    assert path_commit_times(repo)["a.md"] == (ts(ago(40)), ts(ago(10)))


def test_path_commit_times_rename_is_delete_plus_add(tmp_path):
    repo = make_repo(tmp_path)
    commit(repo, {"old.md": "same text\n" * 20}, ago(30))
    commit(repo, {"old.md": None, "new.md": "same text\n" * 20}, ago(3), "rename")
    times = path_commit_times(repo)
    assert times["old.md"] == (ts(ago(30)), ts(ago(3)))
    assert times["new.md"] == (ts(ago(3)), ts(ago(3)))


def test_path_commit_times_odd_names_and_merges(tmp_path):
    repo = make_repo(tmp_path)
    commit(repo, {"base.md": "b"}, ago(9))
    git(repo, "checkout", "-q", "-b", "side")
    commit(repo, {"new\nline.md": "n", "\nlead.md": "l"}, ago(8))
    git(repo, "checkout", "-q", "main")
    commit(repo, {"main.md": "m"}, ago(7))
    git(
        repo,
        "merge",
        "-q",
        "--no-ff",
        "-m",
        "merge",
        "side",
        env={"GIT_AUTHOR_DATE": f"@{int(ts(ago(6)))} +0000", "GIT_COMMITTER_DATE": f"@{int(ts(ago(6)))} +0000"},
    )
    times = path_commit_times(repo)
    assert times["new\nline.md"] == (ts(ago(8)), ts(ago(8)))
    assert times["\nlead.md"] == (ts(ago(8)), ts(ago(8)))
    assert set(times) == {"base.md", "new\nline.md", "\nlead.md", "main.md"}


def test_history_of_empty_repo_is_empty(tmp_path):
    repo = make_repo(tmp_path)
    assert path_commit_times(repo) == {}
    assert recent_paths(repo, now=ts(NOW)) == {}


# ---------------------------------------------------------------- recent_paths


def test_recent_paths_window(tmp_path):
    repo = make_repo(tmp_path)
    commit(repo, {"old.md": "o", "both.md": "1"}, ago(200))
    commit(repo, {"recent.md": "r"}, ago(3))
    commit(repo, {"both.md": "2"}, ago(1))
    commit(repo, {"future.md": "f"}, NOW + timedelta(days=2))
    recent = recent_paths(repo, days=30, now=ts(NOW))
    assert recent == {"recent.md": ts(ago(3)), "both.md": ts(ago(1))}


def test_recent_paths_days_and_now_are_honoured(tmp_path):
    repo = make_repo(tmp_path)
    commit(repo, {"a.md": "1"}, ago(200))
    commit(repo, {"b.md": "1"}, ago(3))
    assert recent_paths(repo, days=2, now=ts(NOW)) == {}
    assert recent_paths(repo, days=365, now=ts(NOW)) == {"a.md": ts(ago(200)), "b.md": ts(ago(3))}
    # Seen from 190 days ago, only a.md had changed recently.
    assert recent_paths(repo, days=30, now=ts(ago(190))) == {"a.md": ts(ago(200))}


def test_recent_paths_default_now_uses_the_clock(tmp_path):
    repo = make_repo(tmp_path)
    today = datetime.now(timezone.utc)
    commit(repo, {"stale.md": "s"}, today - timedelta(days=90))
    commit(repo, {"fresh.md": "f"}, today - timedelta(days=1))
    assert set(recent_paths(repo)) == {"fresh.md"}


def test_inspect_broken_repository_raises_source_error(tmp_path):
    repo = make_repo(tmp_path)
    commit(repo, {"a.md": "1"}, ago(1))
    shutil.rmtree(repo / ".git" / "objects")
    (repo / ".git" / "objects").mkdir()
    with pytest.raises(SourceError, match=str(repo)):
        inspect_repo(repo)
