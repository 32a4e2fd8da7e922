"""Human output never hands a terminal a control character from untrusted text, and
output streams fail like standard Unix tools (issue #13, items 3 and 13, and siblings:
titles, snippets, file names, source names, skipped-file details, error messages that
quote paths, argparse messages; JSON stays valid JSON; closed pipes, full disks and
encodings that cannot show a name).
"""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
from pathlib import Path

import pytest

import kenning
from kenning.cli.main import main
from kenning_testing import json_hits
from reliability.helpers import cli, count, write_files

APP = str(Path(kenning.__file__).resolve().parents[1])  # the code under test, for subprocesses

# Everything a hostile note could use to rewrite a terminal.
ATTACKS = {
    "osc-title": "\x1b]0;pwned title\x07",
    "clear": "\x1b[2J\x1b[H",
    "osc8-link": "\x1b]8;;http://evil.invalid/\x1b\\click\x1b]8;;\x1b\\",
    "sgr-reset": "\x1b[0m",
    "c1-csi": "\x9b31m",
    "c1-osc": "\x9d0;t\x9c",
    "del": "x\x7fy",
    "bell-bs-cr": "\x07\x08\r\x0b\x0c",
    "bidi": "\u202eevil\u202c\u2066\u2069",
    "line-sep": "a\u2028b\u2029",
    "nul-ish": "\x01\x02\x1f",
}
PAYLOAD = "".join(ATTACKS.values())


def _unsafe(text: str) -> list[str]:
    bad = []
    for ch in text:
        code = ord(ch)
        if (
            (code < 32 and ch not in "\n\t")
            or 0x7F <= code <= 0x9F
            or ch in "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u2028\u2029\u200e\u200f\u061c"
        ):
            bad.append(repr(ch))
    return bad


@pytest.fixture
def hostile_store(tmp_path):
    name_with_escape = "esc\x1b]0;file\x07name.md"
    notes = write_files(
        tmp_path / "notes",
        {
            "a.md": f"---\ntitle: Title {ATTACKS['osc-title']} {ATTACKS['c1-csi']}\n---\n# Head\n\nalpha {PAYLOAD} omega\n",
            name_with_escape: f"alpha in an oddly named file {ATTACKS['clear']}\n",
            "bin\x1b[2J.md": b"\x00\x01binary",
        },
    )
    db = tmp_path / "home" / "k.db"
    assert cli(db, "sources", "add", str(notes), "--name", "src\x1b[31mred\u202e")[0] == 0
    assert cli(db, "index", "--no-embed")[0] == 0
    return db, notes


COMMANDS = [
    ["search", "--mode", "lexical", "alpha"],
    ["search", "--mode", "lexical", "--explain", "alpha"],
    ["search", "--mode", "lexical", "alpha\x1b[2J"],
    ["sources", "list"],
    ["status"],
    ["index", "--no-embed"],
    ["sources", "remove", "nope\x1b]0;x\x07"],
    ["sources", "add", "/nowhere/\x1b]0;x\x07\x9b"],
    ["search", "--mode", "nonsense\x1b[2J", "x"],
]


@pytest.mark.parametrize("argv", COMMANDS, ids=lambda a: " ".join(a)[:30].encode("unicode_escape").decode())
def test_human_output_shows_no_control_character(hostile_store, argv):
    db, _ = hostile_store
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), contextlib.suppress(SystemExit):
        main(["--store", str(db), "--model", "fake", *argv])
    text = out.getvalue() + err.getvalue()
    assert text.strip()
    assert not _unsafe(text), (_unsafe(text)[:10], text[:500])
    count("security: terminal outputs checked")


def test_the_hostile_text_is_still_shown_visibly(hostile_store):
    db, _ = hostile_store
    rc, out, _ = cli(db, "search", "--mode", "lexical", "alpha")
    assert rc == 0
    # Names are shown escaped; snippets keep their length (match spans) with U+FFFD.
    assert "]0;pwned title" in out and "\ufffd" in out
    assert "esc\\u001b]0;file\\u0007name.md" in out


def test_json_lines_stay_json_and_keep_the_text(hostile_store):
    db, _ = hostile_store
    rc, out, _ = cli(db, "search", "--mode", "lexical", "--json", "alpha")
    assert rc == 0
    assert not _unsafe(out)
    hits = json_hits(out)
    assert any(ATTACKS["c1-csi"] in h["title"] + h["snippet"] for h in hits)  # exact text for programs
    assert any("\x1b]0;file\x07" in h["path"] for h in hits)


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_colour_on_a_terminal_comes_only_from_kenning(hostile_store, monkeypatch):
    db, _ = hostile_store
    monkeypatch.delenv("NO_COLOR", raising=False)
    out = _Tty()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        assert main(["--store", str(db), "--model", "fake", "search", "--mode", "lexical", "alpha"]) == 0
    text = out.getvalue()
    assert "\x1b[1;33m" in text  # the match highlight
    rest = text.replace("\x1b[1;33m", "").replace("\x1b[0m", "")
    assert not _unsafe(rest)
    assert "\ufffd[0m" in text  # the note's own reset code is neutralised, not obeyed


# -- streams ------------------------------------------------------------------------


def _run(db: Path, *argv: str, stdout=subprocess.PIPE, env: dict | None = None) -> subprocess.CompletedProcess:
    full_env = {**os.environ, "PYTHONPATH": APP, **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "kenning.cli.main", "--store", str(db), "--model", "fake", *argv],
        stdout=stdout,
        stderr=subprocess.PIPE,
        env=full_env,
        timeout=120,
        check=False,
    )


@pytest.fixture
def plain_store(tmp_path):
    notes = write_files(
        tmp_path / "notes", {f"caf\u00e9-{i}.md": f"# Caf\u00e9 {i}\n\nalpha words {i}\n" for i in range(30)}
    )
    db = tmp_path / "home" / "k.db"
    cli(db, "sources", "add", str(notes))
    cli(db, "index", "--no-embed")
    return db


@pytest.mark.parametrize(
    "argv",
    [["search", "--mode", "lexical", "-n", "30", "alpha"], ["sources", "list"], ["status"], ["--help"], ["models"]],
)
def test_closed_pipe_ends_quietly(plain_store, argv):
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader is gone before anything is written (`| head -0`)
    try:
        done = _run(plain_store, *argv, stdout=write_end)
    finally:
        os.close(write_end)
    assert done.stderr == b"", done.stderr.decode()
    assert done.returncode in (0, 141)
    count("streams: closed pipes")


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
@pytest.mark.parametrize("argv", [["search", "--mode", "lexical", "alpha"], ["sources", "list"], ["status"]])
def test_full_disk_is_one_line_not_a_traceback(plain_store, argv):
    with open("/dev/full", "w") as full:
        done = _run(plain_store, *argv, stdout=full)
    err = done.stderr.decode()
    assert done.returncode == 1
    assert err.count("\n") == 1 and "No space left on device" in err and "Traceback" not in err
    count("streams: full disks")


@pytest.mark.parametrize("encoding", ["ascii", "latin-1"])
def test_an_encoding_that_cannot_show_a_name_gets_replacement_characters(plain_store, encoding):
    for argv in (["search", "--mode", "lexical", "alpha"], ["sources", "list"], ["status"]):
        done = _run(plain_store, *argv, env={"PYTHONIOENCODING": encoding, "LC_ALL": "C"})
        assert done.returncode == 0, done.stderr.decode()
        assert b"Traceback" not in done.stderr
    done = _run(plain_store, "search", "--mode", "lexical", "alpha", env={"PYTHONIOENCODING": "ascii"})
    assert b"caf?-" in done.stdout
    count("streams: narrow encodings")
