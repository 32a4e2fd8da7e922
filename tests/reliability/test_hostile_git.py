"""A linked repository may be a stranger's: nothing its config or attributes name is
ever run, whichever git mechanism names it (issue #13, item 2 and its siblings).

Each case plants a program that would create a marker file, then links, indexes,
lists, searches and inspects the repository; the marker must never appear.  Where
plain git can be made to run the planted program, the test first shows it does, so
the case is known to be live.
"""

from __future__ import annotations

import os
import stat
import subprocess
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from gitutil import commit, git, git_env, make_repo
from kenning.gitinfo import inspect_repo, list_files, path_commit_times, recent_paths
from reliability.helpers import cli, count

NOW = datetime(2026, 1, 1, tzinfo=timezone.utc)


def _script(path: Path, marker: Path) -> Path:
    path.write_text(f"#!/bin/sh\ntouch '{marker}'\ncat\n", encoding="utf-8")
    path.chmod(0o755)
    return path


def _repo(tmp_path: Path) -> Path:
    repo = make_repo(tmp_path, "stranger")
    commit(repo, {"README.md": "# Stranger\n\nhello world\n", "docs/a.md": "alpha note\n"}, NOW - timedelta(days=3))
    commit(repo, {"docs/b.md": "beta note\n"}, NOW - timedelta(days=1))
    return repo


def _stat_dirty(repo: Path) -> None:
    """Same content, new mtime: git must re-read the file (through any clean filter)."""
    for rel in ("README.md", "docs/a.md"):
        p = repo / rel
        later = p.stat().st_mtime + 100
        os.utime(p, (later, later))


def _hooks_dir(base: Path, marker: Path) -> Path:
    hooks = base / "evil-hooks"
    hooks.mkdir()
    for name in (
        "post-index-change",
        "post-checkout",
        "pre-commit",
        "reference-transaction",
        "fsmonitor-watchman",
        "pre-auto-gc",
        "post-merge",
        "pre-push",
    ):
        _script(hooks / name, marker)
    return hooks


def _plant(case: str, repo: Path, tmp_path: Path, marker: Path) -> list[str] | None:
    """Configure `case`; return a plain-git command that runs the planted program."""
    prog = f"touch '{marker}'; cat"
    cfg = lambda *kv: git(repo, "config", *kv)  # noqa: E731
    if case == "fsmonitor":
        cfg("core.fsmonitor", f"touch '{marker}'; false")
        return ["status"]
    if case in ("filter-clean", "filter-smudge", "filter-process"):
        (repo / ".gitattributes").write_text("* filter=evil\n", encoding="utf-8")
        key = case.split("-")[1]
        cfg(f"filter.evil.{key}", prog if key != "process" else f"touch '{marker}'")
        cfg("filter.evil.required", "true")
        _stat_dirty(repo)
        return ["status"] if key != "smudge" else None
    if case in ("filter-name-with-equals", "filter-name-undecodable"):
        # Issue #24 item 8: `-c filter.x=y.clean=` is parsed as the key `filter.x`, so a
        # driver named `x=y` kept its clean command; a name that is not UTF-8 was mangled.
        name = b"x=y" if case == "filter-name-with-equals" else b"caf\xe9"
        with open(repo / ".gitattributes", "wb") as f:
            f.write(b"* filter=" + name + b"\n")
        with open(repo / ".git" / "config", "ab") as f:
            f.write(b'[filter "' + name + b'"]\n\tclean = ' + prog.encode() + b"\n\trequired = true\n")
        _stat_dirty(repo)
        return ["status"]
    if case == "filter-info-attributes":
        (repo / ".git" / "info").mkdir(exist_ok=True)
        (repo / ".git" / "info" / "attributes").write_text("*.md filter=sneaky\n", encoding="utf-8")
        cfg("filter.sneaky.clean", prog)
        _stat_dirty(repo)
        return ["status"]
    if case == "diff-external":
        cfg("diff.external", str(_script(tmp_path / "ext-diff", marker)))
        _stat_dirty(repo)
        (repo / "README.md").write_text("# Stranger\n\nchanged world\n", encoding="utf-8")
        return ["diff"]
    if case == "textconv":
        (repo / ".gitattributes").write_text("*.md diff=evil\n", encoding="utf-8")
        cfg("diff.evil.textconv", str(_script(tmp_path / "conv", marker)))
        cfg("diff.evil.command", str(_script(tmp_path / "cmd", marker)))
        return ["log", "-p", "-1"]
    if case == "pager":
        for key in ("core.pager", "pager.log", "pager.status", "pager.rev-parse", "pager.ls-files"):
            cfg(key, prog)
        return None  # git pages only on a terminal
    if case == "hooks-path":
        cfg("core.hooksPath", str(_hooks_dir(tmp_path, marker)))
        return None
    if case == "hooks-default":
        default = repo / ".git" / "hooks"
        for item in _hooks_dir(tmp_path, marker).iterdir():
            (default / item.name).write_bytes(item.read_bytes())
            (default / item.name).chmod(0o755)
        return None
    if case == "credential-helper":
        cfg("credential.helper", f"!touch '{marker}'")
        cfg("core.askPass", str(_script(tmp_path / "askpass", marker)))
        return None
    if case == "ssh-command":
        cfg("core.sshCommand", f"touch '{marker}'")
        cfg("remote.origin.url", "ssh://example.invalid/x.git")
        cfg("remote.origin.uploadpack", f"touch '{marker}'")
        return None
    if case == "lazy-fetch-ext":
        # A partial clone whose promisor remote runs a command when an object is missing.
        cfg("remote.origin.url", f"ext::sh -c touch% {marker}")
        cfg("remote.origin.promisor", "true")
        cfg("protocol.ext.allow", "always")
        cfg("extensions.partialclone", "origin")
        cfg("core.repositoryformatversion", "1")
        _drop_an_old_tree(repo)
        return None
    if case == "alternate-refs":
        cfg("core.alternateRefsCommand", f"touch '{marker}'")
        cfg("uploadpack.packObjectsHook", f"touch '{marker}'")
        return None
    if case == "include-path":
        hostile = tmp_path / "hostile.cfg"
        hostile.write_text(f"[core]\n\tfsmonitor = touch '{marker}'; false\n", encoding="utf-8")
        cfg("include.path", str(hostile))
        return ["status"]
    if case == "gpg-program":
        cfg("log.showSignature", "true")
        cfg("gpg.program", str(_script(tmp_path / "gpg", marker)))
        _signed_head(repo)
        return ["log", "-1"]
    raise AssertionError(case)


def _drop_an_old_tree(repo: Path) -> None:
    """Delete the first commit's root tree object, so reading history needs a fetch."""
    first = git(repo, "rev-list", "--max-parents=0", "HEAD").strip()
    tree = git(repo, "rev-parse", f"{first}^{{tree}}").strip()
    obj = repo / ".git" / "objects" / tree[:2] / tree[2:]
    obj.chmod(stat.S_IWUSR | stat.S_IRUSR)
    obj.unlink()


def _signed_head(repo: Path) -> None:
    """A commit carrying a (fake) signature header, so log.showSignature calls gpg."""
    head = git(repo, "cat-file", "commit", "HEAD")
    header, _, message = head.partition("\n\n")
    sig = "gpgsig -----BEGIN PGP SIGNATURE-----\n \n AAAA\n -----END PGP SIGNATURE-----"
    body = f"{header}\n{sig}\n\n{message}"
    done = subprocess.run(
        ["git", "hash-object", "-w", "-t", "commit", "--stdin"],
        cwd=repo,
        input=body.encode(),
        env=git_env(),
        capture_output=True,
        check=True,
    )
    git(repo, "update-ref", "HEAD", done.stdout.decode().strip())


CASES = [
    "fsmonitor",
    "filter-clean",
    "filter-smudge",
    "filter-process",
    "filter-info-attributes",
    "filter-name-with-equals",
    "filter-name-undecodable",
    "diff-external",
    "textconv",
    "pager",
    "hooks-path",
    "hooks-default",
    "credential-helper",
    "ssh-command",
    "lazy-fetch-ext",
    "alternate-refs",
    "include-path",
    "gpg-program",
]


@pytest.mark.parametrize("case", CASES)
def test_no_git_mechanism_runs_a_program_from_the_repository(tmp_path, case):
    repo = _repo(tmp_path)
    marker = tmp_path / f"PWNED-{case}"
    proof = _plant(case, repo, tmp_path, marker)
    if proof is not None:
        # The planted program is live: plain git runs it.
        subprocess.run(["git", *proof], cwd=repo, env=git_env(), capture_output=True, check=False)
        assert marker.exists(), f"the {case} case did not trigger with plain git"
        marker.unlink()
    db = tmp_path / "home" / "k.db"
    cli(db, "sources", "add", str(repo), "--git", "--name", "stranger")
    cli(db, "index")
    cli(db, "sources", "list")
    cli(db, "status")
    cli(db, "search", "note")
    for probe in (inspect_repo, list_files, path_commit_times, recent_paths):
        try:
            probe(repo)
        except Exception:
            pass
    count("security: git mechanisms refused")
    assert not marker.exists(), f"{case}: Kenning ran a program named by the repository"


def test_hostile_repository_is_still_indexed(tmp_path):
    """Switching the mechanisms off does not stop the files being read."""
    repo = _repo(tmp_path)
    marker = tmp_path / "PWNED"
    _plant("filter-clean", repo, tmp_path, marker)
    git(repo, "config", "core.fsmonitor", f"touch '{marker}'; false")
    db = tmp_path / "home" / "k.db"
    assert cli(db, "sources", "add", str(repo), "--git")[0] == 0
    rc, out, err = cli(db, "index", "--no-embed")
    assert rc == 0, err
    assert "4 added" in out  # .gitattributes is a file of the repository too
    rc, out, _ = cli(db, "search", "--mode", "lexical", "beta")
    assert "docs/b.md" in out
    assert not marker.exists()


def test_callers_git_environment_cannot_redirect_kenning(tmp_path, monkeypatch):
    """GIT_DIR/GIT_WORK_TREE in the caller's environment must not swap the repository."""
    repo = _repo(tmp_path)
    other = make_repo(tmp_path, "other")
    commit(other, {"secret.md": "other repo\n"}, NOW)
    monkeypatch.setenv("GIT_DIR", str(other / ".git"))
    monkeypatch.setenv("GIT_WORK_TREE", str(other))
    assert sorted(list_files(repo)) == ["README.md", "docs/a.md", "docs/b.md"]
