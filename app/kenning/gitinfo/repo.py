"""Repository detection and the summary shown when a user links a repository."""

from __future__ import annotations

import os
from dataclasses import dataclass

import git

from kenning.core import SourceError
from kenning.gitinfo._git import (
    GitCommandError,
    GitCommandNotFound,
    ODBError,
    git_failure,
    head_sha,
    open_repo,
    work_tree,
)


@dataclass(frozen=True)
class RepoInfo:
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
        root = work_tree(repo)
        try:
            return _describe(repo, root)
        except (GitCommandError, GitCommandNotFound) as exc:
            raise git_failure(root, exc) from None
        except (ValueError, OSError, ODBError) as exc:  # corrupt refs or objects
            raise SourceError(f"cannot read the git repository {root}: {exc}") from None


def _describe(repo: git.Repo, root: str) -> RepoInfo:
    commit = repo.head.commit if head_sha(repo) else None
    return RepoInfo(
        root=root,
        branch=_branch_label(repo),
        head_sha=commit.hexsha if commit else None,
        last_commit_summary=_text(commit.summary) if commit else "",
        last_commit_author=(commit.author.name or "") if commit else "",
        last_commit_time=float(commit.committed_date) if commit else None,
        dirty=repo.is_dirty(index=True, working_tree=True, untracked_files=False),
    )


def _branch_label(repo: git.Repo) -> str:
    head = repo.head
    if head.is_detached:
        return f"detached at {head.commit.hexsha[:7]}"
    # Works for an unborn branch too: HEAD names the branch before it has a commit.
    return head.reference.name


def _text(value: str | bytes) -> str:
    # GitPython hands back bytes when a message is not valid in its declared encoding.
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return value
