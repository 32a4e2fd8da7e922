"""Starting and asking a real `kenning serve` from tests (a subprocess, as a user runs it)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

from kenning.serve import client

APP = str(Path(__file__).resolve().parent.parent / "app")
START_SECONDS = 60


def kenning_env(store: Path, **extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env.update(PYTHONPATH=APP, KENNING_HOME=str(store.parent), KENNING_MODEL="fake")
    env.update(extra)
    return env


def kenning(store: Path, *args: str, env: dict[str, str] | None = None, **kw) -> subprocess.CompletedProcess:
    """One `kenning --store STORE ARGS` process; stdout and stderr as bytes."""
    return subprocess.run(
        [sys.executable, "-m", "kenning.launcher", "--store", str(store), *args],
        env=env or kenning_env(store),
        capture_output=True,
        timeout=120,
        check=False,
        **kw,
    )


def wait_until(condition, seconds: float = START_SECONDS, what: str = "the condition"):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"{what} not met within {seconds} s")


def ping(store: Path) -> dict | None:
    answer = client.ask(str(store), {"op": "ping"})
    return answer if answer and answer.get("ok") else None


@contextmanager
def running_service(
    store: Path, *args: str, env: dict[str, str] | None = None, runner: tuple[str, ...] = ("-m", "kenning.launcher")
):
    """`kenning serve` for store until the block ends; yields (process, its ping once the model is ready).
    runner: what the interpreter runs, given the command line after it (a test's own wrapper)."""
    proc = subprocess.Popen(
        [sys.executable, *runner, "--store", str(store), "serve", "--idle", "0", *args],
        env=env or kenning_env(store),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:

        def ready():
            if proc.poll() is not None:
                raise AssertionError(f"the service exited: {proc.stderr.read().decode(errors='replace')}")
            answer = ping(store)
            return answer if answer and answer.get("model_state") != "loading" else None

        yield proc, wait_until(ready, what="the service answering")
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        if proc.stderr:
            proc.stderr.close()
