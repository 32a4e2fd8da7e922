"""The application layer: settings, search plans, sources, error messages, the CLI on top."""

from __future__ import annotations

import errno
import json
import logging

import apsw
import pytest

from kenning.cli.main import main as cli
from kenning.core.errors import SourceError
from kenning.search.fusion import DEFAULT_FUSION
from kenning.storage.settings import get_setting, set_json
from kenning.workspace import Settings, SettingsError, Workspace, plan_search, search_options, user_message
from kenning.workspace import settings as settings_def
from kenning.workspace.searching import LOADING_NOTE, NO_VECTORS_NOTE
from kenning_testing import write_files


@pytest.fixture
def ws(tmp_path):
    w = Workspace(tmp_path / "k.db", environ={})
    yield w
    w.close()


# -- settings ----------------------------------------------------------------------


def test_defaults_until_something_is_stored(ws):
    assert ws.settings == Settings()
    assert ws.settings.fusion == DEFAULT_FUSION and ws.settings.limit == 20


def test_changes_are_validated_stored_and_read_back_by_another_connection(ws, tmp_path):
    ws.update_settings(fusion="linear", limit=7, weights={"vector": 2.5}, size_cap=3 * settings_def.MB)
    with Workspace(tmp_path / "k.db", environ={}) as other:
        seen = other.settings
    assert (seen.fusion, seen.limit, seen.size_cap) == ("linear", 7, 3 * settings_def.MB)
    assert seen.weights["vector"] == 2.5 and seen.weights["porter"] == 1.0  # the rest keep their defaults


@pytest.mark.parametrize(
    ("name", "value", "words"),
    [
        ("fusion", "max", "fusion must be one of rrf, linear"),
        ("limit", 0, "between 1 and 200"),
        ("limit", "many", "whole number"),
        ("size_cap", 600 * settings_def.MB, "between 1 and 512 MB"),
        ("weights", {"porter": 9}, "between 0 and 5"),
        ("weights", {"bm25": 1}, "no ranked list 'bm25'"),
        ("embedding_model", " ", "needs a name"),
        ("colour", "red", "no setting 'colour'"),
    ],
)
def test_a_bad_value_is_refused_with_what_is_accepted(ws, name, value, words):
    with pytest.raises(SettingsError, match=words):
        ws.update_settings(**{name: value})
    assert ws.settings == Settings()  # nothing half-written


def test_the_environment_wins_everywhere_but_is_never_saved(tmp_path):
    environ = {"KENNING_MODEL": "fake", "KENNING_FUSION": "linear", "KENNING_LIMIT": "5", "KENNING_SIZE_CAP_MB": "9"}
    with Workspace(tmp_path / "k.db", environ=environ) as ws:
        assert (ws.model_name, ws.settings.fusion, ws.settings.limit) == ("fake", "linear", 5)
        assert ws.settings.size_cap == 9 * settings_def.MB
        assert set(ws.fixed_settings()) == {"embedding_model", "fusion", "limit", "size_cap"}
        ws.update_settings(weights={"trigram": 0.25})  # saving one setting...
        assert get_setting(ws.store, "embedding_model") is None  # ...stores none of the environment's
        assert ws.stored_settings().fusion == DEFAULT_FUSION


def test_a_malformed_environment_value_is_an_error_naming_the_variable(tmp_path):
    ws = Workspace(tmp_path / "k.db", environ={"KENNING_LIMIT": "lots"})
    with pytest.raises(SettingsError, match="KENNING_LIMIT='lots'"):
        ws.settings  # noqa: B018
    ws.close()


def test_the_model_flag_beats_the_environment(tmp_path):
    with Workspace(tmp_path / "k.db", model="fake", environ={"KENNING_MODEL": "default"}) as ws:
        assert ws.model_name == "fake" and ws.fixed_settings()["embedding_model"] == "--model"


def test_settings_saved_by_an_older_app_are_read(ws):
    set_json(ws.store, "gui_settings", {"limit": 33, "fusion": "linear", "mode": "vector", "size_cap": "junk"})
    assert (ws.settings.limit, ws.settings.fusion) == (33, "linear")
    assert ws.settings.size_cap == Settings().size_cap  # an unreadable value falls back to the default


def test_typed_text_becomes_values():
    assert settings_def.parse_text("weights", "vector=2, porter=0.5")["vector"] == 2.0
    assert settings_def.parse_text("size_cap", "16 MB") == 16 * settings_def.MB
    assert settings_def.parse_text("limit", "12") == 12
    with pytest.raises(SettingsError, match="name=number"):
        settings_def.parse_text("weights", "vector")


# -- which engine a mode gets ---------------------------------------------------------


@pytest.mark.parametrize(
    ("mode", "loaded", "vectors", "error", "expected"),
    [
        ("lexical", True, True, None, ("lexical", False, None)),
        ("hybrid", True, True, None, ("hybrid", True, None)),
        ("vector", True, True, None, ("vector", True, None)),
        ("hybrid", False, False, None, ("lexical", False, LOADING_NOTE)),
        ("vector", True, False, None, ("lexical", False, NO_VECTORS_NOTE)),
        ("hybrid", False, False, "no model files", ("lexical", False, "no model files")),
    ],
)
def test_one_rule_for_what_a_mode_runs_as(mode, loaded, vectors, error, expected):
    plan = plan_search(mode, model_loaded=loaded, vectors_ready=vectors, model_error=error)
    assert (plan.mode, plan.semantic) == expected[:2]
    if expected[2] is None:
        assert plan.note is None
    else:
        assert expected[2] in plan.note


def test_search_options_come_from_the_settings_unless_a_flag_says_otherwise():
    s = Settings(fusion="linear", limit=9, weights={"porter": 2.0, "trigram": 0.5, "vector": 1.0, "feedback": 0.5})
    opts = search_options(s, "hybrid")
    assert (opts.limit, opts.fusion, opts.weights["porter"]) == (9, "linear", 2.0)
    assert search_options(s, "hybrid", limit=3, fusion="rrf").limit == 3


# -- sources ------------------------------------------------------------------------


def test_sources_are_managed_by_name_or_id(ws, notes):
    write_files(notes, {"a.md": "# A\n\nalpha"})
    source = ws.add_folder(notes, name="mine", include="*.md, docs/**")
    assert source.include == ("*.md", "docs/**")
    assert not ws.set_enabled("mine", False).enabled
    assert ws.set_globs(source.id, "*.txt", ()).include == ("*.txt",)
    assert ws.remove_source(source).name == "mine"
    assert ws.list_sources() == []


def test_source_checks_speak_to_the_user(ws, tmp_path, notes):
    with pytest.raises(SourceError, match="does not exist"):
        ws.add_folder(tmp_path / "nowhere")
    with pytest.raises(SourceError, match="double quotes"):
        ws.add_folder(notes, name='a"b')
    with pytest.raises(SourceError):
        ws.link_repo(notes)  # not a git repository
    with pytest.raises(SourceError, match="No source named 'x'"):
        ws.remove_source("x")


def test_index_uses_the_size_cap_setting(ws, notes):
    write_files(notes, {"small.md": "# S\n\nsmall", "big.md": "# B\n\n" + "word " * 300_000})
    ws.add_folder(notes, name="n")
    ws.update_settings(size_cap=1 * settings_def.MB)
    run = ws.index(embed=False)
    assert [s.rel_path for _, s in ws.skipped_files("n")] == ["big.md"]
    assert run.reports[0].added == 1


# -- error messages -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("exc", "words"),
    [
        (SourceError("x is not a folder."), "x is not a folder."),
        (apsw.BusyError("database is locked"), "is busy"),
        (apsw.CorruptError("database disk image is malformed"), "kenning rebuild"),
        (apsw.FullError("database or disk is full"), "is full"),
        (PermissionError(errno.EACCES, "Permission denied", "/x/y.md"), "may not open /x/y.md"),
        (OSError(errno.ENOSPC, "No space left on device", "/x"), "disk is full"),
        (ValueError("bad \x1b[31mthing"), "Something went wrong inside Kenning (ValueError: bad ?[31mthing)"),
    ],
)
def test_every_error_becomes_words_a_user_can_act_on(exc, words, tmp_path):
    message = user_message(exc, tmp_path / "k.db")
    assert words in message
    assert "database is locked" not in message and "\x1b" not in message


def test_an_unexpected_errors_text_is_one_short_line():
    message = user_message(RuntimeError("first line\n    second line " + "x" * 500))
    assert "\n" not in message and "first line second line" in message and "…" in message
    assert len(message) < 400


def test_unexpected_errors_name_the_log_that_holds_their_traceback(tmp_path, caplog):
    from kenning.workspace import log_file, report, setup_logging

    path = setup_logging()
    try:
        raise KeyError("inner")
    except KeyError as exc:
        message = report(exc, doing="testing")
    assert str(path) in message and log_file() == path
    for handler in logging.getLogger("kenning").handlers:
        handler.flush()
    text = path.read_text(encoding="utf-8")
    assert "Traceback" in text and "KeyError: 'inner'" in text and "while testing" in text


# -- the CLI on top -------------------------------------------------------------------


def run(capsys, *argv):
    code = cli(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_settings_set_show_and_reset(tmp_path, capsys):
    db = str(tmp_path / "k.db")
    other = "linear" if DEFAULT_FUSION == "rrf" else "rrf"
    assert run(capsys, "--store", db, "settings", "set", "fusion", other)[0] == 0
    code, out, _ = run(capsys, "--store", db, "settings")
    assert code == 0 and other in out and "(set)" in out
    code, _, err = run(capsys, "--store", db, "settings", "set", "limit", "0")
    assert code == 2 and "between 1 and 200" in err
    run(capsys, "--store", db, "settings", "reset", "fusion")
    with Workspace(db, environ={}) as ws:
        assert ws.settings.fusion == DEFAULT_FUSION


def test_cli_search_follows_the_settings_and_says_why_it_is_keywords_only(tmp_path, notes, capsys):
    db = str(tmp_path / "k.db")
    write_files(notes, {"wal.md": "# WAL\n\nwrite ahead logging in sqlite"})
    run(capsys, "--store", db, "sources", "add", str(notes))
    run(capsys, "--store", db, "index", "--no-embed")
    run(capsys, "--store", db, "settings", "set", "fusion", "linear")
    code, out, _ = run(capsys, "--store", db, "--model", "fake", "search", "--json", "--explain", "sqlite")
    assert code == 0
    hits = [h for h in (json.loads(line) for line in out.splitlines() if line.startswith("{")) if h["type"] == "hit"]
    assert hits and all(h["breakdown"]["lists"].keys() <= {"porter", "trigram"} for h in hits)
    code, out, _ = run(capsys, "--store", db, "--model", "fake", "search", "--mode", "vector", "sqlite")
    assert code == 0 and "no vectors for this model yet" in out and "wal.md" in out


def test_cli_status_shows_the_log_file(tmp_path, capsys):
    code, out, _ = run(capsys, "--store", str(tmp_path / "k.db"), "status")
    assert code == 0 and "log: " in out and "kenning.log" in out


def test_cli_verbose_names_the_log_file(tmp_path, capsys):
    from kenning.workspace import log_file

    code, _, err = run(capsys, "--verbose", "--store", str(tmp_path / "k.db"), "status")
    assert code == 0 and f"log file: {log_file()}" in err
    code, _, err = run(capsys, "--store", str(tmp_path / "k.db"), "status")
    assert "log file:" not in err


def test_cli_verbose_shows_the_traceback_of_an_unexpected_error(tmp_path, capsys, monkeypatch):
    from kenning.cli import commands

    def broken(args):
        raise RuntimeError("boom")

    monkeypatch.setitem(commands.HANDLERS, "status", broken)
    code, _, err = run(capsys, "--store", str(tmp_path / "k.db"), "status")
    assert code == 1 and "Something went wrong inside Kenning (RuntimeError: boom)" in err
    assert "Traceback" not in err
    code, _, err = run(capsys, "--verbose", "--store", str(tmp_path / "k.db"), "status")
    assert code == 1 and "Traceback" in err


def test_a_file_the_indexer_fails_on_is_logged_with_its_traceback(ws, notes, monkeypatch):
    from kenning.ingest import textphase
    from kenning.workspace import setup_logging

    path = setup_logging()
    write_files(notes, {"odd.md": "# Odd\n\ntext"})
    ws.add_folder(notes, name="n")

    def broken(*_a, **_k):
        raise ZeroDivisionError("chunker bug")

    monkeypatch.setattr(textphase, "_write_document", broken)
    run = ws.index(embed=False)
    assert run.reports[0].errors == ["odd.md: chunker bug"]  # the run went on and reported it
    for handler in logging.getLogger("kenning").handlers:
        handler.flush()
    text = path.read_text(encoding="utf-8")
    assert "indexing n:odd.md failed" in text and "Traceback" in text and "ZeroDivisionError" in text


def test_log_files_stay_private_across_rotation_whatever_the_umask(monkeypatch):
    import os
    import stat

    from kenning.workspace import logs

    monkeypatch.setattr(logs, "LOG_BYTES", 2_000)
    old_umask = os.umask(0o000)
    try:
        path = logs.setup_logging()
        assert path is not None
        for number in range(200):  # several rotations
            logging.getLogger("kenning.test").info("line %d %s", number, "x" * 40)
    finally:
        os.umask(old_umask)
        logs.setup_logging()
    files = sorted(path.parent.glob(logs.LOG_NAME + "*"))
    assert len(files) == 1 + logs.LOG_BACKUPS
    for file in files:
        assert stat.S_IMODE(file.stat().st_mode) == 0o600, file
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
