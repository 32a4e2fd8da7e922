"""The command line as a new user types it (found by QA following the README)."""

from __future__ import annotations

import pytest

from kenning.cli.main import main
from kenning_testing import write_files


@pytest.fixture
def store(tmp_path, monkeypatch):
    monkeypatch.setenv("KENNING_MODEL", "fake")
    notes = write_files(
        tmp_path / "notes",
        {
            "deploy.md": "# Deploy\n\nThe deploy plan, step by step.\n",
            "canary.md": "# Canary\n\nA canary deploy goes first.\n",
            "ops/rollback.md": "# Rollback\n\nHow to roll back a deploy.\n",
        },
    )
    path = tmp_path / "k.db"
    assert main(["--store", str(path), "sources", "add", str(notes), "--name", "notes"]) == 0
    assert main(["--store", str(path), "index", "--no-embed"]) == 0
    return path


def _paths(capsys, store, *args) -> list[str]:
    capsys.readouterr()
    assert main(["--store", str(store), "search", "--format", "paths", *args]) == 0
    return [line.rsplit("/", 1)[-1] for line in capsys.readouterr().out.splitlines()]


def test_an_exclusion_typed_as_its_own_word_leaves_the_word_out(store, capsys):
    assert "canary.md" in _paths(capsys, store, "deploy")
    found = _paths(capsys, store, "deploy", "-canary")
    assert found and "canary.md" not in found


def test_query_words_may_follow_the_options(store, capsys):
    assert _paths(capsys, store, "deploy", "-n", "5", "path:ops") == ["rollback.md"]


def test_a_mistyped_long_option_is_still_refused(store, capsys):
    with pytest.raises(SystemExit) as stop:
        main(["--store", str(store), "search", "deploy", "--jsn"])
    assert stop.value.code == 2
    assert "--jsn" in capsys.readouterr().err


def test_words_after_another_command_are_refused(store, capsys):
    with pytest.raises(SystemExit):
        main(["--store", str(store), "status", "extra"])


@pytest.mark.parametrize("limit", ["0", "-3", "many"])
def test_a_result_count_below_one_is_refused(store, capsys, limit):
    with pytest.raises(SystemExit) as stop:
        main(["--store", str(store), "search", "deploy", "-n", limit])
    assert stop.value.code == 2
    assert "-n/--limit" in capsys.readouterr().err


def test_an_unknown_model_is_refused_and_the_setting_kept(store, capsys):
    assert main(["--store", str(store), "models", "use", "UNKNOWN"]) == 2
    assert "Unknown embedding model 'UNKNOWN'" in capsys.readouterr().err
    assert main(["--store", str(store), "settings", "set", "embedding_model", "nope"]) == 2
    capsys.readouterr()
    assert main(["--store", str(store), "settings"]) == 0
    shown = capsys.readouterr().out
    assert "UNKNOWN" not in shown and "nope" not in shown


def test_a_catalog_model_is_stored_as_the_catalog_spells_it(store, capsys):
    assert main(["--store", str(store), "models", "use", "baai/bge-small-en-v1.5"]) == 0
    assert "Model set to BAAI/bge-small-en-v1.5" in capsys.readouterr().out


def test_models_with_a_word_other_than_use_says_how_it_is_used(store, capsys):
    assert main(["--store", str(store), "models", "bogus"]) == 2
    assert "kenning models use NAME" in capsys.readouterr().err


def test_linking_a_repository_shows_its_branch_and_last_commit(tmp_path, capsys, monkeypatch):
    from gitutil import git, make_repo

    monkeypatch.setenv("KENNING_MODEL", "fake")
    repo = make_repo(tmp_path, branch="trunk")
    (repo / "a.md").write_text("# A\n")
    git(repo, "add", "a.md")
    git(repo, "commit", "-q", "-m", "First \x1b[31mred\x1b[0m note")
    assert main(["--store", str(tmp_path / "k.db"), "sources", "add", str(repo), "--git"]) == 0
    out = capsys.readouterr().out
    assert "branch trunk" in out
    sha = git(repo, "rev-parse", "--short=7", "HEAD").strip()
    assert f"last commit {sha} First" in out and "Kenning Test" in out
    assert "\x1b" not in out


def test_rebuild_without_a_backup_does_not_claim_to_have_re_added_anything(tmp_path, capsys):
    store = tmp_path / "k.db"
    store.write_bytes(b"not a database")
    assert main(["--store", str(store), "rebuild"]) == 0
    out = capsys.readouterr().out
    assert "No sources backup was found" in out and "Re-added" not in out


def test_a_query_of_filters_only_does_not_load_the_model(store, capsys, monkeypatch):
    from kenning.workspace.workspace import Workspace

    loads = []
    real = Workspace.load_query_embedder

    def counting(self):
        loads.append(1)
        return real(self)

    monkeypatch.setattr(Workspace, "load_query_embedder", counting)
    assert _paths(capsys, store, "path:ops") == ["rollback.md"]
    assert loads == []
    assert _paths(capsys, store, "rollback")
    assert loads == [1]


COMMAND_LINES = [
    [],
    ["-h"],
    ["--version"],
    ["bogus"],
    ["--store"],
    ["--sto", "k.db", "status", "--help"],  # an abbreviated global option: every parser
    ["--store", "k.db", "-v", "--model=fake", "search", "-h"],
    ["search"],
    ["search", "deploy", "--jsn"],
    ["search", "deploy", "-n", "0"],
    ["search", "deploy", "-canary", "--mode", "lexical", "tag:ops"],
    ["status", "--bogus"],
    ["status", "--json"],
    ["sources", "-h"],
    ["sources"],
    ["sources", "add", "-h"],
    ["settings", "set", "-h"],
    ["settings", "set", "nonsense", "1"],
    ["links", "-h"],
    ["tags", "extra"],
    ["mcp", "--max-bytes", "x"],
    ["serve", "-h"],
    ["completion", "tcsh"],
    ["store", "upgrade"],
    *([name, "--help"] for name in ("gui", "index", "eval", "models", "rebuild", "store", "completion", "tags")),
]


def _parsed(argv, capsys):
    from kenning.cli.main import parse_arguments

    capsys.readouterr()
    try:
        outcome = vars(parse_arguments(argv))
    except SystemExit as exc:
        outcome = {"exit": exc.code}
    out = capsys.readouterr()
    return outcome, out.out, out.err


@pytest.mark.parametrize("argv", COMMAND_LINES, ids=" ".join)
def test_a_command_line_parses_and_words_its_help_and_errors_as_the_whole_parser_does(argv, capsys, monkeypatch):
    """Issue #27 item 4: only the named command's parser is built; nothing it prints or
    parses differs from the parser of every command."""
    from kenning.cli import main as cli_main

    assert cli_main._command_in(["--store", "x", "-v", "status"]) == "status"
    narrowed = _parsed(argv, capsys)
    monkeypatch.setattr(cli_main, "_command_in", lambda words: None)
    assert narrowed == _parsed(argv, capsys)


def test_a_command_builds_only_its_own_parser(monkeypatch):
    import argparse

    from kenning.cli.main import build_parser, parse_arguments

    built: list[str | None] = []
    real = argparse.ArgumentParser.__init__

    def counting(self, *args, **kwargs):
        built.append(kwargs.get("prog"))
        real(self, *args, **kwargs)

    monkeypatch.setattr(argparse.ArgumentParser, "__init__", counting)
    assert parse_arguments(["--store", "k.db", "status", "--json"]).json
    assert len(built) == 2  # kenning's and status's
    built.clear()
    build_parser()
    assert len(built) > 20  # every command's, sub-actions too: the count above can fail
