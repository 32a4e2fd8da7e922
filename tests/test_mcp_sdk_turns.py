"""The service imports the MCP SDK on several threads; those imports take turns.

`kenning serve --http` once ended at start with importlib's _DeadlockError: the main
thread built the HTTP endpoint (importing mcp.server.transport_security and more, lazily)
while the sessions' warm-up thread imported mcp.server.stdio.  Each place that imports
the SDK and builds a server holds transport._SDK_TURN while it does."""

from __future__ import annotations

import threading

import pytest

from kenning.mcpserver import transport


class _Built(Exception):
    pass


@pytest.fixture
def build_records_the_turn(monkeypatch):
    held: list[bool] = []

    def build_server(service):
        held.append(transport._SDK_TURN.locked())
        raise _Built

    monkeypatch.setattr("kenning.mcpserver.server.build_server", build_server)
    monkeypatch.setattr(transport, "service_for", lambda *args: None)
    return held


def test_the_sessions_warm_up_builds_in_its_turn(build_records_the_turn):
    class Warm:
        mcp_ready = threading.Event()

    transport.prepare_sessions(Warm, lambda *a, **k: {})  # type: ignore[arg-type]
    assert build_records_the_turn == [True]
    assert Warm.mcp_ready.is_set() and not transport._SDK_TURN.locked()


def test_a_session_builds_in_its_turn(build_records_the_turn):
    with pytest.raises(_Built):
        transport.run_session(None, None)  # type: ignore[arg-type]
    assert build_records_the_turn == [True] and not transport._SDK_TURN.locked()


def test_the_http_endpoint_builds_in_its_turn(build_records_the_turn, monkeypatch, tmp_path):
    monkeypatch.setenv("KENNING_HOME", str(tmp_path))
    with pytest.raises(_Built):
        transport.start_http(None, transport.parse_endpoint("127.0.0.1:0"), lambda *a, **k: {})  # type: ignore[arg-type]
    assert build_records_the_turn == [True] and not transport._SDK_TURN.locked()
