"""Build real git repositories with back-dated commits, for tests.

Uses the git command line directly (not kenning.gitinfo) so tests check Kenning
against git itself.  Works on machines without a git identity or global config.
"""

from __future__ import annotations

import os
import subprocess
from datetime import datetime, timezone
from pathlib import Path

_IDENTITY = {"user.name": "Kenning Test", "user.email": "test@kenning.invalid"}


def git_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """An environment where the user's own git config cannot change the outcome."""
    env = dict(os.environ)
    env.update(
        GIT_CONFIG_NOSYSTEM="1",
        GIT_CONFIG_GLOBAL=os.devnull,
        GIT_LITERAL_PATHSPECS="1",  # odd file names are names, not patterns
        LC_ALL="C",
    )
    env.update(extra or {})
    return env


def git(repo_dir: Path | str, *args: str, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(
        ["git", *args],
        cwd=repo_dir,
        env=git_env(env),
        check=True,
        capture_output=True,
    )
    return done.stdout.decode("utf-8", "surrogateescape")


def make_repo(tmp_path: Path | str, name: str = "repo", branch: str = "main") -> Path:
    """An empty repository (no commits) at tmp_path/name, with a local identity."""
    repo_dir = Path(tmp_path) / name
    repo_dir.mkdir(parents=True)
    git(repo_dir, "init", "-q", "-b", branch)
    for key, value in _IDENTITY.items():
        git(repo_dir, "config", key, value)
    git(repo_dir, "config", "commit.gpgsign", "false")
    return repo_dir


def write(repo_dir: Path | str, rel: str | bytes, text: str | None) -> None:
    """Create/overwrite (text) or delete (None) one file; bytes names for non-UTF-8."""
    base = os.fsencode(repo_dir)
    path = os.path.join(base, os.fsencode(rel))
    if text is None:
        os.remove(path)
        return
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(text)


def commit(
    repo_dir: Path | str,
    files: dict[str, str | None],
    when: datetime,
    message: str = "change",
) -> str:
    """Apply `files` (None deletes), stage exactly them and commit at `when`.

    Author and committer dates are both set, so committer-time APIs see `when`.
    Returns the new commit's sha.
    """
    for rel, text in files.items():
        write(repo_dir, rel, text)
    if files:
        git(repo_dir, "add", "-A", "--", *files)
    stamp = _git_date(when)
    dates = {"GIT_AUTHOR_DATE": stamp, "GIT_COMMITTER_DATE": stamp}
    git(repo_dir, "commit", "-q", "--allow-empty", "-m", message, env=dates)
    return git(repo_dir, "rev-parse", "HEAD").strip()


def _git_date(when: datetime) -> str:
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    return f"@{int(when.timestamp())} +0000"
