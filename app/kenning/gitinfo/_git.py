"""The one door to git: every git command Kenning runs goes through `GitRepo.run`.

A linked repository may be a stranger's (a clone, an unpacked archive), and git lets a
repository's own config and attributes name programs to run: fsmonitor hooks, filter
drivers, external diff and textconv, pagers, hooks, credential helpers, ssh commands,
transports for lazy fetches, signature checkers.  Kenning never wants any of them, so
every command runs with

- an environment rebuilt without the caller's GIT_* variables (they could point git at
  another repository or name programs) and with system config and attributes off;
- `-c` overrides, which beat every config file, switching each of those mechanisms off;
- every filter and diff driver the configs define blanked by name.

Every failure of git is turned into a SourceError whose message can be shown as is.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from kenning.core import SourceError

GITLINK_MODE = "160000"  # index mode of a submodule entry
# The last bound on a git command that hangs (costly ignore patterns in untracked
# folders, a stuck network file system); history is streamed and not bounded here.
GIT_TIMEOUT_SECONDS = 300

# Config that beats the repository's own (command-line -c is read last).
_SAFE_CONFIG = (
    "core.fsmonitor=false",  # fsmonitor runs a hook program on every index read
    f"core.hooksPath={os.devnull}",  # post-index-change and every other hook: nowhere
    "core.pager=cat",
    "core.sshCommand=false",
    "core.askPass=",
    "core.alternateRefsCommand=",
    "core.editor=false",
    "credential.helper=",  # an empty value clears the list of helpers
    "diff.external=",
    "protocol.allow=never",  # no transport at all: no lazy fetch, no ext:: commands
    "log.showSignature=false",  # a signature check runs gpg.program
    "gpg.program=false",
    "gpg.ssh.program=false",
    "gpg.x509.program=false",
    "uploadpack.packObjectsHook=",
    "core.untrackedCache=false",
)

# The caller's GIT_* variables are dropped; these replace them.
_SAFE_ENV = {
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_ATTR_NOSYSTEM": "1",
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_PAGER": "cat",
    "PAGER": "cat",
    "GIT_OPTIONAL_LOCKS": "0",  # read-only commands never rewrite the index
    "GIT_NO_LAZY_FETCH": "1",
    "GIT_PROTOCOL_FROM_USER": "0",
    "GIT_NO_REPLACE_OBJECTS": "1",
    "LC_ALL": "C",
    "LANGUAGE": "C",
}
_DROPPED_ENV = ("SSH_ASKPASS", "GIT_EXTERNAL_DIFF")

# Config keys under which a driver names a program; blanked for every driver name.
_DRIVER_KEYS = {
    "filter": ("clean", "smudge", "process"),
    "diff": ("command", "textconv"),
    "merge": ("driver",),
}


def git_environment() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_") and k not in _DROPPED_ENV}
    env.update(_SAFE_ENV)
    return env


def _base_command(extra_config: tuple[str, ...] = ()) -> list[str]:
    cmd = ["git", "--no-pager", "--literal-pathspecs"]
    for item in (*_SAFE_CONFIG, *extra_config):
        cmd += ["-c", item]
    return cmd


def _run(cwd: str, args: list[str], extra_config: tuple[str, ...] = ()) -> subprocess.CompletedProcess[bytes]:
    try:
        return subprocess.run(
            [*_base_command(extra_config), *args],
            cwd=cwd,
            env=git_environment(),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            check=False,
            timeout=GIT_TIMEOUT_SECONDS,
        )
    except subprocess.TimeoutExpired:
        raise SourceError(
            f"git {args[0]} in {cwd} took longer than {GIT_TIMEOUT_SECONDS} s and was stopped "
            "(a .gitignore pattern that is costly to match can cause this)"
        ) from None
    except FileNotFoundError:
        raise SourceError("git is not installed or not on PATH; git sources need it") from None
    except OSError as exc:
        raise SourceError(f"git could not be started in {cwd}: {exc}") from None


def _stderr_text(raw: bytes) -> str:
    text = raw.decode("utf-8", "replace").strip()
    return text.removeprefix("fatal: ").removeprefix("error: ")


def _not_a_repo(path: str, why: str) -> SourceError:
    return SourceError(f"{path} is not a git repository: {why}")


@dataclass
class GitRepo:
    """An opened work tree: the folder asked for, the top of its work tree, its .git."""

    path: str
    root: str
    git_dir: str
    _driver_overrides: tuple[str, ...] | None = field(default=None, repr=False)

    def run(self, *args: str) -> bytes:
        """Run `git <args>` at the top of the work tree; stdout as raw bytes (paths stay bytes)."""
        done = _run(self.root, list(args), self._drivers_off())
        if done.returncode != 0:
            detail = _stderr_text(done.stderr) or f"exit status {done.returncode}"
            raise SourceError(f"git failed in {self.root}: {detail}")
        return done.stdout

    def try_run(self, *args: str) -> bytes | None:
        """Run a query that may legitimately fail (exit status 1): stdout, or None."""
        done = _run(self.root, list(args), self._drivers_off())
        if done.returncode == 1:
            return None
        if done.returncode != 0:
            detail = _stderr_text(done.stderr) or f"exit status {done.returncode}"
            raise SourceError(f"git failed in {self.root}: {detail}")
        return done.stdout

    def _drivers_off(self) -> tuple[str, ...]:
        """`-c` items blanking every filter, diff and merge driver the configs define.

        Reading config runs nothing (include.path only names more files to read).
        """
        if self._driver_overrides is None:
            done = _run(self.root, ["config", "-z", "--name-only", "--get-regexp", r"^(filter|diff|merge)\."])
            names = {tuple(n.split(".")) for n in done.stdout.decode("utf-8", "replace").split("\0") if n}
            overrides: list[str] = []
            for parts in sorted(names):
                if len(parts) < 3:
                    continue
                section, name = parts[0].lower(), ".".join(parts[1:-1])
                overrides += [f"{section}.{name}.{key}=" for key in _DRIVER_KEYS.get(section, ())]
                if section == "filter":
                    overrides.append(f"filter.{name}.required=false")
            self._driver_overrides = tuple(overrides)
        return self._driver_overrides


def _discover(path: str) -> GitRepo:
    target = Path(path).expanduser()
    if not target.exists():
        raise _not_a_repo(path, "the folder does not exist")
    if not target.is_dir():
        raise _not_a_repo(path, "it is a file, not a folder")
    done = _run(str(target), ["rev-parse", "--is-bare-repository", "--is-inside-git-dir", "--absolute-git-dir"])
    if done.returncode != 0:
        why = _stderr_text(done.stderr)
        if "not a git repository" in why.lower():
            why = "no .git folder here or in any parent folder"
        raise _not_a_repo(path, why or f"git exit status {done.returncode}")
    bare, inside_git_dir, git_dir = (done.stdout.decode("utf-8", "surrogateescape").splitlines() + ["", "", ""])[:3]
    if bare == "true":
        raise _not_a_repo(path, "it is a bare repository (it has no work tree)")
    if inside_git_dir == "true":
        raise _not_a_repo(path, "it is inside the .git folder, not the work tree")
    top = _run(str(target), ["rev-parse", "--show-toplevel"])
    if top.returncode != 0 or not top.stdout.strip():
        raise _not_a_repo(path, _stderr_text(top.stderr) or "it has no work tree")
    root = top.stdout.decode("utf-8", "surrogateescape").rstrip("\n")
    return GitRepo(path=str(target), root=root, git_dir=git_dir)


@contextmanager
def open_repo(path: str | os.PathLike[str], *, exact_root: bool = False) -> Iterator[GitRepo]:
    """The repository whose work tree holds `path`.

    With exact_root, `path` must itself be the top of its work tree: a source linked as
    a repository whose .git was deleted must not silently become its parent repository
    (nor may a core.worktree setting move the work tree somewhere else).
    """
    path = os.fspath(path)
    repo = _discover(path)
    if exact_root and os.path.realpath(repo.root) != os.path.realpath(path):
        raise SourceError(
            f"{path} is no longer the top of a git work tree (git now finds the work tree {repo.root}); "
            "its indexed documents are kept. Restore its .git folder, or remove the source and add it again."
        )
    yield repo


def work_tree(repo: GitRepo) -> str:
    return repo.root


def stream_git(repo: GitRepo, *args: str, block: int = 1 << 16) -> Iterator[bytes]:
    """Yield `git <args>` stdout in blocks, so huge histories never sit in memory twice."""
    with tempfile.TemporaryFile() as errors:
        try:
            proc = subprocess.Popen(
                [*_base_command(repo._drivers_off()), *args],
                cwd=repo.root,
                env=git_environment(),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=errors,  # a file, so a chatty stderr can never block the stdout reader
            )
        except FileNotFoundError:
            raise SourceError("git is not installed or not on PATH; git sources need it") from None
        except OSError as exc:
            raise SourceError(f"git could not be started in {repo.path}: {exc}") from None
        assert proc.stdout is not None
        try:
            while chunk := proc.stdout.read(block):
                yield chunk
            status = proc.wait()
        finally:
            if proc.poll() is None:  # the reader stopped early: git must not linger
                proc.kill()
                proc.wait()
            proc.stdout.close()
        if status != 0:
            errors.seek(0)
            detail = _stderr_text(errors.read()) or f"exit status {status}"
            raise SourceError(f"git failed in {repo.root}: {detail}")


def head_sha(repo: GitRepo) -> str | None:
    """HEAD's commit id, or None on an unborn branch (a repository without commits).

    Only the name is resolved (not the commit read), so a repository whose objects are
    missing fails loudly later instead of looking empty.
    """
    done = _run(repo.root, ["rev-parse", "--verify", "-q", "HEAD"])
    out = done.stdout.decode("ascii", "replace").strip()
    return out if done.returncode == 0 and out else None


def split_nul(blocks: Iterator[bytes]) -> Iterator[bytes]:
    """Split a stream of blocks on NUL bytes; the trailing empty record is dropped."""
    rest = b""
    for chunk in blocks:
        parts = (rest + chunk).split(b"\0")
        rest = parts.pop()
        yield from parts
    if rest:
        yield rest
