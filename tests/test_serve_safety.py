"""Issue #27 item 5: one service per store, no stale socket, this user only, bounded requests."""

from __future__ import annotations

import json
import os
import signal
import socket
import stat
import subprocess
import sys
import threading
import time

import pytest

from kenning.embedding import FakeEmbedder
from kenning.serve import address as addresses
from kenning.serve import client, protocol
from kenning.serve.server import Service, ServiceRunning, running_pid
from kenning.storage import open_store
from kenning_testing import index_folder, write_files
from serve_testing import APP, kenning, kenning_env, ping, running_service, wait_until


def _echo(request, channel):
    channel.send({"ok": True, "echo": request.get("text")})


@pytest.fixture
def service(tmp_path):
    """A Service answering an "echo" op, serving on a thread until the test ends."""
    svc = Service(tmp_path / "k.db", {"echo": _echo}, idle_seconds=None).start()
    thread = threading.Thread(target=svc.serve, daemon=True)
    thread.start()
    yield svc
    svc.stop()
    thread.join(5)


def _raw(svc: Service, data: bytes, *, read: bool = True) -> dict | None:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(10)
        sock.connect(svc.address.socket)
        try:
            sock.sendall(data)
        except BrokenPipeError:
            pass  # refused before the request was read (busy, another user): the answer is there
        if not read:
            return None
        line = protocol.LineReader(sock).read_line(protocol.MAX_RESPONSE_BYTES, 10)
    return json.loads(line) if line else None


def test_the_folder_is_0700_and_the_socket_0600(service):
    assert stat.S_IMODE(os.stat(service.address.folder).st_mode) == 0o700
    assert stat.S_IMODE(os.stat(service.address.socket).st_mode) == 0o600
    assert _raw(service, protocol.encode({"op": "echo", "text": "hi"}))["echo"] == "hi"


def test_a_second_service_for_the_same_store_cannot_start(service, tmp_path):
    with pytest.raises(ServiceRunning) as refused:
        Service(tmp_path / "k.db", {}).start()
    assert str(os.getpid()) in str(refused.value)
    assert running_pid(str(tmp_path / "k.db")) == os.getpid()
    # ... and the first one still answers on its own socket.
    assert _raw(service, protocol.encode({"op": "echo", "text": "still"}))["echo"] == "still"
    other = Service(tmp_path / "other.db", {}).start()  # another store is another service
    other.close()


def test_a_killed_service_leaves_no_socket_that_blocks_the_next(tmp_path):
    notes = write_files(tmp_path / "notes", {"a.md": "# Parsing\n\nParse arguments with argparse.\n"})
    path = tmp_path / "store" / "kenning.db"
    store = open_store(path)
    index_folder(store, notes, FakeEmbedder(), name="notes")
    store.close()
    with running_service(path, "--no-watch") as (proc, _):
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
        address = addresses.address_for(str(path))
        assert os.path.exists(address.socket)  # left behind by the killed service...
        assert running_pid(str(path)) is None  # ...whose lock died with it
        done = kenning(path, "search", "--mode", "lexical", "argparse")  # no one listens: in-process
        assert done.returncode == 0 and b"a.md" in done.stdout
    with running_service(path, "--no-watch") as (_, answer):
        assert answer["pid"] != proc.pid  # the next one took the socket over


def test_a_stopped_service_removes_its_socket_and_a_client_falls_back(tmp_path):
    svc = Service(tmp_path / "k.db", {}, idle_seconds=None).start()
    svc.close()
    assert not os.path.exists(svc.address.socket)
    assert client.ask(str(tmp_path / "k.db"), {"op": "ping"}) is None


def test_an_idle_service_stops_by_itself(tmp_path):
    svc = Service(tmp_path / "k.db", {"echo": _echo}, idle_seconds=0.6).start()
    thread = threading.Thread(target=svc.serve, daemon=True)
    started = time.monotonic()
    thread.start()
    assert _raw(svc, protocol.encode({"op": "echo", "text": "x"}))["echo"] == "x"  # activity restarts the clock
    thread.join(30)
    assert not thread.is_alive()
    assert time.monotonic() - started >= 0.6
    assert not os.path.exists(svc.address.socket)


def test_an_oversized_request_is_refused(service):
    answer = _raw(
        service, b'{"kenning": 1, "op": "echo", "text": "' + b"x" * (protocol.MAX_REQUEST_BYTES + 10) + b'"}\n'
    )
    assert answer["ok"] is False and "longer than" in answer["error"]


def test_a_request_that_never_ends_its_line_is_cut_off(service, monkeypatch):
    monkeypatch.setattr(protocol, "REQUEST_READ_SECONDS", 0.3)
    started = time.monotonic()
    answer = _raw(service, b'{"kenning": 1, "op": "ec')
    assert answer["ok"] is False and "within" in answer["error"]
    assert time.monotonic() - started < 5


def test_not_json_and_unknown_ops_are_refused(service):
    assert _raw(service, b"hello\n")["ok"] is False
    answer = _raw(service, protocol.encode({"op": "exec", "argv": ["rm", "-rf", "/"]}))
    assert answer == {"kenning": 1, "ok": False, "fallback": True, "error": "this service does not answer 'exec'"}
    assert _raw(service, b'{"kenning": 99, "op": "echo"}\n')["fallback"] is True


def test_connections_beyond_the_limit_are_told_the_service_is_busy(tmp_path):
    gate = threading.Event()

    def hold(request, channel):
        gate.wait(10)
        channel.send({"ok": True})

    svc = Service(tmp_path / "k.db", {"hold": hold}, idle_seconds=None, max_connections=2).start()
    thread = threading.Thread(target=svc.serve, daemon=True)
    thread.start()
    held = []
    try:
        for _ in range(2):
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            sock.connect(svc.address.socket)
            sock.sendall(protocol.encode({"op": "hold"}))
            held.append(sock)
        time.sleep(0)  # the two are being served (each blocks in its handler)
        answer = wait_until(lambda: _busy_answer(svc), seconds=10, what="a busy answer")
        assert "busy" in answer["error"]
    finally:
        gate.set()
        for sock in held:
            sock.close()
        svc.stop()
        thread.join(5)


def _busy_answer(svc):
    answer = _raw(svc, protocol.encode({"op": "hold"}))
    return answer if answer and answer.get("ok") is False else None


def test_a_client_never_uses_a_folder_other_users_can_enter(service, tmp_path):
    os.chmod(service.address.folder, 0o755)
    try:
        assert client.connect(str(tmp_path / "k.db")) is None
        assert addresses.private_dir_problem(service.address.folder)
        with pytest.raises(addresses.AddressError):
            addresses.make_private_dir(service.address.folder)
    finally:
        os.chmod(service.address.folder, 0o700)
    assert client.connect(str(tmp_path / "k.db")) is not None


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to connect as another user")
def test_a_client_of_another_user_is_refused_by_its_peer_credentials(service):
    """With the folder and socket opened up by mistake, the uid check still refuses."""
    parent = os.path.dirname(service.address.folder)
    while os.path.basename(parent).startswith(("kr-", "tmp")):  # the test's runtime folders, up to /tmp
        os.chmod(parent, 0o711)
        parent = os.path.dirname(parent)
    os.chmod(service.address.folder, 0o755)
    os.chmod(service.address.socket, 0o666)
    code = (
        "import os, socket, sys\n"
        "os.setgid(65534); os.setuid(65534)\n"
        "s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM); s.settimeout(10)\n"
        "s.connect(sys.argv[1])\n"
        "print(s.recv(65536).decode())  # refused before it sends anything\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, service.address.socket], capture_output=True, text=True, timeout=30
    )
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    assert answer == {"kenning": 1, "ok": False, "error": "this service belongs to another user"}


def test_a_request_cannot_reach_beyond_what_the_cli_may(tmp_path):
    """Commands that change the store, another store, another KENNING_HOME: never answered."""
    notes = write_files(tmp_path / "notes", {"a.md": "# Parsing\n\nParse arguments with argparse.\n"})
    path = tmp_path / "store" / "kenning.db"
    store = open_store(path)
    index_folder(store, notes, FakeEmbedder(), name="notes")
    store.close()
    env = kenning_env(path)
    with running_service(path, "--no-watch"):
        for argv in (
            ["sources", "remove", "notes"],
            ["index"],
            ["settings", "set", "limit", "3"],
            ["--store", str(tmp_path / "other.db"), "status"],
            ["rebuild"],
            ["search", "--also-store", str(tmp_path / "other.db"), "x"],
        ):
            answer = client.ask(str(path), client.request_for(argv, str(path), env, (False, False)))
            assert answer["ok"] is False and answer["fallback"] is True, argv
        other = client.request_for(["status"], str(tmp_path / "elsewhere.db"), env, (False, False))
        assert client.ask(str(path), other)["error"] == "another store"
        moved = client.request_for(["status"], str(path), {**env, "KENNING_HOME": "/tmp/elsewhere"}, (False, False))
        assert client.ask(str(path), moved)["fallback"] is True
        listed = kenning(path, "sources", "list")
    assert b"notes" in listed.stdout  # nothing was removed


def test_a_command_is_stopped_at_the_time_bound(tmp_path, monkeypatch):
    from kenning.cli import served
    from kenning.serve.warm import Warm

    path = tmp_path / "store" / "kenning.db"
    open_store(path).close()
    warm = Warm(path, watch=False, environ={"KENNING_MODEL": "fake", "KENNING_HOME": str(path.parent)}).start()
    monkeypatch.setattr(protocol, "COMMAND_SECONDS", 0.5)

    def endless(argv, session):  # a statement that would run for minutes
        warm.workspace.store.execute(
            "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT count(*) FROM n"
        )
        return 0

    monkeypatch.setattr(served, "_main", endless)
    request = {
        "version": served.__version__,
        "store": str(path),
        "argv": ["status"],
        "env": {"KENNING_HOME": str(path.parent)},
    }
    started = time.monotonic()
    try:
        answer = served.answer(request, warm)
    except Exception as exc:  # the interrupted statement
        answer = {"raised": type(exc).__name__}
    finally:
        warm.close()
    assert time.monotonic() - started < 10
    assert answer.get("exit") == 1 or answer.get("raised") == "InterruptError"


def test_a_stopping_service_lets_its_background_work_finish(tmp_path):
    """The MCP warm-up (importing the SDK, pydantic-core building the tools) runs on a
    daemon thread; a service that stopped meanwhile went on to the interpreter's exit,
    which cuts such a thread off mid-way in native code: the process aborted (exit -6,
    seen on a loaded machine).  close() now waits for it."""
    from kenning.serve.warm import Warm

    path = tmp_path / "store" / "kenning.db"
    open_store(path).close()
    warm = Warm(path, watch=False, environ={"KENNING_MODEL": "fake", "KENNING_HOME": str(path.parent)}).start()
    started = threading.Event()
    store_open_at_the_end = []

    def warm_up():  # stands for the SDK import: work that takes a while
        started.set()
        time.sleep(0.5)
        store_open_at_the_end.append(warm.workspace.store.version() is not None)

    thread = threading.Thread(target=warm_up, daemon=True)
    warm.background.append(thread)
    thread.start()
    assert started.wait(10)
    warm.close()
    assert not thread.is_alive()
    assert store_open_at_the_end == [True]  # it finished before the store was closed


def test_the_socket_name_fits_and_names_the_real_store(tmp_path):
    real = tmp_path / "real.db"
    real.touch()
    link = tmp_path / "link.db"
    link.symlink_to(real)
    assert addresses.address_for(str(link)).socket == addresses.address_for(str(real)).socket
    assert addresses.address_for(str(real)).socket != addresses.address_for(str(tmp_path / "b.db")).socket


def test_the_clients_default_store_is_the_stores_default(monkeypatch, tmp_path):
    from kenning.storage.paths import STORE_FILENAME, default_store_path

    assert addresses.STORE_FILENAME == STORE_FILENAME
    assert addresses.default_store() == str(default_store_path())
    monkeypatch.delenv("KENNING_HOME")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    assert addresses.default_store() == str(default_store_path())


def test_ping_describes_the_service(tmp_path):
    notes = write_files(tmp_path / "notes", {"a.md": "# A\n\ntext\n"})
    path = tmp_path / "store" / "kenning.db"
    store = open_store(path)
    index_folder(store, notes, FakeEmbedder(), name="notes")
    store.close()
    with running_service(path, "--no-watch") as (proc, _):
        answer = ping(path)
        status = kenning(path, "serve", "--status")
        stopped = kenning(path, "serve", "--stop")
        proc.wait(20)
    assert answer["pid"] == proc.pid and answer["model"] == "fake" and answer["model_state"] == "ready"
    assert f"pid {proc.pid}".encode() in status.stdout
    assert stopped.returncode == 0 and proc.returncode == 0
    assert kenning(path, "serve", "--status").returncode == 3
    assert APP  # the helpers' source folder is the one under test
