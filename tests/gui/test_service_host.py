"""Issue #27 item 1: the app runs one service inside itself while its window is open."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest

from kenning.cli.serving import handlers_for
from kenning.core.errors import StoreLockedError
from kenning.gui.service_host import ServiceHost
from kenning.serve import client
from kenning.serve.server import Service
from kenning.storage import no_watchers_at
from serve_testing import kenning, kenning_env, ping, running_service, wait_until

pytestmark = pytest.mark.skipif(not hasattr(__import__("socket"), "AF_UNIX"), reason="Unix sockets only")


def _no_watcher_holds(store) -> bool:
    try:
        with no_watchers_at(store):
            return True
    except StoreLockedError:
        return False


def _search(store_path, query: str) -> dict:
    request = client.request_for(["search", "--json", query], str(store_path), {}, (False, False))
    return client.ask(str(store_path), request)


def test_the_open_window_serves_the_cli_with_its_own_model(window, indexed_store, monkeypatch):
    monkeypatch.delenv("KENNING_HOME")  # what the service's own environment says (the app's)
    host = ServiceHost(indexed_store, window.holder.get, handlers_for).start()
    try:
        assert host.running
        answer = _search(indexed_store, "checkpoints")
        assert answer["ok"] is True and answer["exit"] == 0
        assert '"path": "sqlite-wal.md"' in answer["output"][0][1]
        # One model in memory: the service answers with the very object the window loaded.
        assert host._warm.model.embedder is window.holder.get()
    finally:
        host.stop()
    assert client.ask(str(indexed_store), {"op": "ping"}) is None  # closed with the window


def test_the_app_leaves_a_running_service_alone(window, indexed_store, tmp_path):
    other = Service(indexed_store, {}, idle_seconds=None).start()
    try:
        host = ServiceHost(indexed_store, window.holder.get, handlers_for).start()
        assert not host.running
        host.stop()
    finally:
        other.close()


def test_kenning_gui_serves_the_cli_while_open_and_a_killed_app_blocks_nothing(indexed_store):
    """As a user runs it: `kenning gui` is open, `kenning search` in a terminal is answered
    by the app's service; the app is killed, and the next command and service still work."""
    env = kenning_env(indexed_store, QT_QPA_PLATFORM="offscreen")
    app = subprocess.Popen(
        [sys.executable, "-m", "kenning.launcher", "--store", str(indexed_store), "gui"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        served = wait_until(lambda: app.poll() is None and ping(indexed_store), what="the app's service answering")
        assert served["pid"] == app.pid
        through = kenning(indexed_store, "search", "--mode", "lexical", "checkpoints", env=env)
        local = kenning(indexed_store, "search", "--no-service", "--mode", "lexical", "checkpoints", env=env)
        assert through.returncode == 0 and b"sqlite-wal.md" in through.stdout
        assert through.stdout == local.stdout
        assert (ping(indexed_store) or {}).get("pid") == app.pid  # still the app's, after answering
        wait_until(lambda: not _no_watcher_holds(indexed_store), what="the app's live index watching")
    finally:
        app.send_signal(signal.SIGKILL)  # no clean-up at all: the socket file stays behind
        app.wait(30)
        app.stderr.close()
    socket_file = client.addresses.address_for(str(indexed_store)).socket
    assert os.path.exists(socket_file)
    # Its watching child does not go on alone: the watch lock is free again (`kenning rebuild`).
    wait_until(lambda: _no_watcher_holds(indexed_store), what="the killed app's watcher to stop")
    after = kenning(indexed_store, "search", "--mode", "lexical", "checkpoints", env=env)
    assert after.returncode == 0 and b"sqlite-wal.md" in after.stdout  # in its own process
    with running_service(indexed_store, "--no-watch") as (proc, answer):
        assert answer["pid"] == proc.pid  # the next service took the socket over
