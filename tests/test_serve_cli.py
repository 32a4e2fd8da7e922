"""Issue #27 item 2: the CLI through a running service prints what it prints in-process.

Every comparison runs the same command twice on the same store, as a user's shell
would: once sent to `kenning serve` (the thin client), once with --no-service.
"""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys

import pytest

from kenning.embedding import FakeEmbedder
from kenning.storage import open_store
from kenning_testing import index_folder, json_hits, write_files
from serve_testing import APP, kenning, kenning_env, ping, running_service, wait_until

NOTES = {
    "retries.md": "# Retry policy\n\nThe client retries with exponential backoff.\nJitter avoids herds.\n",
    "deploy.md": "---\ntags: [ops]\n---\n# Deploying\n\nDeploy with the blue green switch after the retries settle.\n",
    "sailing.md": "# Sailing\n\nReefing the mainsail when the wind rises. TODO: check the jib.\n",
    "code/pool.py": "def connection_pool(size):\n    '''A pool of sockets.'''\n    return [None] * size\n",
    "tests/test_pool.py": "def test_pool():\n    assert connection_pool(2)\n",
    "weird.md": "# Odd \x1b[31mtitle\n\nAn escape \x1b]0;pwned\x07 hidden in a note, and bidi \u202e text.\n",
}

COMMANDS = [
    ["search", "retries"],
    ["search", "--mode", "lexical", "retries", "backoff"],
    ["search", "--json", "--explain", "deploy", "switch"],
    ["search", "--explain", "-n", "2", "mainsail"],
    ["search", "--format", "vimgrep", "pool"],
    ["search", "--format", "paths", "tag:ops"],
    ["search", "tag:ops"],
    ["search", "retires"],  # a typo: corrected words, a banner
    ["search", "zzqxv"],  # nothing at all
    ["search", "escape", "title"],  # control characters in the note: made visible
    ["search", "--mode", "vector", "wind"],
    ["search", "pool", "tag:test"],
    ["search"],  # a usage error, worded by argparse
    ["search", "--mode", "nonsense", "x"],
    ["status"],
    ["tags"],
    ["tags", "--names", "--as-filter"],  # what shell completion asks
    ["links", "retries.md"],
    ["links", "--json", "deploy.md"],
    ["links", "--unresolved"],
    ["links", "no-such-note.md"],  # an error, worded as in-process
]


FUTURE = 4_070_908_800  # 2099-01-01: recency is exactly 1 whenever the test runs (signals.recency)


@pytest.fixture
def served_store(tmp_path):
    notes = write_files(tmp_path / "notes", NOTES)
    for path in notes.rglob("*"):
        os.utime(path, (FUTURE, FUTURE))  # scores that do not move with the clock between two runs
    path = tmp_path / "store" / "kenning.db"
    store = open_store(path)
    index_folder(store, notes, FakeEmbedder(), name="notes")
    store.close()
    return path


def _served_and_not(store, args, env=None):
    served = kenning(store, *args, env=env)
    local = kenning(store, *args[:1], "--no-service", *args[1:], env=env) if args else None
    return served, local


@pytest.mark.parametrize("args", COMMANDS, ids=[" ".join(c) for c in COMMANDS])
def test_a_served_command_prints_byte_for_byte_what_it_prints_in_process(served_store, args):
    with running_service(served_store, "--no-watch"):
        served, local = _served_and_not(served_store, args)
        assert _served_by_service(served_store, args)
    assert served.returncode == local.returncode
    assert served.stdout == local.stdout
    assert served.stderr == local.stderr


def _served_by_service(store, args) -> bool:
    """The thin client got its answer from the service (so the comparison compared something)."""
    from kenning.serve import client

    request = client.request_for(args, str(store), kenning_env(store), (False, False))
    answer = client.ask(str(store), request)
    return bool(answer and answer.get("ok"))


def test_the_settings_in_the_clients_environment_apply_to_its_own_request(served_store):
    env = kenning_env(served_store, KENNING_LIMIT="1", NO_COLOR="1")
    with running_service(served_store, "--no-watch"):
        served, local = _served_and_not(served_store, ["search", "--json", "retries"], env=env)
        plain = kenning(served_store, "search", "--json", "retries")
    assert served.stdout == local.stdout
    assert len(json_hits(served.stdout.decode())) == 1
    assert len(json_hits(plain.stdout.decode())) > 1  # the next client, without the variable, gets the default


def test_colours_on_a_terminal_are_the_same_through_the_service(served_store):
    """Run under a pseudo-terminal: highlighted words come as colour codes, identically."""
    with running_service(served_store, "--no-watch"):
        served = _on_a_terminal(served_store, ["search", "--mode", "lexical", "retries"])
        local = _on_a_terminal(served_store, ["search", "--no-service", "--mode", "lexical", "retries"])
    assert b"\x1b[1;33m" in served
    assert served == local


def _on_a_terminal(store, args) -> bytes:
    pid, fd = pty.fork()
    if pid == 0:  # the child: a kenning command whose stdout and stderr are the terminal
        env = kenning_env(store)
        os.execve(sys.executable, [sys.executable, "-m", "kenning.launcher", "--store", str(store), *args], env)
    out = b""
    while True:
        try:
            chunk = os.read(fd, 65536)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
    os.waitpid(pid, 0)
    os.close(fd)
    return out


def test_a_client_with_another_model_is_answered_in_its_own_process(served_store):
    with running_service(served_store, "--no-watch"):
        answer_env = kenning_env(served_store, KENNING_MODEL="default")
        from kenning.serve import client

        request = client.request_for(["search", "x"], str(served_store), answer_env, (False, False))
        answer = client.ask(str(served_store), request)
    assert answer is not None and answer["ok"] is False and answer["fallback"] is True
    assert "model" in answer["error"]


RUNNER = """
import json, sys
from kenning.launcher import main
code = main(sys.argv[1:])
sys.stdout.flush()
print("MODULES " + json.dumps(sorted(sys.modules)), file=sys.stderr)
sys.exit(code)
"""
# Beyond the interpreter's own start-up, what the thin client may load.
CLIENT_MODULES_BUDGET = 30


def _modules(store, args, env=None, cwd=None):
    done = subprocess.run(
        [sys.executable, "-c", RUNNER, "--store", str(store), *args],
        env=env or kenning_env(store),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=cwd,
    )
    assert done.returncode == 0, done.stderr
    line = next(x for x in done.stderr.splitlines() if x.startswith("MODULES "))
    return set(json.loads(line.removeprefix("MODULES "))), done.stdout


def _interpreter_modules() -> set[str]:
    done = subprocess.run(
        [sys.executable, "-c", "import json, sys; print(json.dumps(sorted(sys.modules)))"],
        capture_output=True,
        text=True,
        check=True,
        env=dict(os.environ, PYTHONPATH=APP),
    )
    return set(json.loads(done.stdout))


@pytest.mark.parametrize(
    "args", [["search", "retries"], ["search", "--mode", "lexical", "retries"], ["status"], ["links", "retries.md"]]
)
def test_the_thin_client_imports_almost_nothing(served_store, args):
    with running_service(served_store, "--no-watch"):
        loaded, out = _modules(served_store, args)
    assert "retries" in out or "documents" in out or "link" in out  # the service answered
    heavy = sorted(
        m
        for m in loaded
        if m.split(".")[0] in ("numpy", "fastembed", "onnxruntime", "apsw", "mcp", "pathlib", "argparse")
        or m.startswith(("kenning.search", "kenning.cli", "kenning.workspace", "kenning.storage", "kenning.core"))
    )
    assert heavy == []
    extra = loaded - _interpreter_modules()
    assert len(extra) <= CLIENT_MODULES_BUDGET, sorted(extra)


def test_a_store_named_relative_to_the_clients_folder_is_served(served_store, tmp_path):
    """`cd project && kenning --store store/kenning.db search …`: the service (started
    elsewhere) resolves the name in the client's folder, as the command would."""
    relative = os.path.relpath(served_store, tmp_path)
    env = kenning_env(served_store)
    with running_service(served_store, "--no-watch"):
        loaded, out = _modules(relative, ["search", "--mode", "lexical", "retries"], env, tmp_path)
        _, out_local = _modules(relative, ["search", "--no-service", "--mode", "lexical", "retries"], env, tmp_path)
        loaded_status, status = _modules(relative, ["status"], env, tmp_path)
        _, status_local = _modules(relative, ["status", "--no-service"], env, tmp_path)
    assert "retries.md" in out
    assert "kenning.search.engine" not in loaded and "kenning.cli" not in loaded_status  # the service answered
    assert out == out_local
    assert status == status_local


def test_without_a_service_the_command_runs_in_process(served_store):
    loaded, out = _modules(served_store, ["search", "--mode", "lexical", "retries"])
    assert "retries.md" in out
    assert "kenning.search.engine" in loaded


def test_no_service_forces_the_old_path_while_one_runs(served_store):
    with running_service(served_store, "--no-watch"):
        loaded, out = _modules(served_store, ["search", "--no-service", "--mode", "lexical", "retries"])
    assert "retries.md" in out
    assert "kenning.search.engine" in loaded


def test_what_the_watcher_indexes_is_found_through_the_service(served_store, tmp_path):
    with running_service(served_store):
        wait_until(lambda: (ping(served_store) or {}).get("watching") is True, what="the watch in place")
        (tmp_path / "notes" / "kites.md").write_text("# Kites\n\nFlying kites on windy beaches.\n", encoding="utf-8")
        found = wait_until(
            lambda: b"kites.md" in kenning(served_store, "search", "--mode", "lexical", "kites").stdout,
            what="the new note found",
        )
    assert found


def test_untrusted_text_reaches_a_terminal_through_the_service_only_made_visible(tmp_path):
    """A hostile file name and note body, printed on a terminal (colours on): the
    service's answer carries no control sequence of theirs, as in-process."""
    hostile = "Escape \x1b]0;pwned\x07 here, \x1b[2J a clear and \u202e reversed \x9b31m text.\n"
    notes = write_files(tmp_path / "notes", {"evil\x1b[31m\x07name.md": f"# Evil\n\n{hostile}"})
    path = tmp_path / "store" / "kenning.db"
    store = open_store(path)
    index_folder(store, notes, FakeEmbedder(), name="notes")
    store.close()
    with running_service(path, "--no-watch"):
        assert _served_by_service(path, ["search", "escape"])
        served = _on_a_terminal(path, ["search", "--mode", "lexical", "escape"])
        explained = _on_a_terminal(path, ["search", "--explain", "escape", "clear"])
        local = _on_a_terminal(path, ["search", "--no-service", "--mode", "lexical", "escape"])
    assert b"evil" in served and b"Escape" in served
    for out in (served, explained):
        for raw in (b"\x1b]0;", b"\x07", b"\x1b[2J", b"\x1b[31m", "\u202e".encode(), "\x9b".encode()):
            assert raw not in out, (raw, out)
    assert served == local
