"""Issue #27 item 1: the app runs one service inside itself while its window is open."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator

import pytest
from PySide6.QtTest import QTest

from kenning.cli.serving import handlers_for
from kenning.core.errors import StoreLockedError
from kenning.gui.service_host import ServiceHost
from kenning.serve import address, client
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
    socket_file = address.address_for(str(indexed_store)).socket
    assert os.path.exists(socket_file)
    # Its watching child does not go on alone: the watch lock is free again (`kenning rebuild`).
    wait_until(lambda: _no_watcher_holds(indexed_store), what="the killed app's watcher to stop")
    after = kenning(indexed_store, "search", "--mode", "lexical", "checkpoints", env=env)
    assert after.returncode == 0 and b"sqlite-wal.md" in after.stdout  # in its own process
    with running_service(indexed_store, "--no-watch") as (proc, answer):
        assert answer["pid"] == proc.pid  # the next service took the socket over


# -- one Searcher for the window and its service (the app's memory, #27) ---------------


def _typed(qtbot, window, text: str) -> list[str]:
    """Type a query into the window's search box as a person would; the paths it lists."""
    window.search_bar.field.clear()
    with qtbot.wait_signal(window.search_service.results, timeout=20000):
        QTest.keyClicks(window.search_bar.field, text)
    return [hit.path for hit in window.model.hits]


def test_the_window_and_its_service_search_through_one_searcher(qtbot, window, indexed_store, monkeypatch):
    monkeypatch.delenv("KENNING_HOME")
    search = window.search_service
    host = ServiceHost.for_window(window, handlers_for).start()
    try:
        # One connection, one set of engines (and vector scan) in the app, not two.
        assert host._warm.searcher is search.searcher
        assert host._warm.workspace.store is search.workspace.store
        assert host._warm.lock is search.lock
        assert _typed(qtbot, window, "borrow checker")[:1] == ["rust/borrowing.md"]
        engine = search.engine
        served = _search(indexed_store, "checkpoints")  # hybrid, through the shared Searcher
        assert served["ok"] is True and '"path": "sqlite-wal.md"' in served["output"][0][1]
        # The service handed the same model over: the window's meaning engine was kept.
        assert search.engine is engine
        assert _typed(qtbot, window, "event loop")[:1] == ["python/asyncio.md"]
        assert search._spare is None  # nobody kept the searcher long: no second connection
    finally:
        host.stop()
    # The window goes on searching after its service stopped (its Workspace is its own).
    assert _typed(qtbot, window, "checkpoints")[:1] == ["sqlite-wal.md"]


def test_a_window_search_does_not_wait_behind_a_long_service_request(qtbot, window, indexed_store, monkeypatch):
    """A served request holds the shared Searcher (an assistant's long `index`, a slow
    command): the window's query is answered anyway, on a spare connection, and once the
    service lets go the window searches through the shared Searcher again."""
    monkeypatch.delenv("KENNING_HOME")
    search = window.search_service
    host = ServiceHost.for_window(window, handlers_for).start()
    try:
        with _held_by_a_long_request(host) as let_go:
            assert _typed(qtbot, window, "borrow checker")[:1] == ["rust/borrowing.md"]
            assert search._spare is not None  # answered on a connection of its own
            assert search._spare.workspace.store is not search.workspace.store
            let_go()
            assert _typed(qtbot, window, "event loop")[:1] == ["python/asyncio.md"]
            assert search._spare is None  # closed once the shared Searcher was free again
            served = _search(indexed_store, "checkpoints")
            assert served["ok"] is True and '"path": "sqlite-wal.md"' in served["output"][0][1]
    finally:
        host.stop()


def test_a_superseded_search_stops_waiting_for_the_service(qtbot, window, monkeypatch):
    """While the service holds the Searcher, a query typed over by a newer one never runs:
    only the newest is answered (and the window's thread is not kept waiting for the old)."""
    monkeypatch.delenv("KENNING_HOME")
    search = window.search_service
    search.lock = _WatchedLock()  # says when the window's thread starts waiting for it
    host = ServiceHost.for_window(window, handlers_for).start()
    answered: list[str] = []
    search.results.connect(lambda _rid, result: answered.append(result.query))
    ran: list[str] = []
    inner = search.searcher.search
    monkeypatch.setattr(search.searcher, "search", lambda text, *a, **k: ran.append(text) or inner(text, *a, **k))
    try:
        with _held_by_a_long_request(host) as let_go:
            search.submit("borrow checker", "hybrid")
            assert search.lock.waited.wait(10)  # the window's thread waits for its turn...
            newest = search.submit("event loop", "hybrid")  # ...and the user types on
            let_go()  # the service lets go
            qtbot.wait_until(lambda: search.latest == newest and "event loop" in answered, timeout=20000)
            assert "borrow checker" not in ran and "borrow checker" not in answered
    finally:
        host.stop()


@contextlib.contextmanager
def _held_by_a_long_request(host: ServiceHost) -> Iterator[Callable[[], None]]:
    """The service's lock held by a thread of its own, as a served request holds it (an
    assistant's long `index`, a slow command), until the callable yielded or the block's end."""
    held, release = threading.Event(), threading.Event()

    def long_request() -> None:
        with host._warm.lock:  # what every served command and MCP tool call takes
            held.set()
            release.wait(60)

    request = threading.Thread(target=long_request)
    request.start()

    def let_go() -> None:
        release.set()
        request.join(10)

    try:
        assert held.wait(10)
        yield let_go
    finally:
        let_go()


class _WatchedLock:
    """An RLock that notes when a thread waits for it with a timeout (the window's turn)."""

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self.waited = threading.Event()

    def acquire(self, blocking: bool = True, timeout: float = -1) -> bool:
        got = self._lock.acquire(blocking, timeout)
        if not got and timeout > 0:
            self.waited.set()
        return got

    def release(self) -> None:
        self._lock.release()

    def __enter__(self) -> bool:
        return self._lock.acquire()

    def __exit__(self, *exc: object) -> None:
        self._lock.release()
