"""Shell completion of paths, `tag:` values and model names, in bash, zsh and fish, as a
person's shell runs the generated script (tags come from notes: hostile ones stay words)."""

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
from kenning_testing import write_files

APP = str(Path(__file__).resolve().parent.parent / "app")
MODELS = ["default", "BAAI/bge-small-en-v1.5", "sentence-transformers/all-MiniLM-L6-v2"]
HOSTILE_TAG = "$(id>pwned)"


@pytest.fixture
def shell_env(tmp_path, monkeypatch):
    """A `kenning` on PATH using a store of tagged notes, and a place to look for the tree."""
    monkeypatch.setenv("KENNING_MODEL", "fake")
    notes = write_files(
        tmp_path / "notes",
        {
            "a.md": f'---\ntags: [project/beta, ops, "{HOSTILE_TAG}", "`id>pwned2`"]\n---\n# A\n\ntext #inline\n',
            "b.md": "# B\n\nmore #ops\n",
        },
    )
    store = tmp_path / "k.db"
    assert main(["--store", str(store), "sources", "add", str(notes), "--name", "notes"]) == 0
    assert main(["--store", str(store), "index", "--no-embed"]) == 0
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    wrapper = bin_dir / "kenning"
    wrapper.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m kenning.launcher --store "{store}" "$@"\n')
    wrapper.chmod(0o755)
    tree = write_files(tmp_path / "tree", {"docs/x.md": "x", "data/beir/corpus.jsonl": "{}", "store.db": ""})
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "PYTHONPATH": APP}
    return env, tree


def _script(tmp_path, shell: str) -> Path:
    path = tmp_path / f"kenning.{shell}"
    path.write_text(completion_script(build_parser(), shell, models=MODELS), encoding="utf-8")
    return path


def _bash(env, script: Path, cwd: Path, words: list[str]) -> list[str]:
    quoted = " ".join(f"'{w}'" for w in words)
    program = (
        f"source '{script}'\n"
        f"COMP_WORDS=({quoted}); COMP_CWORD={len(words) - 1}; COMP_LINE='{' '.join(words)}'\n"
        '_shtab_kenning; printf "%s\\n" "${COMPREPLY[@]}"\n'
    )
    done = subprocess.run(["bash", "-c", program], env=env, cwd=cwd, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return [line for line in done.stdout.splitlines() if line]


def test_bash_completes_paths_tags_and_models(shell_env, tmp_path):
    env, tree = shell_env
    script = _script(tmp_path, "bash")
    assert _bash(env, script, tree, ["kenning", "sources", "add", "d"]) == ["data", "docs"]
    assert _bash(env, script, tree, ["kenning", "sources", "add", "--git", "do"]) == ["docs"]
    assert _bash(env, script, tree, ["kenning", "eval", "data/"]) == ["data/beir"]
    assert _bash(env, script, tree, ["kenning", "--store", "sto"]) == ["store.db"]
    assert _bash(env, script, tree, ["kenning", "links", "docs/"]) == ["docs/x.md"]
    assert _bash(env, script, tree, ["kenning", "models", "use", "BAAI"]) == ["BAAI/bge-small-en-v1.5"]
    assert _bash(env, script, tree, ["kenning", "models", "u"]) == ["use"]
    assert _bash(env, script, tree, ["kenning", "search", "deploy", "tag:pro"]) == ["tag:project", "tag:project/beta"]
    # Split at the colon, as bash does by default.
    assert _bash(env, script, tree, ["kenning", "search", "tag", ":", "o"]) == ["ops"]


def test_bash_never_runs_a_hostile_tag(shell_env, tmp_path):
    env, tree = shell_env
    script = _script(tmp_path, "bash")
    offered = _bash(env, script, tree, ["kenning", "search", "tag:"])
    assert f"tag:{HOSTILE_TAG}" in offered and "tag:`id>pwned2`" in offered
    assert _bash(env, script, tree, ["kenning", "search", "tag", ":", ""])
    assert not (tree / "pwned").exists() and not (tree / "pwned2").exists()


def test_fish_completes_paths_tags_and_models(shell_env, tmp_path):
    fish = shutil.which("fish")
    if fish is None:
        pytest.skip("fish is not installed")
    env, tree = shell_env
    script = _script(tmp_path, "fish")

    def complete(line: str) -> list[str]:
        program = f"source '{script}'; complete -C '{line}'"
        done = subprocess.run([fish, "-c", program], env=env, cwd=tree, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        return sorted(row.split("\t")[0] for row in done.stdout.splitlines() if row)

    assert complete("kenning sources add d") == ["data/", "docs/"]
    assert complete("kenning eval data/") == ["data/beir/"]
    assert complete("kenning --store sto") == ["store.db"]
    assert complete("kenning models use BAAI") == ["BAAI/bge-small-en-v1.5"]
    assert "tag:project/beta" in complete("kenning search x tag:pro")
    assert f"tag:{HOSTILE_TAG}" in complete("kenning search x tag:")
    assert not (tree / "pwned").exists() and not (tree / "pwned2").exists()


ZSH_SESSION = r"""
zmodload zsh/zpty
zpty z zsh -f -i
zpty -w z "fpath=($1 \$fpath); autoload -U compinit; compinit -u -D; cd $2; PROMPT='%% '; setopt no_beep"
zpty -w z 'kenning-list() { zle list-choices; zle -R; print -n "KENNING""DONE" }; zle -N kenning-list; bindkey "^X" kenning-list'
zpty -w z "print KENNING''READY"
zpty -r -m z out '*KENNINGREADY*'
zpty -n -w z "$3"$'\C-x'
zpty -r -m z out '*KENNINGDONE*'
print -r -- "$out"
zpty -d z
"""


def test_zsh_completes_paths_tags_and_models(shell_env, tmp_path):
    """zsh completes only in its line editor: zpty gives an interactive zsh a terminal, and
    a key bound to list-choices lists what Tab would offer, then prints a marker (so the
    reading waits for the list however slowly the machine completes)."""
    zsh = shutil.which("zsh")
    if zsh is None:
        pytest.skip("zsh is not installed")
    env, tree = shell_env
    fpath = tmp_path / "zfunc"
    fpath.mkdir()
    (fpath / "_kenning").write_text(completion_script(build_parser(), "zsh", models=MODELS), encoding="utf-8")
    session = tmp_path / "session.zsh"
    session.write_text(ZSH_SESSION, encoding="utf-8")

    def listed(line: str) -> str:
        done = subprocess.run(
            [zsh, "-f", str(session), str(fpath), str(tree), line], env=env, capture_output=True, text=True, timeout=120
        )
        assert done.returncode == 0, done.stderr
        return re.sub(r"\x1b\[[0-9;?]*[a-zA-Z]|\r", "", done.stdout)

    assert re.search(r"data/\s+docs/", listed("kenning sources add d"))
    assert "beir/" in listed("kenning eval data/")
    assert "store.db" in listed("kenning --store st")
    assert "BAAI/bge-small-en-v1.5" in listed("kenning models use ")
    tags = listed("kenning search x tag:")
    assert "tag:project/beta" in tags and "tag:ops" in tags
    assert not (tree / "pwned").exists() and not (tree / "pwned2").exists()
