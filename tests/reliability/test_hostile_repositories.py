"""A hostile repository or folder reaches nothing outside its root, nothing under
.git/, and cannot hang Kenning (issue #24, items 9, 10, 18-21, and their siblings).

Cases that used to hang run `kenning index` in a child process with a deadline, so a
regression fails the test instead of stalling the suite.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

import pytest

from gitutil import commit, git, make_repo
from reliability.helpers import cli, count, mcp_said, mcp_service, stored_paths, stored_text, write_files

WHEN = datetime(2025, 6, 1, tzinfo=timezone.utc)
TOKEN = "ghp_0123456789abcdefSECRETTOKEN"
DEADLINE = 90  # seconds for a child `kenning index` of a handful of files, on a loaded machine


def _texts(db: Path) -> str:
    return stored_text(db, titles=True)


def _docs(db: Path) -> list[str]:
    return stored_paths(db)


def _kenning(db: Path, *argv: str, timeout: float = DEADLINE) -> subprocess.CompletedProcess:
    """`kenning ARGV` in a child process, which must answer within the deadline."""
    started = time.monotonic()
    try:
        done = subprocess.run(
            [sys.executable, "-m", "kenning.cli.main", "--store", str(db), "--model", "fake", *argv],
            capture_output=True,
            text=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"`kenning {' '.join(argv)}` did not answer within {timeout} s (hung)")
    done.seconds = time.monotonic() - started  # type: ignore[attr-defined]
    return done


def _cloned_with_token(tmp_path: Path) -> Path:
    repo = make_repo(tmp_path)
    git(repo, "remote", "add", "origin", f"https://x-access-token:{TOKEN}@github.com/me/private.git")
    commit(repo, {"readme.md": "# Readme\n\nordinary words\n"}, WHEN)
    return repo


# -- item 9: nothing under .git/ is indexed or read, by any path --------------------


def test_a_tracked_symlink_into_git_config_is_never_indexed_nor_read(tmp_path):
    repo = _cloned_with_token(tmp_path)
    os.symlink(".git/config", repo / "notes.md")
    os.symlink(".git", repo / "alias")  # a link to the folder itself
    commit(repo, {}, WHEN)
    git(repo, "add", "notes.md", "alias")
    commit(repo, {}, WHEN)
    db = tmp_path / "home" / "k.db"
    cli(db, "sources", "add", str(repo), "--git", "--name", "repo")
    rc, out, err = cli(db, "index", "--no-embed")
    assert rc == 0, out + err
    assert TOKEN not in _texts(db) and "notes.md" not in _docs(db)
    rc, out, _ = cli(db, "status")
    assert "notes.md: git-internal" in out
    rc, out, _ = cli(db, "search", "--mode", "lexical", "x-access-token")
    assert TOKEN not in out
    count("security: .git contents refused", 2)


def test_a_symlink_into_git_in_a_folder_source_is_never_indexed(tmp_path):
    notes = write_files(tmp_path / "notes", {"own.md": "own note\n", ".git/config": f"url = {TOKEN}\n"})
    os.symlink(".git/config", notes / "config.md")
    db = tmp_path / "home" / "k.db"
    cli(db, "sources", "add", str(notes))
    cli(db, "index", "--no-embed")
    assert TOKEN not in _texts(db) and _docs(db) == ["own.md"]
    rc, out, _ = cli(db, "status")
    assert "config.md: git-internal" in out


def test_a_document_that_now_leads_into_git_is_removed_not_kept(tmp_path):
    """A note replaced by a link into .git/ (or indexed that way by an older Kenning)
    loses its documents: nothing from .git/ may stay searchable."""
    repo = _cloned_with_token(tmp_path)
    commit(repo, {"notes.md": "harmless at first\n"}, WHEN)
    db = tmp_path / "home" / "k.db"
    cli(db, "sources", "add", str(repo), "--git", "--name", "repo")
    cli(db, "index", "--no-embed")
    assert "notes.md" in _docs(db)
    (repo / "notes.md").unlink()
    os.symlink(".git/config", repo / "notes.md")
    cli(db, "index", "--no-embed")
    assert "notes.md" not in _docs(db)


def test_mcp_read_refuses_a_path_into_git(tmp_path):
    from kenning.workspace.documents import RefusedPath

    repo = _cloned_with_token(tmp_path)
    commit(repo, {"notes.md": "a note\n"}, WHEN)
    db = tmp_path / "home" / "k.db"
    cli(db, "sources", "add", str(repo), "--git", "--name", "repo")
    cli(db, "index", "--no-embed")
    (repo / "notes.md").unlink()
    os.symlink(".git/config", repo / "notes.md")  # swapped after indexing
    service = mcp_service(db)
    try:
        for path in ("notes.md", str(repo / "notes.md"), ".git/config", str(repo / ".git" / "config")):
            try:
                answer = mcp_said(service.read(path))
            except RefusedPath:
                continue
            assert TOKEN not in answer, path
    finally:
        service.close()
    count("security: .git contents refused")


# -- item 10: an ignore file that is a link out of the repository --------------------


def test_a_tracked_gitignore_linking_out_is_never_read_nor_printed(tmp_path):
    outside = tmp_path / "private.txt"
    outside.write_text(f"[z-a]{TOKEN}\n**/x\n*a*a*a*a*a*a*a*a*b{TOKEN}\n")
    repo = _cloned_with_token(tmp_path)
    os.symlink(outside, repo / ".gitignore")
    git(repo, "add", ".gitignore")
    commit(repo, {}, WHEN)
    (repo / "untracked.md").write_text("an untracked note: the ignore rules are consulted\n")
    db = tmp_path / "home" / "k.db"
    cli(db, "sources", "add", str(repo), "--git", "--name", "repo")
    rc, out, err = cli(db, "index", "--no-embed")
    assert "untracked.md" in _docs(db)
    for argv in (("status",), ("sources", "list")):
        rc, out, err = cli(db, *argv)
        assert TOKEN not in out + err
    rc, out, _ = cli(db, "status")
    assert "repo:.gitignore: " in out  # listed (as a link leading out, or a rules file not obeyed)
    count("security: ignore files outside the root refused")


def test_a_git_info_exclude_linking_out_is_never_read_nor_printed(tmp_path):
    outside = tmp_path / "private.txt"
    outside.write_text(f"[z-a]{TOKEN}\n*a*a*a*a*a*a*a*a*b{TOKEN}\n")
    repo = _cloned_with_token(tmp_path)
    exclude = repo / ".git" / "info" / "exclude"
    exclude.unlink(missing_ok=True)
    os.symlink(outside, exclude)
    db = tmp_path / "home" / "k.db"
    cli(db, "sources", "add", str(repo), "--git", "--name", "repo")
    cli(db, "index", "--no-embed")
    rc, out, err = cli(db, "status")
    assert TOKEN not in out + err


def test_a_repositorys_excludes_file_setting_never_names_what_kenning_reads(tmp_path):
    outside = tmp_path / "private.txt"
    outside.write_text(f"[z-a]{TOKEN}\n")
    repo = _cloned_with_token(tmp_path)
    git(repo, "config", "core.excludesFile", str(outside))
    db = tmp_path / "home" / "k.db"
    cli(db, "sources", "add", str(repo), "--git", "--name", "repo")
    cli(db, "index", "--no-embed")
    rc, out, err = cli(db, "status")
    assert TOKEN not in out + err


# -- item 18: an unreadable .gitignore is not an absent one --------------------------


def _deny_file(monkeypatch, name: str) -> None:
    """Opening a file called `name` fails with EACCES, by path or by name below an open
    folder (chmod 000 does not stop root, who runs these tests in CI)."""
    real_open = os.open

    def fake_open(path, flags, mode=0o777, *, dir_fd=None):
        text = os.fspath(path)
        if os.path.basename(text) == name and not flags & getattr(os, "O_DIRECTORY", 0):
            raise PermissionError(13, "Permission denied", text)
        if dir_fd is None:
            return real_open(path, flags, mode)
        return real_open(path, flags, mode, dir_fd=dir_fd)

    monkeypatch.setattr(os, "open", fake_open)


def test_an_unreadable_gitignore_keeps_its_folder_out_and_says_why(tmp_path, monkeypatch):
    notes = write_files(
        tmp_path / "notes",
        {"top.md": "top note\n", "sub/.gitignore": "secrets/\n", "sub/secrets/key.md": f"{TOKEN}\n", "sub/n.md": "n\n"},
    )
    db = tmp_path / "home" / "k.db"
    cli(db, "sources", "add", str(notes))
    cli(db, "index", "--no-embed")
    assert _docs(db) == ["sub/n.md", "top.md"]
    _deny_file(monkeypatch, ".gitignore")
    rc, out, err = cli(db, "index", "--no-embed")
    monkeypatch.undo()
    assert TOKEN not in _texts(db)
    assert _docs(db) == ["sub/n.md", "top.md"]  # kept as indexed, nothing new guessed
    rc, out, _ = cli(db, "status")
    assert "sub: unreadable" in out and ".gitignore cannot be read" in out
    count("security: unreadable ignore files obeyed as unknown")


def test_an_unreadable_gitignore_in_a_repository_lists_no_untracked_file_under_it(tmp_path, monkeypatch):
    repo = make_repo(tmp_path)
    commit(repo, {"sub/.gitignore": "secrets/\n", "sub/n.md": "tracked\n"}, WHEN)
    write_files(repo, {"sub/secrets/key.md": f"{TOKEN}\n", "sub/draft.md": "untracked draft\n"})
    db = tmp_path / "home" / "k.db"
    cli(db, "sources", "add", str(repo), "--git", "--name", "repo")
    _deny_file(monkeypatch, ".gitignore")
    rc, out, err = cli(db, "index", "--no-embed")
    monkeypatch.undo()
    assert TOKEN not in _texts(db)
    assert "sub/n.md" in _docs(db) and "sub/draft.md" not in _docs(db)
    rc, out, _ = cli(db, "status")
    assert "sub: unreadable" in out


# -- item 19: a FIFO named .gitignore never hangs an index ---------------------------


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
@pytest.mark.parametrize("kind", ["folder", "git-tracked-folder", "git-untracked-folder", "git-root"])
def test_a_fifo_named_gitignore_never_hangs_the_index(tmp_path, kind):
    db = tmp_path / "home" / "k.db"
    if kind == "folder":
        root = write_files(tmp_path / "notes", {"a.md": "alpha\n", "sub/b.md": "beta\n"})
        cli(db, "sources", "add", str(root))
        fifo = root / "sub" / ".gitignore"
    else:
        root = make_repo(tmp_path)
        commit(root, {"a.md": "alpha\n", "sub/b.md": "beta\n"}, WHEN)
        cli(db, "sources", "add", str(root), "--git")
        fifo = {"git-tracked-folder": root / "sub", "git-untracked-folder": root / "new", "git-root": root}[kind]
        fifo.mkdir(exist_ok=True)
        (fifo / "c.md").write_text("untracked\n")
        fifo = fifo / ".gitignore"
    os.mkfifo(fifo)
    done = _kenning(db, "index", "--no-embed")
    assert "a.md" in _docs(db), done.stdout + done.stderr
    status = _kenning(db, "status")
    assert ".gitignore cannot be read" in status.stdout
    count("security: FIFOs that would hang refused")


# -- item 20: a config naming a FIFO never stalls git --------------------------------


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
@pytest.mark.parametrize(
    "setting", ["include.path", "includeIf.gitdir:/.path", "core.excludesFile", "core.attributesFile", ".mailmap"]
)
def test_a_fifo_named_by_the_repository_never_stalls_git(tmp_path, setting):
    repo = make_repo(tmp_path)
    commit(repo, {"a.md": "alpha note\n"}, WHEN)
    db = tmp_path / "home" / "k.db"
    cli(db, "sources", "add", str(repo), "--git", "--name", "repo")
    cli(db, "index", "--no-embed")
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    if setting == ".mailmap":
        os.mkfifo(repo / ".mailmap")
    else:
        with open(repo / ".git" / "config", "a") as f:  # `git config` itself would wait on the include
            section, _, key = setting.rpartition(".")
            head, _, sub = section.partition(".")
            f.write(f'[{head} "{sub}"]\n\t{key} = {fifo}\n' if sub else f"[{head}]\n\t{key} = {fifo}\n")
    (repo / "a.md").write_text("alpha note, changed\n")
    done = _kenning(db, "index", "--no-embed")
    said = done.stdout + done.stderr
    assert ".gitignore" not in said  # the error no longer blames a costly pattern
    if setting.startswith("include"):
        assert "not a regular file" in said and _docs(db) == ["a.md"]  # refused, documents kept
    else:
        assert done.returncode == 0, said
    count("security: FIFOs that would hang refused")


# -- item 21: glob matching takes linear time whatever the pattern --------------------

HOSTILE = "*a*a*/*a*a*/*a*a*/*a*a*/*a*a*/z"


def _nested_a_tree(root: Path) -> Path:
    deep = root.joinpath(*["a" * 20] * 6)
    deep.mkdir(parents=True)
    (deep / "x.md").write_text("deep note kept\n")
    z = root.joinpath(*["a" * 20] * 5, "z")
    z.mkdir(parents=True)
    (z / "n.md").write_text("inside z, ignored\n")
    return root


@pytest.mark.parametrize("where", ["folder-gitignore", "git-gitignore", "exclude-glob", "include-glob"])
def test_stars_spread_over_parts_are_obeyed_in_linear_time(tmp_path, where):
    db = tmp_path / "home" / "k.db"
    if where == "git-gitignore":
        root = make_repo(tmp_path)
        commit(root, {".gitignore": HOSTILE + "\n", "top.md": "top\n"}, WHEN)
        _nested_a_tree(root)
        cli(db, "sources", "add", str(root), "--git", "--name", "src")
    else:
        root = _nested_a_tree(write_files(tmp_path / "notes", {"top.md": "top\n"}))
        if where == "folder-gitignore":
            (root / ".gitignore").write_text(HOSTILE + "\n")
        option = "--exclude" if where != "include-glob" else "--include"
        pattern = HOSTILE if where != "include-glob" else "*a*a*/*a*a*/*a*a*/*a*a*/*a*a*/*a*a*/*.md"
        extra = () if where == "folder-gitignore" else (option, pattern)
        assert cli(db, "sources", "add", str(root), "--name", "src", *extra)[0] == 0
    done = _kenning(db, "index", "--no-embed")
    assert done.seconds < DEADLINE
    deep = "/".join(["a" * 20] * 6) + "/x.md"
    docs = _docs(db)
    assert deep in docs, done.stdout + done.stderr
    assert not any("/z/" in d for d in docs)
    count("security: costly patterns matched in linear time")


def test_the_matcher_is_linear_on_hostile_patterns():
    from kenning.core.wildmatch import compile_lines

    rules, problems = compile_lines([HOSTILE, "*a*a*a*a*a*a*a*a*a*a*b", "**/a/**/a/**/a/**/a/**/b", "a**a**a**/b"])
    assert not problems
    for depth in (6, 12, 24):
        names = ["a" * 40] * depth + ["x.md"]
        started = time.perf_counter()
        for k in range(1, len(names) + 1):
            rules.decision(names[:k], k < len(names))
        assert time.perf_counter() - started < 1.0, depth


def test_the_matcher_agrees_with_git_on_generated_patterns(tmp_path):
    """git itself is the reference: `git check-ignore --no-index` on the same lines."""
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    from kenning.core.wildmatch import compile_lines

    repo = make_repo(tmp_path)
    atom = st.sampled_from(["a", "b", "*", "**", "?", "[ab]", "[!a]", "[a-c]", "x"])
    part = st.lists(atom, min_size=1, max_size=3).map("".join)
    pattern = st.tuples(
        st.booleans(), st.lists(part, min_size=1, max_size=3).map("/".join), st.booleans(), st.booleans()
    ).map(lambda t: ("!" if t[0] else "") + ("/" if t[2] else "") + t[1] + ("/" if t[3] else ""))
    name = st.text(st.sampled_from("abx"), min_size=1, max_size=3)
    path = st.lists(name, min_size=1, max_size=4).map("/".join)

    @settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
    @given(st.lists(pattern, min_size=1, max_size=3), st.lists(path, min_size=1, max_size=6, unique=True))
    def check(lines, paths):
        rules, problems = compile_lines(lines)
        if problems or rules is None:
            return
        (repo / ".gitignore").write_text("\n".join(lines) + "\n")
        out = subprocess.run(
            ["git", "-c", f"core.excludesFile={os.devnull}", "check-ignore", "--no-index", "-v", "-n", "--stdin"],
            cwd=repo,
            input="\n".join(paths) + "\n",
            capture_output=True,
            text=True,
            check=False,
        ).stdout
        by_git = {}
        for line in out.splitlines():
            source, _, rel = line.partition("\t")
            by_git[rel] = source != "::" and not source.split(":", 2)[2].startswith("!")
        for rel in paths:
            names = rel.split("/")
            ours = any(rules.decision(names[:k], True) for k in range(1, len(names))) or bool(
                rules.decision(names, False)
            )
            assert ours == by_git[rel], (lines, rel)

    check()
