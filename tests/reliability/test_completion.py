"""Shell completion never runs what a source name says (issue #24, item 14).

A folder's name is the default source name, so a clone or an unpacked archive can name
a source `$(id>pwned)`.  bash's `compgen -W` expands the words it is given and zsh
evaluates the words of a `($(…))` action: pressing Tab after `kenning index ` ran the
command.  The names now reach the shell as plain lines (bash: `_kenning_matching`, zsh:
compadd), in every place a source name completes: `sources remove|enable|disable|globs`,
`index`, and `source:` in a query.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from kenning.cli.completion import completion_script
from kenning.cli.main import build_parser, main
from reliability.helpers import count, write_files
from test_completion_paths import ZSH_SESSION, _bash

APP = str(Path(__file__).resolve().parent.parent.parent / "app")
HOSTILE = "$(id>pwned)"
BACKTICKS = "`id>pwned2`"


@pytest.fixture
def named_env(tmp_path, monkeypatch):
    """A `kenning` on PATH whose store has sources named by hostile folders."""
    monkeypatch.setenv("KENNING_MODEL", "fake")
    store = tmp_path / "k.db"
    for name in (HOSTILE, BACKTICKS, "plain"):
        folder = write_files(tmp_path / "folders" / name, {"a.md": "# A\n\ntext\n"})
        # No --name: the folder's name is the source's name, as for a user's clone.
        assert main(["--store", str(store), "sources", "add", str(folder)]) == 0
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    wrapper = bin_dir / "kenning"
    wrapper.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m kenning.launcher --store "{store}" "$@"\n')
    wrapper.chmod(0o755)
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "PYTHONPATH": APP}
    return env, cwd


def _ran(cwd: Path) -> bool:
    return (cwd / "pwned").exists() or (cwd / "pwned2").exists()


@pytest.mark.parametrize(
    "words",
    [
        ["kenning", "index", ""],
        ["kenning", "sources", "remove", ""],
        ["kenning", "sources", "globs", "$"],
        ["kenning", "search", "x", "source:"],
        ["kenning", "search", "x", "source", ":", ""],
    ],
    ids=["index", "sources-remove", "sources-globs-prefix", "query-filter", "query-split"],
)
def test_bash_offers_a_hostile_source_name_without_running_it(named_env, tmp_path, words):
    env, cwd = named_env
    script = tmp_path / "kenning.bash"
    script.write_text(completion_script(build_parser(), "bash", models=["default"]), encoding="utf-8")
    offered = _bash(env, script, cwd, words)
    assert not _ran(cwd), "completion ran a command named by a source"
    prefix = "source:" if words[-1].startswith("source:") else ""
    assert f"{prefix}{HOSTILE}" in offered
    if words[-1] != "$":
        assert f"{prefix}{BACKTICKS}" in offered and f"{prefix}plain" in offered
    count("completion: hostile source names offered, not run (bash)")


def test_zsh_offers_a_hostile_source_name_without_running_it(named_env, tmp_path):
    zsh = shutil.which("zsh")
    if zsh is None:
        pytest.skip("zsh is not installed")
    env, cwd = named_env
    fpath = tmp_path / "zfunc"
    fpath.mkdir()
    (fpath / "_kenning").write_text(completion_script(build_parser(), "zsh", models=["default"]), encoding="utf-8")
    session = tmp_path / "session.zsh"
    session.write_text(ZSH_SESSION, encoding="utf-8")

    def listed(line: str) -> str:
        done = subprocess.run(
            [zsh, "-f", str(session), str(fpath), str(cwd), line], env=env, capture_output=True, text=True, timeout=120
        )
        assert done.returncode == 0, done.stderr
        return re.sub(r"\x1b\[[0-9;?]*[a-zA-Z]|\r", "", done.stdout)

    for line in ("kenning index ", "kenning sources disable ", "kenning search x source:"):
        shown = listed(line).replace("\\", "")  # zsh lists the names quoted: \$\(id\>pwned\)
        assert not _ran(cwd), f"completion ran a command named by a source ({line!r})"
        assert "plain" in shown and HOSTILE in shown and BACKTICKS in shown, shown
    count("completion: hostile source names offered, not run (zsh)")


def test_fish_offers_a_hostile_source_name_without_running_it(named_env, tmp_path):
    fish = shutil.which("fish")
    if fish is None:
        pytest.skip("fish is not installed")
    env, cwd = named_env
    script = tmp_path / "kenning.fish"
    script.write_text(completion_script(build_parser(), "fish", models=["default"]), encoding="utf-8")
    program = f"source '{script}'; complete -C 'kenning index '"
    done = subprocess.run([fish, "-c", program], env=env, cwd=cwd, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    offered = [row.split("\t")[0] for row in done.stdout.splitlines()]
    assert HOSTILE in offered and not _ran(cwd)
