"""Repository detection and the summary shown when a user links a repository."""

from __future__ import annotations

import os

from kenning.core import SourceError
from kenning.core.records import Record
from kenning.gitinfo._git import GitRepo, head_sha, open_repo, work_tree


class RepoInfo(Record, frozen=True):
    """What the "Link git repository…" picker shows about a repository.

    root is always the top of the work tree, even when the user picked a subfolder:
    git's file list and history are per repository, so a git source is the whole repo.
    """

    root: str
    branch: str  # branch name, or "detached at <sha7>"
    head_sha: str | None  # None in a repository without commits
    last_commit_summary: str
    last_commit_author: str
    last_commit_time: float | None  # committer time, epoch seconds, like the history API
    dirty: bool  # tracked files differ from HEAD (staged or not); untracked files don't count


def is_git_repo(path: str | os.PathLike[str]) -> bool:
    """True when `path` is a folder inside a git work tree (bare repositories are not)."""
    try:
        with open_repo(path):
            return True
    except SourceError:
        return False


def inspect_repo(path: str | os.PathLike[str]) -> RepoInfo:
    """Describe the repository whose work tree holds `path`.

    Raises SourceError when `path` is missing, is not in a git work tree, is a bare
    repository, or git cannot read it.
    """
    with open_repo(path) as repo:
        return _describe(repo, work_tree(repo))


def _describe(repo: GitRepo, root: str) -> RepoInfo:
    sha = head_sha(repo)
    summary = author = ""
    when = None
    if sha is not None:
        # One record, fields split by NUL (a subject or a name never holds one).
        raw = repo.run("log", "-1", "--no-show-signature", "--no-color", "--format=%s%x00%an%x00%ct", sha, "--")
        fields = raw.rstrip(b"\n").split(b"\0")
        if len(fields) != 3:
            raise SourceError(f"cannot read the git repository {root}: unexpected log output")
        summary, author = _text(fields[0]), _text(fields[1])
        when = float(fields[2])
    return RepoInfo(
        root=root,
        branch=_branch_label(repo, sha),
        head_sha=sha,
        last_commit_summary=summary,
        last_commit_author=author,
        last_commit_time=when,
        dirty=_dirty(repo),
    )


def _branch_label(repo: GitRepo, sha: str | None) -> str:
    name = repo.try_run("symbolic-ref", "-q", "HEAD")
    if name:
        # Works for an unborn branch too: HEAD names the branch before it has a commit.
        return _text(name.strip()).removeprefix("refs/heads/")
    return f"detached at {(sha or '')[:7]}"


def _dirty(repo: GitRepo) -> bool:
    """Tracked files differ from HEAD (staged or not); untracked files don't count.

    `status` refreshes file stats in memory only (GIT_OPTIONAL_LOCKS=0 keeps it from
    rewriting the index); submodules are not entered, so no other repository's config
    is read.
    """
    out = repo.run("status", "--porcelain=v1", "-z", "--untracked-files=no", "--ignore-submodules=all", "--no-renames")
    return bool(out.strip(b"\0"))


def _text(value: bytes) -> str:
    return value.decode("utf-8", "replace")
