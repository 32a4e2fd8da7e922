"""The one door to GitPython: opening repositories and running git commands.

Every failure of git is turned into a SourceError whose message can be shown to the
user as is, so callers never see GitPython's exception types.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

# GitPython probes for the git executable at import time and raises ImportError when
# it is missing.  Folder sources must keep working on a machine without git, so ask
# it to stay quiet; the first git command then fails with GitCommandNotFound, which
# run_git reports as a SourceError.
os.environ.setdefault("GIT_PYTHON_REFRESH", "quiet")

import git  # noqa: E402  (must follow the environment tweak above)
from git.exc import (  # noqa: E402
    GitCommandError,
    GitCommandNotFound,
    InvalidGitRepositoryError,
    NoSuchPathError,
)
from git.exc import (
    ODBError as ODBError,  # re-exported: gitinfo.repo catches it from here
)

from kenning.core import SourceError  # noqa: E402

GITLINK_MODE = "160000"  # index mode of a submodule entry


def _not_a_repo(path: str, why: str) -> SourceError:
    return SourceError(f"{path} is not a git repository: {why}")


def _construct(path: str) -> git.Repo:
    """Build the GitPython Repo for `path`, or explain why it is not one."""
    target = Path(path).expanduser()
    if not target.exists():
        raise _not_a_repo(path, "the folder does not exist")
    if not target.is_dir():
        raise _not_a_repo(path, "it is a file, not a folder")
    try:
        # search_parent_directories: a subfolder of a work tree belongs to that repo.
        return git.Repo(str(target), search_parent_directories=True)
    except (InvalidGitRepositoryError, NoSuchPathError):
        raise _not_a_repo(path, "no .git folder here or in any parent folder") from None
    except (OSError, ValueError) as exc:  # unreadable .git, corrupt config, ...
        raise _not_a_repo(path, str(exc)) from None


def _check_work_tree(repo: git.Repo, path: str) -> None:
    """Reject bare repositories and paths inside the .git folder itself."""
    if repo.bare or repo.working_tree_dir is None:
        raise _not_a_repo(path, "it is a bare repository (it has no work tree)")
    git_dir = Path(repo.git_dir).resolve()
    target = Path(path).expanduser().resolve()
    if target == git_dir or git_dir in target.parents:
        raise _not_a_repo(path, "it is inside the .git folder, not the work tree")


@contextmanager
def open_repo(path: str | os.PathLike[str]) -> Iterator[git.Repo]:
    """Open the repository whose work tree holds `path`, and close it afterwards.

    Closing matters: GitPython keeps `git cat-file` helper processes alive per Repo.
    """
    path = os.fspath(path)
    repo = _construct(path)
    try:
        _check_work_tree(repo, path)
        yield repo
    finally:
        repo.close()


def work_tree(repo: git.Repo) -> str:
    # _check_work_tree guarantees a work tree; the assert documents it for readers.
    assert repo.working_tree_dir is not None
    return os.fspath(repo.working_tree_dir)


def git_failure(repo_root: str, exc: Exception) -> SourceError:
    """A user-facing message for a git command that failed."""
    if isinstance(exc, GitCommandNotFound):
        return SourceError("git is not installed or not on PATH; git sources need it")
    if isinstance(exc, GitCommandError):
        detail = (exc.stderr or "").strip() or f"exit status {exc.status}"
        detail = detail.removeprefix("stderr:").strip().strip("'").strip()
        return SourceError(f"git failed in {repo_root}: {detail}")
    return SourceError(f"git failed in {repo_root}: {exc}")


def _command(repo: git.Repo, args: tuple[str, ...]):
    # Going through repo.git.<name> (not execute) honours GIT_PYTHON_GIT_EXECUTABLE
    # and the repo's persistent git options; GitPython turns "_" back into "-".
    return getattr(repo.git, args[0].replace("-", "_"))


def run_git_bytes(repo: git.Repo, *args: str) -> bytes:
    """Run `git <args>` in the work tree and return raw stdout (paths stay bytes)."""
    try:
        out = _command(repo, args)(*args[1:], stdout_as_string=False, strip_newline_in_stdout=False)
    except (GitCommandError, GitCommandNotFound, OSError) as exc:
        raise git_failure(work_tree(repo), exc) from None
    assert isinstance(out, bytes)
    return out


def stream_git(repo: git.Repo, *args: str, block: int = 1 << 16) -> Iterator[bytes]:
    """Yield `git <args>` stdout in blocks, so huge histories never sit in memory twice."""
    try:
        proc = _command(repo, args)(*args[1:], as_process=True)
    except (GitCommandNotFound, OSError) as exc:
        raise git_failure(work_tree(repo), exc) from None
    try:
        while chunk := proc.stdout.read(block):
            yield chunk
        proc.wait()  # raises GitCommandError with git's stderr on a non-zero exit
    except GitCommandError as exc:
        raise git_failure(work_tree(repo), exc) from None
    finally:
        # AutoInterrupt kills git if we stop early (exception or abandoned generator).
        del proc


def head_sha(repo: git.Repo) -> str | None:
    """HEAD's commit id, or None on an unborn branch (a repository without commits).

    GitPython's head.is_valid() also says False when HEAD names a commit whose objects
    are missing; that repository is broken, not empty, so ask git to resolve the name
    only and let the later read fail loudly.
    """
    try:
        status, out, _ = repo.git.rev_parse("--verify", "-q", "HEAD", with_extended_output=True, with_exceptions=False)
    except (GitCommandNotFound, OSError) as exc:
        raise git_failure(work_tree(repo), exc) from None
    return out.strip() if status == 0 and out.strip() else None


def split_nul(blocks: Iterator[bytes]) -> Iterator[bytes]:
    """Split a stream of blocks on NUL bytes; the trailing empty record is dropped."""
    rest = b""
    for chunk in blocks:
        parts = (rest + chunk).split(b"\0")
        rest = parts.pop()
        yield from parts
    if rest:
        yield rest
