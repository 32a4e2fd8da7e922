"""Issue #27 item 1: the app runs one service inside itself while its window is open."""

from __future__ import annotations

import pytest

from kenning.cli.serving import handlers_for
from kenning.gui.service_host import ServiceHost
from kenning.serve import client
from kenning.serve.server import Service

pytestmark = pytest.mark.skipif(not hasattr(__import__("socket"), "AF_UNIX"), reason="Unix sockets only")


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
