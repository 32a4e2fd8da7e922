"""Checking, before git runs, that every config file it will read is a regular file.

git reads a repository's `.git/config` and follows its `include.path` and
`includeIf.*.path` entries on every command; a FIFO named there makes every command
wait forever (the watcher too), and no option turns includes off for other commands.
So Kenning finds the repository's config files itself (the `.git` folder or gitfile
above the folder, the common folder of a linked work tree, the user's own global
config) and follows their includes with `git config --no-includes --file`, run where
no repository is found, before any other git command.  Anything that is not a regular
file is refused with a message naming it.
"""

from __future__ import annotations

import os
import stat
import subprocess
import tempfile
from pathlib import Path

from kenning.core import SourceError

MAX_INCLUDE_DEPTH = 10  # git's own limit
_INCLUDE_KEYS = r"^include(if\..*)?\.path$"


def check_config_files(target: str) -> None:
    """SourceError when a config file git would read for `target` is not a regular file."""
    for config in _config_files(target):
        _check(config, target, depth=0, seen=set())


def _config_files(target: str) -> list[str]:
    files = [os.path.join(home, name) for home, name in _global_locations()]
    git_dir = _git_dir_of(target)
    if git_dir is not None:
        files += [os.path.join(git_dir, "config"), os.path.join(git_dir, "config.worktree")]
        common = _read_small(os.path.join(git_dir, "commondir"))
        if common:
            common_dir = os.path.normpath(os.path.join(git_dir, common.strip()))
            files += [os.path.join(common_dir, "config"), os.path.join(common_dir, "config.worktree")]
    return files


def _global_locations() -> list[tuple[str, str]]:
    home = os.path.expanduser("~")
    xdg = os.environ.get("XDG_CONFIG_HOME") or os.path.join(home, ".config")
    return [(home, ".gitconfig"), (os.path.join(xdg, "git"), "config")]


def _git_dir_of(target: str) -> str | None:
    """The git folder git would find for target (a `.git` folder, or the folder a
    `.git` file names), looking upwards as git does; None outside any repository."""
    folder = Path(os.path.abspath(target))
    for candidate in (folder, *folder.parents):
        dot_git = candidate / ".git"
        try:
            info = os.stat(dot_git)
        except OSError:
            continue
        if stat.S_ISDIR(info.st_mode):
            return str(dot_git)
        if stat.S_ISREG(info.st_mode):
            text = _read_small(str(dot_git)) or ""
            if text.startswith("gitdir:"):
                return os.path.normpath(os.path.join(str(candidate), text[len("gitdir:") :].strip()))
        return None  # something else named .git: git will say what it thinks of it
    return None


def _read_small(path: str, limit: int = 1 << 16) -> str | None:
    """A small file's text, only if it is a regular file (never waits on a FIFO)."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        with os.fdopen(os.dup(fd), "rb") as handle:
            return handle.read(limit).decode("utf-8", "surrogateescape")
    finally:
        os.close(fd)


def _check(path: str, target: str, *, depth: int, seen: set[str]) -> None:
    try:
        info = os.stat(path)  # git follows links to config files
    except OSError:
        return  # a missing config or include is no problem for git either
    if not stat.S_ISREG(info.st_mode):
        raise SourceError(
            f"{target}: git would read {path}, which is not a regular file (a named pipe or a device); "
            "every git command would wait on it. Fix or remove that file, or the include naming it."
        )
    real = os.path.realpath(path)
    if real in seen or depth >= MAX_INCLUDE_DEPTH:
        return
    seen.add(real)
    text = _read_small(path, limit=1 << 24)
    if text is not None and "include" not in text.lower():
        return  # no include at all: no need to ask git
    for include in _includes(path):
        _check(include, target, depth=depth + 1, seen=seen)


def _includes(path: str) -> list[str]:
    """The files one config file includes (every condition counted: all may be read)."""
    from kenning.gitinfo._git import GIT_TIMEOUT_SECONDS, git_environment

    with tempfile.TemporaryDirectory(prefix="kenning-git-") as neutral:
        env = git_environment()
        env["GIT_CEILING_DIRECTORIES"] = os.path.dirname(neutral)  # no repository is found from here
        env["GIT_CONFIG_NOSYSTEM"] = "1"
        env["GIT_CONFIG_GLOBAL"] = os.devnull
        try:
            done = subprocess.run(
                ["git", "config", "--no-includes", "--file", path, "-z", "--get-regexp", _INCLUDE_KEYS],
                cwd=neutral,
                env=env,
                stdin=subprocess.DEVNULL,
                capture_output=True,
                check=False,
                timeout=GIT_TIMEOUT_SECONDS,
            )
        except (OSError, subprocess.TimeoutExpired):
            return []  # git itself will report what is wrong
    out = []
    for record in done.stdout.decode("utf-8", "surrogateescape").split("\0"):
        _key, _, value = record.partition("\n")
        if value:
            out.append(_include_path(value, os.path.dirname(path)))
    return out


def _include_path(value: str, folder: str) -> str:
    """Where git looks for an include: `~/` is the home folder, a relative path is
    relative to the including file's folder."""
    if value.startswith("~"):
        return os.path.expanduser(value)
    return value if os.path.isabs(value) else os.path.normpath(os.path.join(folder, value))
