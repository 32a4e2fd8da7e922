"""`kenning search --format vimgrep|paths` as editors read it, and the shell completion scripts."""

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
# Vim's default errorformat entry for grep -n / vimgrep output: %f:%l:%c:%m
VIMGREP = re.compile(r"^(?P<file>.+?):(?P<line>\d+):(?P<col>\d+):(?P<text>.*)$")


@pytest.fixture
def notes_store(tmp_path, monkeypatch):
    monkeypatch.setenv("KENNING_MODEL", "fake")
    notes = write_files(
        tmp_path / "notes",
        {
            "retries.md": "# Retry policy\n\nThe client retries with exponential backoff.\nJitter avoids herds.\n",
            "deploy.md": "---\ntitle: Deploy\n---\n# Deploying\n\nIntro line.\n\n## Steps\n\nThen wait: the "
            "backoff settles, café.\n",
            "code/net.py": "def connect():\n    '''Open a socket.'''\n    delay = backoff(2)  # Backoff here\n",
        },
    )
    store = tmp_path / "k.db"
    assert main(["--store", str(store), "sources", "add", str(notes), "--name", "notes"]) == 0
    assert main(["--store", str(store), "index", "--no-embed"]) == 0
    return store, notes


def _search(capsys, store, *args) -> list[str]:
    capsys.readouterr()
    assert main(["--store", str(store), "search", *args]) == 0
    return capsys.readouterr().out.splitlines()


def test_each_vimgrep_line_points_at_the_line_and_column_of_a_match(notes_store, capsys):
    store, notes = notes_store
    lines = _search(capsys, store, "backoff", "--format", "vimgrep", "--mode", "lexical")
    assert len(lines) == 3
    for line in lines:
        m = VIMGREP.match(line)
        assert m, line
        path = Path(m["file"])
        assert path.is_absolute() and path.parent in (notes, notes / "code")
        file_line = path.read_text(encoding="utf-8").splitlines()[int(m["line"]) - 1]
        assert file_line.strip() == m["text"]
        column = int(m["col"])  # a byte column, as Vim's %c counts
        assert file_line.encode("utf-8")[column - 1 :].lower().startswith(b"backoff"), line


def test_a_hit_in_an_extracted_document_points_at_its_start_and_says_where(tmp_path, capsys, monkeypatch):
    from docfiles import notebook_json

    monkeypatch.setenv("KENNING_MODEL", "fake")
    notes = write_files(
        tmp_path / "nb", {"study.ipynb": notebook_json([("markdown", "# Study"), ("code", "churn = 0.2")])}
    )
    store = tmp_path / "nb.db"
    main(["--store", str(store), "sources", "add", str(notes)])
    main(["--store", str(store), "index", "--no-embed"])
    (line,) = _search(capsys, store, "churn", "--format", "vimgrep", "--mode", "lexical")
    m = VIMGREP.match(line)
    assert (m["file"], m["line"], m["col"]) == (str(notes / "study.ipynb"), "1", "1")
    assert m["text"].startswith("[cell 2] ") and "churn" in m["text"]


def test_vim_opens_the_quickfix_list_at_the_first_hit(notes_store, capsys, tmp_path):
    vim = shutil.which("vim")
    if vim is None:
        pytest.skip("vim is not installed")
    store, _ = notes_store
    lines = _search(capsys, store, "exponential", "--format", "vimgrep", "--mode", "lexical")
    errors = tmp_path / "quickfix.txt"
    errors.write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = tmp_path / "where.txt"
    script = ["redir! > " + str(out), 'echo expand("%:p") line(".") col(".")', "redir END", "qa!"]
    subprocess.run(
        [vim, "-N", "-u", "NONE", "-i", "NONE", "-es", "-q", str(errors), *[a for s in script for a in ("-c", s)]],
        check=False,
        timeout=60,
        stdin=subprocess.DEVNULL,
        capture_output=True,
    )
    m = VIMGREP.match(lines[0])
    assert out.read_text(encoding="utf-8").split() == [m["file"], m["line"], m["col"]]


def test_paths_lists_each_file_once_best_first(notes_store, capsys):
    store, notes = notes_store
    from kenning_testing import json_hits

    json_paths = [
        hit["abs_path"] for hit in json_hits("\n".join(_search(capsys, store, "backoff", "--json", "-n", "20")))
    ]
    paths = _search(capsys, store, "backoff", "--format", "paths", "-n", "20")
    assert paths == list(dict.fromkeys(json_paths))
    assert all(Path(p).is_absolute() for p in paths)


def test_editor_formats_keep_notes_off_stdout(notes_store, capsys):
    store, _ = notes_store
    capsys.readouterr()
    main(["--store", str(store), "search", "backoff", "--format", "paths"])  # hybrid: no vectors yet
    captured = capsys.readouterr()
    assert "note:" in captured.err and "note:" not in captured.out


# -- completion ----------------------------------------------------------------------


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_completion_scripts_name_every_command(shell):
    script = completion_script(build_parser(), shell)
    for command in ("search", "sources", "index", "mcp", "completion"):
        assert command in script
    assert "kenning sources list --names" in script


@pytest.fixture
def kenning_on_path(notes_store, tmp_path):
    """A `kenning` command as installed, using the test's store."""
    store, _ = notes_store
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    wrapper = bin_dir / "kenning"
    wrapper.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m kenning.launcher --store "{store}" "$@"\n')
    wrapper.chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "PYTHONPATH": APP}
    return env


def _complete(env, script_path: Path, words: list[str]) -> list[str]:
    """Replies of the generated bash function for the command line `words` (last = being typed)."""
    quoted = " ".join(f"'{w}'" for w in words)
    program = (
        f"source '{script_path}'\n"
        f"COMP_WORDS=({quoted}); COMP_CWORD={len(words) - 1}; COMP_LINE='{' '.join(words)}'\n"
        '_shtab_kenning; printf "%s\\n" "${COMPREPLY[@]}"\n'
    )
    done = subprocess.run(["bash", "-c", program], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return [line for line in done.stdout.splitlines() if line]


def test_bash_completion_is_registered_and_completes_commands_and_source_names(kenning_on_path, tmp_path):
    script = tmp_path / "kenning.bash"
    script.write_text(completion_script(build_parser(), "bash"), encoding="utf-8")
    env = kenning_on_path
    registered = subprocess.run(
        ["bash", "-c", f"source '{script}' && complete -p kenning"], env=env, capture_output=True, text=True
    )
    assert registered.returncode == 0 and "-F _shtab_kenning kenning" in registered.stdout
    assert set(_complete(env, script, ["kenning", "se"])) == {"search", "serve", "settings"}
    assert _complete(env, script, ["kenning", "sources", "remove", "no"]) == ["notes"]
    assert _complete(env, script, ["kenning", "index", ""]) == ["notes"]
    # `source:` in a query: bash hands the words over split at the colon...
    assert _complete(env, script, ["kenning", "search", "retry", "source", ":"]) == ["notes"]
    assert _complete(env, script, ["kenning", "search", "source", ":", "n"]) == ["notes"]
    # ...unless ':' was taken out of COMP_WORDBREAKS.
    assert _complete(env, script, ["kenning", "search", "source:n"]) == ["source:notes"]
    assert "--format" in _complete(env, script, ["kenning", "search", "x", "--f"])


def test_zsh_script_parses(tmp_path):
    zsh = shutil.which("zsh")
    if zsh is None:
        pytest.skip("zsh is not installed")
    script = tmp_path / "_kenning"
    script.write_text(completion_script(build_parser(), "zsh"), encoding="utf-8")
    done = subprocess.run([zsh, "-n", str(script)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr


def test_fish_completes_commands_and_source_names(kenning_on_path, tmp_path):
    fish = shutil.which("fish")
    if fish is None:
        pytest.skip("fish is not installed")
    script = tmp_path / "kenning.fish"
    script.write_text(completion_script(build_parser(), "fish"), encoding="utf-8")

    def complete(line: str) -> list[str]:
        program = f"source '{script}'; complete -C '{line}'"
        done = subprocess.run([fish, "-c", program], env=kenning_on_path, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        return [row.split("\t")[0] for row in done.stdout.splitlines() if row]

    assert complete("kenning sources remove ") == ["notes"]
    assert complete("kenning search retry source:") == ["source:notes"]
    assert set(complete("kenning se")) == {"search", "serve", "settings"}
