"""The one door to git: every git command Kenning runs goes through `GitRepo.run`.

A linked repository may be a stranger's (a clone, an unpacked archive), and git lets a
repository's own config and attributes name programs to run: fsmonitor hooks, filter
drivers, external diff and textconv, pagers, hooks, credential helpers, ssh commands,
transports for lazy fetches, signature checkers.  Kenning never wants any of them, so
every command runs with

- an environment rebuilt without the caller's GIT_* variables (they could point git at
  another repository or name programs) and with system config and attributes off;
- command-scope overrides, which beat every config file, switching each of those
  mechanisms off; they are passed as GIT_CONFIG_KEY_n / GIT_CONFIG_VALUE_n pairs, not
  `-c key=value`, because `-c` splits at the first `=` and a driver named `x=y` would
  escape being blanked;
- every filter and diff driver the configs define blanked by name.

git never reads an ignore file for Kenning (gitinfo.files lists untracked files
without them and Kenning obeys them itself), and before git runs in a repository its
config files and every file they include are checked to be regular files: a FIFO there
would stall every git command.

Every failure of git is turned into a SourceError whose message can be shown as is.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import field
from pathlib import Path

from kenning.core import SourceError
from kenning.core.records import Record

GITLINK_MODE = "160000"  # index mode of a submodule entry
# The last bound on a git command that hangs (a stuck network file system); history is
# streamed and not bounded here.
GIT_TIMEOUT_SECONDS = 300

# Config that beats the repository's own (command scope is read last).
_SAFE_CONFIG = (
    ("core.fsmonitor", "false"),  # fsmonitor runs a hook program on every index read
    ("core.hooksPath", os.devnull),  # post-index-change and every other hook: nowhere
    ("core.pager", "cat"),
    ("core.sshCommand", "false"),
    ("core.askPass", ""),
    ("core.alternateRefsCommand", ""),
    ("core.editor", "false"),
    ("credential.helper", ""),  # an empty value clears the list of helpers
    ("diff.external", ""),
    ("protocol.allow", "never"),  # no transport at all: no lazy fetch, no ext:: commands
    ("log.showSignature", "false"),  # a signature check runs gpg.program
    ("gpg.program", "false"),
    ("gpg.ssh.program", "false"),
    ("gpg.x509.program", "false"),
    ("uploadpack.packObjectsHook", ""),
    ("core.untrackedCache", "false"),
    # Files a repository's config can name, which git would open (and wait on, were one
    # a FIFO): none is needed to list files or read commit times.
    ("core.excludesFile", os.devnull),
    ("core.attributesFile", os.devnull),
    ("log.mailmap", "false"),  # `git log` reads .mailmap (a FIFO there stalled it)
    ("mailmap.file", ""),
    ("mailmap.blob", ""),
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


Override = tuple[str, str]  # (config key, value): a key may hold "=" in its subsection


def git_environment(extra_config: tuple[Override, ...] = ()) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_") and k not in _DROPPED_ENV}
    env.update(_SAFE_ENV)
    overrides = (*_SAFE_CONFIG, *extra_config)
    env["GIT_CONFIG_COUNT"] = str(len(overrides))
    for n, (key, value) in enumerate(overrides):
        env[f"GIT_CONFIG_KEY_{n}"] = key
        env[f"GIT_CONFIG_VALUE_{n}"] = value
    return env


_BASE_COMMAND = ("git", "--no-pager", "--literal-pathspecs")


def _run(cwd: str, args: list[str], extra_config: tuple[Override, ...] = ()) -> subprocess.CompletedProcess[bytes]:
    try:
        return subprocess.run(
            [*_BASE_COMMAND, *args],
            cwd=cwd,
            env=git_environment(extra_config),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            check=False,
            timeout=GIT_TIMEOUT_SECONDS,
        )
    except subprocess.TimeoutExpired:
        raise SourceError(
            f"git {args[0]} in {cwd} took longer than {GIT_TIMEOUT_SECONDS} s and was stopped "
            "(a stuck network drive or a damaged repository can cause this)"
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


class GitRepo(Record):
    """An opened work tree: the folder asked for, the top of its work tree, its .git."""

    path: str
    root: str
    git_dir: str
    common_dir: str = ""  # where info/exclude lives (the main .git of a linked work tree)
    _driver_overrides: tuple[Override, ...] | None = field(default=None, repr=False)

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

    def _drivers_off(self) -> tuple[Override, ...]:
        """Overrides blanking every filter, diff and merge driver the configs define.

        Reading config runs nothing (include.path only names more files to read, and
        those were checked to be regular files).  Names are kept byte for byte
        (surrogate escapes), so an undecodable name is blanked too.
        """
        if self._driver_overrides is None:
            self._driver_overrides = driver_overrides(
                _run(self.root, ["config", "-z", "--name-only", "--get-regexp", r"^(filter|diff|merge)\."]).stdout
            )
        return self._driver_overrides


def driver_overrides(names_output: bytes) -> tuple[Override, ...]:
    """(key, value) pairs switching off each driver `git config -z --name-only` listed."""
    overrides: list[Override] = []
    for full in sorted({n for n in names_output.decode("utf-8", "surrogateescape").split("\0") if n}):
        # section.subsection.key: the subsection (the driver's name) may hold dots and "=".
        section, _, rest = full.partition(".")
        name, _, _key = rest.rpartition(".")
        if not name:
            continue
        section = section.lower()
        overrides += [(f"{section}.{name}.{key}", "") for key in _DRIVER_KEYS.get(section, ())]
        if section == "filter":
            overrides.append((f"filter.{name}.required", "false"))
    return tuple(overrides)


def _discover(path: str) -> GitRepo:
    target = Path(path).expanduser()
    if not target.exists():
        raise _not_a_repo(path, "the folder does not exist")
    if not target.is_dir():
        raise _not_a_repo(path, "it is a file, not a folder")
    from kenning.gitinfo.configfiles import check_config_files

    check_config_files(str(target))  # before git reads them: a FIFO would stall it
    done = _run(
        str(target),
        ["rev-parse", "--is-bare-repository", "--is-inside-git-dir", "--absolute-git-dir", "--git-common-dir"],
    )
    if done.returncode != 0:
        why = _stderr_text(done.stderr)
        if "not a git repository" in why.lower():
            why = "no .git folder here or in any parent folder"
        raise _not_a_repo(path, why or f"git exit status {done.returncode}")
    lines = done.stdout.decode("utf-8", "surrogateescape").splitlines() + ["", "", "", ""]
    bare, inside_git_dir, git_dir, common_dir = lines[:4]
    if bare == "true":
        raise _not_a_repo(path, "it is a bare repository (it has no work tree)")
    if inside_git_dir == "true":
        raise _not_a_repo(path, "it is inside the .git folder, not the work tree")
    top = _run(str(target), ["rev-parse", "--show-toplevel"])
    if top.returncode != 0 or not top.stdout.strip():
        raise _not_a_repo(path, _stderr_text(top.stderr) or "it has no work tree")
    root = top.stdout.decode("utf-8", "surrogateescape").rstrip("\n")
    common = os.path.normpath(os.path.join(str(target), common_dir)) if common_dir else git_dir
    return GitRepo(path=str(target), root=root, git_dir=git_dir, common_dir=common)


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
                [*_BASE_COMMAND, *args],
                cwd=repo.root,
                env=git_environment(repo._drivers_off()),
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
