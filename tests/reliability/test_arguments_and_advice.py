"""Arguments are bounded with clear words, and advice never costs the user their data
(issue #13, item 14, and siblings)."""

from __future__ import annotations

import contextlib
import errno
import io
from pathlib import Path

import apsw
import pytest

from kenning.cli.main import main
from kenning.storage import open_store
from kenning.storage.vectors import FINGERPRINT_KEY
from kenning.workspace.settings import FIELDS, LEGACY_KEY
from kenning_testing import chunk_ids, json_hits
from reliability.helpers import cli, count, write_files


def _cli_exit(db: Path, *argv: str) -> tuple[int, str]:
    """Like cli(), for argument errors (argparse exits)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            rc = main(["--store", str(db), "--model", "fake", *argv])
        except SystemExit as exc:
            rc = exc.code
    return rc, err.getvalue()


@pytest.fixture
def db(tmp_path):
    notes = write_files(tmp_path / "notes", {"a.md": "# A\n\nalpha note\n"})
    path = tmp_path / "home" / "k.db"
    cli(path, "sources", "add", str(notes))
    cli(path, "index")
    return path


@pytest.mark.parametrize("value", ["9223372036854775807", "0", "-1", "201", "1e3", "ten", "99999999999999999999999"])
def test_result_count_is_bounded_with_a_clear_message(db, value):
    rc, err = _cli_exit(db, "search", "-n", value, "alpha")
    assert rc == 2 and "Traceback" not in err
    assert "-n" in err and ("out of range" in err or "not a whole number" in err), err
    count("streams: bad arguments refused")


def test_result_count_in_range_works(db):
    rc, out, _ = cli(db, "search", "-n", "1", "alpha")
    assert rc == 0 and "a.md" in out


@pytest.mark.parametrize(
    "argv", [["models", "use", "no-such-model"], ["models", "foo"], ["models", "use"], ["models", "list", "x"]]
)
def test_models_commands_refuse_what_they_do_not_know(db, argv):
    rc, out, err = cli(db, *argv)
    assert rc == 2 and "kenning models" in err, (out, err)
    assert "dim" not in out  # no silent listing instead
    store = open_store(db)
    try:
        # Every setting a model name can be kept in: the user's settings, the app's
        # legacy row, and the model the vectors are from.
        stored = {key: store.settings.get(key) for key in (*FIELDS, LEGACY_KEY, FINGERPRINT_KEY)}
        assert "no-such-model" not in str(stored)
    finally:
        store.close()


def test_models_use_a_known_model_and_list(db):
    assert cli(db, "models", "use", "fake")[0] == 0
    rc, out, _ = cli(db, "models")
    assert rc == 0 and "dim" in out


@pytest.mark.parametrize(
    "exc",
    [
        apsw.ReadOnlyError("attempt to write a readonly database"),
        apsw.FullError("database or disk is full"),
        apsw.IOError("disk I/O error"),
        apsw.CantOpenError("unable to open database file"),
        PermissionError(errno.EACCES, "Permission denied", "/x/k.db"),
        OSError(errno.ENOSPC, "No space left on device", "/x/k.db"),
        OSError(errno.EROFS, "Read-only file system", "/x/k.db"),
    ],
    ids=lambda e: type(e).__name__ + str(getattr(e, "errno", "") or ""),
)
def test_permission_and_disk_problems_never_advise_rebuild(exc):
    from kenning.workspace.messages import user_message

    message = user_message(exc, "/x/k.db")
    assert "rebuild" not in message, message
    count("data-loss: advice that keeps the store")


def test_a_read_only_store_is_not_sent_to_rebuild(db, monkeypatch):
    """The store file 0400 (simulated: root ignores file modes)."""
    real = apsw.Connection

    def read_only(path, *args, **kwargs):
        kwargs["flags"] = apsw.SQLITE_OPEN_READONLY
        return real(path, *args, **kwargs)

    monkeypatch.setattr(apsw, "Connection", read_only)
    rc, out, err = cli(db, "index")
    assert rc != 0 and "rebuild" not in err and "Traceback" not in err, err


def test_a_query_cut_at_the_limit_says_so(db):
    rc, out, _ = cli(db, "search", "--mode", "lexical", "alpha " + "x" * 4500)
    assert rc == 0 and "cut to its first 4000 characters" in out


@pytest.mark.parametrize("date", ["1e38", "9999-12-31", "3000-01-01"])
def test_a_future_date_gets_no_recency_beyond_now(tmp_path, date):
    notes = write_files(
        tmp_path / "notes",
        {"future.md": f"---\ndate: {date}\n---\n# F\n\nalpha words\n", "today.md": "# T\n\nalpha words\n"},
    )
    db = tmp_path / "home" / "k.db"
    cli(db, "sources", "add", str(notes))
    cli(db, "index")
    rc, out, err = cli(db, "search", "--mode", "lexical", "--json", "--explain", "alpha")
    assert rc == 0, err
    hits = {h["path"]: h for h in json_hits(out)}
    future = hits["future.md"]["breakdown"]
    assert future["recency"] <= 1.0  # "now" is the most recent a note can be
    assert future["recency"] <= hits["today.md"]["breakdown"]["recency"] + 1e-3


def test_a_file_of_tiny_sections_is_capped_and_reported(tmp_path):
    from kenning.ingest.extracted import MAX_CHUNKS_PER_FILE

    body = "".join(f"# S{i}\n\nw{i}\n\n" for i in range(MAX_CHUNKS_PER_FILE + 500))
    notes = write_files(tmp_path / "notes", {"many.md": body, "small.md": "# s\n\nsmall\n"})
    db = tmp_path / "home" / "k.db"
    cli(db, "sources", "add", str(notes))
    rc, out, _ = cli(db, "index", "--no-embed")
    assert rc == 0
    store = open_store(db)
    try:
        n = len(chunk_ids(store, "many.md"))
    finally:
        store.close()
    assert n == MAX_CHUNKS_PER_FILE
    rc, out, _ = cli(db, "status")
    assert "many.md: partial" in out and f"first {MAX_CHUNKS_PER_FILE}" in out
    count("data-loss: huge files capped and reported")


@pytest.mark.parametrize("line", ["5", "null", '["a"]', '"text"', '{"text": "no id"}', "{broken"])
def test_eval_on_a_corpus_line_that_is_not_an_object(tmp_path, line):
    folder = tmp_path / "beir"
    write_files(
        folder,
        {
            "corpus.jsonl": '{"_id": "d1", "text": "alpha"}\n' + line + "\n",
            "queries.jsonl": '{"_id": "q1", "text": "alpha"}\n',
            "qrels.tsv": "query-id\tcorpus-id\tscore\nq1\td1\t1\n",
        },
    )
    rc, out, err = cli(tmp_path / "k.db", "eval", str(folder), "--mode", "lexical")
    assert rc == 2 and "Traceback" not in err and "corpus.jsonl" in err, err
